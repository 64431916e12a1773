#!/usr/bin/env bash
# Session 32, call 3: two knobs on top of call 2's LayerNorm backward (8da9ba7).
# r: -DLNL_LN_BWD_RECIP=1, the row's totals times 1/K instead of two IEEE divisions a row
#    (changes dx by <= 1 ulp of c1, c2 where K is not a power of two);
# c: -DLNL_COLSUM_SM_THREADS=2048, the column sums' grid aiming at 2048 threads an SM
#    instead of 1024 (twice the row chunks, so twice the partial rows to add).
# a = the default build; rc = both knobs (lnl-bench A/B and the test tables); p_* builds
# without PDL give each kernel's own time.
# device call: `bash docs/results/cuda/2026-12-03-session32/call3.sh`
. tests/gpu/ab.sh && ab_init s32c3
AB_JOBS=4 ab_build a . "" lnl-bench & b1=$!
AB_JOBS=4 ab_build rc . "-DLNL_LN_BWD_RECIP=1 -DLNL_COLSUM_SM_THREADS=2048" lnl-bench test_table & b2=$!
(AB_JOBS=3 ab_build p_a . "-DLNL_PDL=0" lnlinear &
 AB_JOBS=3 ab_build p_r . "-DLNL_PDL=0 -DLNL_LN_BWD_RECIP=1" lnlinear &
 AB_JOBS=2 ab_build p_c . "-DLNL_PDL=0 -DLNL_COLSUM_SM_THREADS=2048" lnlinear & wait) >"$R/prof_builds.txt" 2>&1 &
PB=$!
wait $b1 $b2
[ -x build-rc/tests/test_table ] && [ -x build-a/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_smoke rc 60 "--dtype bf16 --strategy auto" 8192,1024,1024 4096,768,768 || { ab_pack; exit 1; }
ab_el tables
ab_quick rc 240 bf16 & q1=$!
ab_quick rc 240 f16 & q2=$!
ab_quick rc 240 f32 & q3=$!
ab_tables rc 120 1024,768,16 129,768,257 16,1000,768 & q4=$!
wait $q1 $q2 $q3 $q4
wait $PB
cat "$R/prof_builds.txt"
ab_el profiles
for n in p_a p_r p_c; do
    timeout 90 python3 bench/cuda/profile_cuda.py --lib build-$n/liblnlinear.so \
        --shapes 4096,768,768 8192,1024,1024 8192,768,3072 32768,4096,256 --dtypes bf16 \
        --strategies auto --iters 10 >"$R/profile_$n.txt" 2>&1
    echo "profile $n rc $?"
    grep -E "M,K,N|lnlinear auto|ln_bwd|colsum|reduce_partials" "$R/profile_$n.txt" | cut -c1-100
done
ab_el bench
AB_BENCH_LIMIT=150 ab_bench 3 "a rc" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024 8192,768,3072 32768,4096,256
ab_el done
ab_pack
