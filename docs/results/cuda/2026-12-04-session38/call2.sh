#!/usr/bin/env bash
# Session 38, call 2: FORM_FOLD_SPLIT (branch s38-early-split). Call 1 found the split
# statistics still 7-12 us slower than the statistics pass at K <= 1024 (GEMM kernel 44.1 vs
# 31.7 us at 8192,1024,1024). The suspect: the merge sits between each tile's main loop and
# its epilogue (fences, a count, a wait for the slowest of the row's tiles, loads from L2),
# once a tile. The new form gives column tile j the contiguous slices j KT/tn .. (j+1) KT/tn
# - 1 and starts its main loop there, so it publishes its share 1/tn of the way in (each
# warp counts itself in, nothing waits), and at the end the shares are there: one poll and
# one round of loads. One build; the forms through the environment: pre (statistics pass,
# MIN_K default), old (MIN_K=0, LNL_CUDA_SPLIT_EARLY=0), new (MIN_K=0).
# device call: `bash docs/results/cuda/2026-12-04-session38/call2.sh`
. tests/gpu/ab.sh && ab_init s38c2
AB_JOBS=16 ab_build n . "" lnl-bench test_table lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
LNL_CUDA_SPLIT_STATS_MIN_K=0 ab_smoke n 60 "--dtype bf16 --strategy fused" 8192,1024,1024 16384,8192,1024 ||
    { ab_pack; exit 1; }
# correctness: the table's split rows (F_SPLIT takes the split at their small K; K = 72 has
# empty shares), the quick tables, the Python statistics tests (their redo cases) under
# MIN_K=0, sanitizers
ab_tables n 120 4224,200,520 3200,72,1000 12800,200,1000 1664,72,1990 2200,200,1990 4200,264,1300
ab_quick n 150 bf16 f16
# every 16-bit FUSED call of 2-8 column tiles takes the split here, at any K
LNL_CUDA_SPLIT_STATS_MIN_K=0 ab_pytest n 300 "stats_inside or many_tiles or folded_weight" &
ab_sanitize n bf16 4224,200,520 3200,72,1000 &
wait
ab_el correctness
SH="8192,1024,1024 8192,768,1024 16384,1024,1024 8192,2048,2048 16384,2048,1024 16384,8192,1024 12800,4096,768 8192,4096,2048"
args=(); for s in $SH; do args+=(--shape "$s"); done
timeout 240 python3 bench/cuda/clocks_ab.py --lib build-n/liblnlinear.so "${args[@]}" \
    --variant pre:LNL_CUDA_SPLIT_STATS_MIN_K=1000000 \
    --variant old:LNL_CUDA_SPLIT_STATS_MIN_K=0,LNL_CUDA_SPLIT_EARLY=0 \
    --variant new:LNL_CUDA_SPLIT_STATS_MIN_K=0,LNL_CUDA_SPLIT_EARLY=1 \
    --cublas --seconds 0.6 --rounds 3 >"$R/clocks_ab.txt" 2>&1
echo "clocks_ab rc $?"; cat "$R/clocks_ab.txt"
ab_el clocks
for r in 1 2; do
    for v in pre old new; do
        case $v in pre) e="LNL_CUDA_SPLIT_STATS_MIN_K=1000000" ;; old) e="LNL_CUDA_SPLIT_STATS_MIN_K=0 LNL_CUDA_SPLIT_EARLY=0" ;;
            new) e="LNL_CUDA_SPLIT_STATS_MIN_K=0" ;; esac
        env $e timeout 150 build-n/bench/lnl-bench --device cuda --dtype bf16 --strategy fused "${args[@]}" \
            >"$R/bench_${v}_r$r.txt" 2>&1
        echo "== $v round $r rc $?"; ab_rows "$R/bench_${v}_r$r.txt"
    done
done
ab_el done
ab_pack
