#!/usr/bin/env bash
# Session 27, call 4: racecheck on the quick table (bf16 and f16, --no-auto, as run.sh)
# with every report printed (racecheck_ours.sh --print-limit 0): call 3's run.sh showed
# only the first 100 of 218 (bf16) and 169 (f16) errors, all inside cuBLAS's nvjet_*.
# device call: `bash docs/results/cuda/2026-12-03-session27/call4.sh`
. tests/gpu/ab.sh && ab_init s27c4
AB_JOBS=16 ab_build new . "" test_table lnlinear
[ -x build-new/tests/test_table ] || { ab_pack; exit 1; }
ab_el "built"
for dt in bf16 f16; do
    timeout "${RC_LIMIT:-200}" tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda \
        --quick --no-auto --dtype "$dt" >"$R/racecheck_$dt.txt" 2>&1 &
done
wait
for dt in bf16 f16; do
    f=$R/racecheck_$dt.txt
    echo "racecheck $dt: $(grep -E 'passed,|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-300)"
    echo "  last row: $(grep -E '^(ok|FAIL)' "$f" | tail -1 | cut -c1-80)"
    echo "  kernels named in the reports: $(grep -A1 'Race reported' "$f" | grep -oE 'access at [^+ ]+' | sort | uniq -c | sort -rn | head -6 | paste -sd';')"
done
ab_el "done"
ab_pack
