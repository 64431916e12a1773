#!/usr/bin/env bash
# Session 26, call 1: the Hopper forward's pre-pass for K = 2049-8192 in one launch, a block a
# row (fold_weight.cu's fold_prep_block_kernel), against the two launches it replaces there
# (fold_weight_kernel, then launch_ln_forward's statistics), in one build:
# LNL_CUDA_FOLD_PREP_MAX_K=0 takes the old pair. Correctness first (the new table rows, the
# sanitizers on them, the Python tests of the path), then timings with the GPU to itself.
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-03-session26/call1.sh`.
. tests/gpu/ab.sh && ab_init s26c1
AB_JOBS=16 ab_build new . "" lnl-bench test_table lnlinear || { ab_pack; exit 1; }
ab_el "built"
ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,4096,4096 || { ab_pack; exit 1; }
LNL_CUDA_FOLD_PREP_MAX_K=0 ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,4096,4096
ab_el "smoke"
san() { # TOOL DTYPE SHAPE: one sanitizer on one table row (not in the quick set)
    local f=$R/san_$1_$2_$3.txt t=(build-new/tests/test_table --device cuda --dtype "$2" --shape "$3")
    if [ "$1" = racecheck ]; then timeout 200 tests/gpu/racecheck_ours.sh "${t[@]}" >"$f" 2>&1
    else timeout 200 compute-sanitizer --tool "$1" --error-exitcode 99 "${t[@]}" >"$f" 2>&1; fi
    echo "$1 $2 $3 rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-220)"
}
{
    ab_tables new 150 130,2056,264 1100,2056,300 260,8200,136 700,4104,16 4224,1024,520 4200,264,1300
    ab_pytest new 200 "fold_prep_long_rows or folded_weight_overflow or stats_inside_redo"
} &
san memcheck bf16 130,2056,264 & san memcheck f16 1100,2056,300 & san synccheck bf16 1100,2056,300 &
san racecheck bf16 130,2056,264 & san racecheck f16 130,2056,264 & san racecheck bf16 260,8200,136 &
wait
ab_el "correctness done"
# timings: the GPU to itself from here
python3 bench/cuda/clocks_ab.py --lib build-new/liblnlinear.so --shape 8192,4096,4096 \
    --shape 8192,4096,12288 --shape 16384,8192,1024 --shape 4096,4096,4096 \
    --variant block:LNL_CUDA_FOLD_PREP_MAX_K=8192 --variant two:LNL_CUDA_FOLD_PREP_MAX_K=0 \
    --cublas --seconds 1.5 --rounds 2 >"$R/clocks_ab.txt" 2>&1
echo "clocks_ab rc $?"; cat "$R/clocks_ab.txt"
ab_el "clocks_ab"
for r in 1 2; do
    for v in block:8192 two:0; do
        LNL_CUDA_FOLD_PREP_MAX_K=${v#*:} timeout 100 build-new/bench/lnl-bench --device cuda --dtype bf16 \
            --strategy fused --strategy auto --shape 8192,4096,4096 --shape 8192,4096,12288 \
            --shape 16384,8192,1024 >"$R/bench_${v%%:*}_$r.txt" 2>&1
        echo "== ${v%%:*} round $r rc $?"; ab_rows "$R/bench_${v%%:*}_$r.txt"
    done
done
ab_el "lnl-bench"
for v in block:8192 two:0; do
    LNL_CUDA_FOLD_PREP_MAX_K=${v#*:} timeout 90 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
        --shapes 8192,4096,4096 8192,4096,12288 --dtypes bf16 --strategies fused >"$R/profile_${v%%:*}.txt" 2>&1
    echo "== profile ${v%%:*} rc $?"
    awk '/M,K,N/ { print } /lnlinear/ { p = 1 } /eager/ { p = 0 } p' "$R/profile_${v%%:*}.txt" | cut -c1-120 | head -36
done
ab_el "all done"
ab_pack
