#!/usr/bin/env bash
# For the next session (written in session 29, not run: no device time was left).
# Branch s29-stop-word: the fix for call 3's racecheck report on the stop word (the
# producer waits for the release of use it - 1 before writing *stop; the consumers read
# *stop in lane 0 only). Old = main (.snap/old, carried: `git archive main | tar -x -C
# .snap/old && rm -rf .snap/old/docs`), new = the branch's working tree. racecheck must show
# 0 reports in ours on 600,72,4104; the quick tables must pass; FUSED's forward must not get
# slower (the consumers' kt == 0 branch changed: 32-40 more SASS instructions in the
# epilogue-form kernels, 8 in the statistics form, whose timing that branch moved by 7-10%
# once, session 11).
# device call (session 30, call 1; old = main at 62127f2, new = the branch at 280687c): `bash docs/results/cuda/2026-12-03-session29/next-stop-word.sh`, carry [".snap/old"] (the script then sat in session 29's folder)
. tests/gpu/ab.sh && ab_init stopword
AB_JOBS=8 ab_build old .snap/old "" lnl-bench &
AB_JOBS=8 ab_build new . "" lnl-bench test_table &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,1024,1024 || { ab_pack; exit 1; }
for d in bf16 f16; do
    timeout 150 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --quick \
        --no-auto --dtype $d --shape 600,72,4104 >"$R/racecheck_$d.txt" 2>&1
    echo "racecheck $d rc $?: $(grep -E 'passed|^racecheck:' "$R/racecheck_$d.txt" | paste -sd' ')"
done &
ab_quick new 150 bf16 &
ab_quick new 150 f16 &
wait
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy fused" 4096,768,768 \
    8192,1024,1024 8192,4096,4096 32768,4096,256 12800,4096,256 8192,768,2304
ab_pack
