#!/usr/bin/env bash
# Session 27, call 2: the Hopper forward's pre-pass in its ring form (fold_weight.cu,
# LNL_CUDA_PREP_RING=1): the block kernel's rows (K = 2049-8192) reach shared memory by
# cp.async, three rows a block in flight (two at K > 4096) instead of one in registers.
# One build; the forms are A/B'd through the environment (the library reads it each call).
# Correctness first (the ring rows of the table, the sanitizers on them, the Python tests of
# the path), then timings with the GPU to itself.
# device call: `bash docs/results/cuda/2026-12-03-session27/call2.sh`
. tests/gpu/ab.sh && ab_init s27c2
AB_JOBS=16 ab_build new . "" lnl-bench test_table lnlinear
[ -x build-new/tests/test_table ] || { ab_pack; exit 1; }
ab_el "built"
san() { # TOOL DTYPE SHAPE: one sanitizer on one table row
    local f=$R/san_$1_$2_$3.txt t=(build-new/tests/test_table --device cuda --no-auto --dtype "$2" --shape "$3")
    if [ "$1" = racecheck ]; then timeout 150 tests/gpu/racecheck_ours.sh "${t[@]}" >"$f" 2>&1
    else timeout 150 compute-sanitizer --tool "$1" --error-exitcode 99 "${t[@]}" >"$f" 2>&1; fi
    echo "$1 $2 $3 rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-220)"
}
ab_tables new 120 1100,3000,300 130,4104,264 1100,2056,300 &
ab_pytest new 150 "fold_prep_long_rows" &
san memcheck bf16 1100,3000,300 & san memcheck f16 130,4104,264 & san synccheck bf16 1100,3000,300 &
san racecheck bf16 130,4104,264 & san racecheck f16 1100,3000,300 &
wait
ab_el "correctness done"
python3 bench/cuda/clocks_ab.py --lib build-new/liblnlinear.so --shape 8192,4096,4096 \
    --shape 8192,4096,12288 --shape 16384,8192,1024 \
    --variant ring:LNL_CUDA_PREP_RING=1 --variant block:LNL_CUDA_PREP_RING=0 \
    --cublas --seconds 1.5 --rounds 2 >"$R/clocks_ab.txt" 2>&1
echo "clocks_ab rc $?"; cat "$R/clocks_ab.txt"
ab_el "clocks_ab"
for v in 1 0; do
    LNL_CUDA_PREP_RING=$v timeout 60 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
        --shapes 8192,4096,4096 8192,4096,12288 --dtypes bf16 --strategies fused >"$R/profile_ring$v.txt" 2>&1
    echo "== profile ring=$v rc $?"
    awk '/M,K,N/ { print } /lnlinear/ { p = 1 } /eager/ { p = 0 } p' "$R/profile_ring$v.txt" | cut -c1-120 | head -24
done
ab_el "all done"
ab_pack
