#!/usr/bin/env bash
# Session 38, call 1: the split statistics (column tiles sharing each row's statistics inside
# the GEMM kernel, no statistics pass) at K < 4096, where they are off today. Sessions 16-17
# measured them 14-20 us slower at K <= 1024 (8192,1024,1024: GEMM kernel 47.5 vs 30.7 us),
# before session 25 rewrote their merge (16 L2 round trips a tile in series at 4 column
# tiles, all consumers waiting; now two lanes a row, loads together): 3.8-4.9% faster at the
# split shapes then. Never re-measured at short K since. One build of main; the forms are
# A/B'd through LNL_CUDA_SPLIT_STATS_MIN_K (read on every call).
# device call: `bash docs/results/cuda/2026-12-04-session38/call1.sh`
. tests/gpu/ab.sh && ab_init s38c1
AB_JOBS=16 ab_build n . "" lnl-bench lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
SH="8192,1024,1024 4096,768,768 8192,768,1024 8192,2048,2048 16384,1024,1024 8192,1024,2048 16384,2048,1024"
# smoke: the split form at short K, with its own result check
LNL_CUDA_SPLIT_STATS_MIN_K=0 timeout 60 build-n/bench/lnl-bench --device cuda --dtype bf16 \
    --strategy fused --shape 8192,1024,1024 --shape 4096,768,768 >"$R/smoke_split.txt" 2>&1
echo "smoke split rc $?"; ab_rows "$R/smoke_split.txt"
# lnl-bench (short runs, #7's metric), bf16 (f16 at three shapes), the two settings in turn, three rounds
for d in bf16 f16; do
    S=$SH; [ $d = f16 ] && S="8192,1024,1024 4096,768,768 8192,2048,2048"
    for r in 1 2 3; do
        for v in def split; do
            k=4096; [ $v = split ] && k=0
            args=(); for s in $S; do args+=(--shape "$s"); done
            LNL_CUDA_SPLIT_STATS_MIN_K=$k timeout 150 build-n/bench/lnl-bench --device cuda \
                --dtype $d --strategy fused "${args[@]}" >"$R/bench_${d}_${v}_r$r.txt" 2>&1
            echo "== $d $v round $r rc $?"; ab_rows "$R/bench_${d}_${v}_r$r.txt"
        done
    done
done
ab_el bench
# at the power cap, back to back (a training loop's state), with cuBLAS beside
args=(); for s in $SH; do args+=(--shape "$s"); done
timeout 240 python3 bench/cuda/clocks_ab.py --lib build-n/liblnlinear.so "${args[@]}" \
    --variant def:LNL_CUDA_SPLIT_STATS_MIN_K=4096 --variant split:LNL_CUDA_SPLIT_STATS_MIN_K=0 \
    --cublas --seconds 0.8 --rounds 3 >"$R/clocks_ab.txt" 2>&1
echo "clocks_ab rc $?"; cat "$R/clocks_ab.txt"
ab_el clocks
# kernel times of both forms' forward, and the AUTO backward's, at 8192,1024,1024 (PDL on:
# a dependent kernel is timed from its launch)
for k in 4096 0; do
    LNL_CUDA_SPLIT_STATS_MIN_K=$k timeout 60 python3 bench/cuda/profile_cuda.py --lib build-n/liblnlinear.so \
        --shapes 8192,1024,1024 --dtypes bf16 --strategies fused auto >"$R/profile_k$k.txt" 2>&1
    echo "== profile min_k=$k rc $?"
    awk '/M,K,N/ { print } /lnlinear/ { p = 1 } /eager/ { p = 0 } p' "$R/profile_k$k.txt" | cut -c1-130 | head -40
done
ab_el done
ab_pack
