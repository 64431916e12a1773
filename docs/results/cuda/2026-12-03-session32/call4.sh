#!/usr/bin/env bash
# Session 32, call 4: main's LayerNorm backward with the means times 1/K (call 3's knob,
# now the code) and both row sums in one warp butterfly (warp_sum_pair), checked before
# run.sh: the tables of every dtype, the sanitizers on rows of 3, 4, 6 and 9 warps a block,
# a subset of the Python tests; each kernel's time without PDL against call 3's code with
# -DLNL_LN_BWD_RECIP=1 (p_prev: the butterfly's own effect); lnl-bench rounds against the
# session's start (old = a192415's successor 29cf719, .snap/old).
# device call: `bash docs/results/cuda/2026-12-03-session32/call4.sh`, carry [".snap/old", ".snap/prev"]
. tests/gpu/ab.sh && ab_init s32c4
AB_JOBS=5 ab_build old .snap/old "" lnl-bench & b1=$!
AB_JOBS=6 ab_build new . "" lnl-bench test_table lnlinear & b2=$!
(AB_JOBS=2 ab_build p_prev .snap/prev "-DLNL_PDL=0 -DLNL_LN_BWD_RECIP=1" lnlinear &
 AB_JOBS=3 ab_build p_new . "-DLNL_PDL=0" lnlinear & wait) >"$R/prof_builds.txt" 2>&1 &
PB=$!
wait $b1 $b2
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_smoke new 60 "--dtype bf16 --strategy auto" 8192,1024,1024 4096,768,768 || { ab_pack; exit 1; }
ab_el tables
ab_quick new 240 bf16 & q1=$!
ab_quick new 240 f16 & q2=$!
ab_quick new 240 f32 & q3=$!
ab_tables new 120 1024,768,16 129,768,257 16,1000,768 130,2056,264 & q4=$!
wait $q1 $q2 $q3 $q4
ab_el sanitize
AB_SAN_LIMIT=90 ab_sanitize new bf16 4224,1024,520
for s in 1024,768,16 130,2056,264; do for d in bf16 f32; do
    timeout 90 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype $d \
        --shape $s >"$R/san_race_${s}_$d.txt" 2>&1
    echo "racecheck $s $d rc $?: $(grep -E '^racecheck:' "$R/san_race_${s}_$d.txt")"
    timeout 90 compute-sanitizer --tool synccheck --error-exitcode 99 build-new/tests/test_table \
        --device cuda --dtype $d --shape $s >"$R/san_sync_${s}_$d.txt" 2>&1
    echo "synccheck $s $d rc $?: $(grep -E 'SUMMARY' "$R/san_sync_${s}_$d.txt")"
done; done
ab_el pytest
ab_pytest new 150 "backward"
wait $PB
cat "$R/prof_builds.txt"
ab_el profiles
for n in p_prev p_new; do
    timeout 90 python3 bench/cuda/profile_cuda.py --lib build-$n/liblnlinear.so \
        --shapes 4096,768,768 8192,1024,1024 8192,4096,4096 32768,4096,256 --dtypes bf16 f32 \
        --strategies auto --iters 10 >"$R/profile_$n.txt" 2>&1
    echo "profile $n rc $?"
    grep -E "M,K,N|lnlinear auto|ln_bwd" "$R/profile_$n.txt" | cut -c1-100
done
ab_el bench
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024 8192,768,3072 8192,4096,4096 32768,4096,256
ab_el done
ab_pack
