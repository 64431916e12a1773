#!/usr/bin/env bash
# Session 32, call 2: the LayerNorm backward's register and ring kernels with less issue
# (call 1: bound by instruction issue at K <= 1024). xhat formed once an element and
# kept; the 16-bit rows' subtraction of a zero shift dropped; the row's totals in one
# barrier (two halves of red), the warps' totals added from shared memory at <= 4 warps;
# registers capped at 64 for the 16-bit kernels with one chunk a thread. Gradients must be
# bitwise equal to main's (ln_backward_ab.py digests). Old = main (.snap/old, carried),
# new = the working tree; p_* builds without PDL for each kernel's own time.
# device call: `bash docs/results/cuda/2026-12-03-session32/call2.sh`, carry [".snap/old"]
. tests/gpu/ab.sh && ab_init s32c2
AB_JOBS=5 ab_build old .snap/old "" lnl-bench & b1=$!
AB_JOBS=5 ab_build new . "" lnl-bench test_table & b2=$!
(AB_JOBS=3 ab_build p_old .snap/old "-DLNL_PDL=0" lnlinear & AB_JOBS=3 ab_build p_new . "-DLNL_PDL=0" lnlinear &
 wait) >"$R/prof_builds.txt" 2>&1 &
PB=$!
wait $b1 $b2
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_smoke new 60 "--dtype bf16 --strategy auto" 8192,1024,1024 4096,768,768 || { ab_pack; exit 1; }
ab_el tables
ab_quick new 240 bf16 & q1=$!
ab_quick new 240 f16 & q2=$!
ab_quick new 240 f32 & q3=$!
ab_tables new 120 1024,768,16 129,768,257 16,1000,768 1,4097,1 16,4097,257 & q4=$!
wait $q1 $q2 $q3 $q4
ab_el sanitize
AB_SAN_LIMIT=90 ab_sanitize new bf16 4224,1024,520
for d in bf16 f32; do # K = 768: 96 threads a row (3 warps, red's zeroed slot)
    timeout 90 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype $d \
        --shape 1024,768,16 >"$R/san_race768_$d.txt" 2>&1
    echo "racecheck K=768 $d rc $?: $(grep -E '^racecheck:' "$R/san_race768_$d.txt")"
    timeout 90 compute-sanitizer --tool synccheck --error-exitcode 99 build-new/tests/test_table \
        --device cuda --dtype $d --shape 1024,768,16 >"$R/san_sync768_$d.txt" 2>&1
    echo "synccheck K=768 $d rc $?: $(grep -E 'SUMMARY' "$R/san_sync768_$d.txt")"
done
wait $PB
cat "$R/prof_builds.txt"
ab_el digests
for n in p_old p_new; do
    PYTHONPATH=python LNLINEAR_LIBRARY=$PWD/build-$n/liblnlinear.so timeout 120 \
        python3 bench/cuda/ln_backward_ab.py --reps 30 >"$R/digest_$n.txt" 2>&1
    echo "digests $n rc $?"
done
paste -d'|' <(cut -c1-60 "$R/digest_p_old.txt") <(awk -F'|' '{print $2 "|" $3}' "$R/digest_p_new.txt")
ab_el profiles
for n in p_old p_new; do
    timeout 90 python3 bench/cuda/profile_cuda.py --lib build-$n/liblnlinear.so \
        --shapes 4096,768,768 8192,1024,1024 8192,4096,4096 32768,4096,256 --dtypes bf16 \
        --strategies auto --iters 10 >"$R/profile_$n.txt" 2>&1
    echo "profile $n rc $?"
    grep -E "M,K,N|lnlinear auto|ln_bwd" "$R/profile_$n.txt" | cut -c1-100
done
ab_el bench
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024 8192,768,3072 8192,4096,4096 32768,4096,256
ab_el done
ab_pack
