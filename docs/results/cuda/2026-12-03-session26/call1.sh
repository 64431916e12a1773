#!/usr/bin/env bash
# Session 26, call 1: the Hopper forward's pre-pass (fold_weight.cu). Two changes:
#  - K = 2049-8192: one launch, a block a row, folds the weight and computes x's statistics,
#    where two launches did (fold_weight_kernel, then launch_ln_forward's statistics);
#    LNL_CUDA_FOLD_PREP_MAX_K=0 takes the old pair in the same build;
#  - every row group (a warp up to K = 2048) loads its next row before reducing this one.
# "old" is session 25's final library (30128d7, old.tar beside this tree), "new" this one.
# Correctness first (new table rows, the sanitizers on them, the quick tables, the Python
# tests of the path), then timings with the GPU to itself.
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-03-session26/call1.sh`.
. tests/gpu/ab.sh && ab_init s26c1
mkdir -p old-src && tar -xf old.tar -C old-src
AB_JOBS=8 ab_build new . "" lnl-bench test_table lnlinear & AB_JOBS=8 ab_build old old-src "" lnl-bench lnlinear & wait
[ -x build-new/tests/test_table ] || { ab_pack; exit 1; }
ab_el "built"
ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,4096,4096 8192,768,3072 || { ab_pack; exit 1; }
ab_el "smoke"
san() { # TOOL DTYPE SHAPE: one sanitizer on one table row (not in the quick set)
    local f=$R/san_$1_$2_$3.txt t=(build-new/tests/test_table --device cuda --dtype "$2" --shape "$3")
    if [ "$1" = racecheck ]; then timeout 180 tests/gpu/racecheck_ours.sh "${t[@]}" >"$f" 2>&1
    else timeout 180 compute-sanitizer --tool "$1" --error-exitcode 99 "${t[@]}" >"$f" 2>&1; fi
    echo "$1 $2 $3 rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-220)"
}
{
    ab_tables new 150 130,2056,264 1100,2056,300 260,8200,136 700,4104,16
    ab_quick new 120 bf16 f16
} &
ab_pytest new 180 "fold_prep_long_rows or folded_weight_overflow" &
san memcheck bf16 130,2056,264 & san memcheck f16 1100,2056,300 & san synccheck bf16 1100,2056,300 &
san racecheck bf16 130,2056,264 & san racecheck f16 130,2056,264 & san racecheck bf16 260,8200,136 &
wait
ab_el "correctness done"
# timings: the GPU to itself from here
python3 bench/cuda/clocks_ab.py --lib build-new/liblnlinear.so --shape 8192,4096,4096 \
    --shape 8192,4096,12288 --shape 16384,8192,1024 \
    --variant block:LNL_CUDA_FOLD_PREP_MAX_K=8192 --variant two:LNL_CUDA_FOLD_PREP_MAX_K=0 \
    --cublas --seconds 1.5 --rounds 2 >"$R/clocks_ab.txt" 2>&1
echo "clocks_ab rc $?"; cat "$R/clocks_ab.txt"
ab_el "clocks_ab"
AB_BENCH_LIMIT=90 ab_bench 2 "old new" "--dtype bf16 --strategy fused" 4096,768,768 8192,768,3072 \
    8192,1024,1024 8192,2048,2048 8192,4096,4096 8192,4096,12288 16384,8192,1024
ab_el "lnl-bench"
for v in old new; do
    timeout 80 python3 bench/cuda/profile_cuda.py --lib build-$v/liblnlinear.so \
        --shapes 8192,768,3072 8192,4096,4096 --dtypes bf16 --strategies fused >"$R/profile_$v.txt" 2>&1
    echo "== profile $v rc $?"
    awk '/M,K,N/ { print } /lnlinear/ { p = 1 } /eager/ { p = 0 } p' "$R/profile_$v.txt" | cut -c1-120 | head -30
done
ab_el "all done"
ab_pack
