#!/usr/bin/env bash
# Session 29, call 3: the fix for call 4's racecheck reports (run.sh on c677899: 2 hazards
# in ln_gemm_fwd_sm90<bf16/f16, 192, FORM_FOLD>, the producer's spin on the verdict word
# that warp 1 writes; now an mbarrier carries it), and the ping-pong rows back at 256.
# racecheck on the quick rows that give a CTA of the epilogue form more than one tile (the
# new 600,72,4104 rows; 8448,136,520, the row that reported), the quick tables, memcheck,
# and a timing smoke. Cut to fit the session's last ~170 s of device time.
# device call: `bash docs/results/cuda/2026-12-03-session29/call3.sh`
. tests/gpu/ab.sh && ab_init s29c3
AB_JOBS=16 ab_build new . "" lnl-bench test_table || { ab_pack; exit 1; }
ab_el "built"
ab_smoke new 60 "--dtype bf16 --strategy fused" 4096,768,768 || { ab_pack; exit 1; }
rc_row() { # DTYPE SHAPE: racecheck on the table's rows of one shape
    local f=$R/racecheck_$1_$2.txt
    timeout 100 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --quick \
        --no-auto --dtype "$1" --shape "$2" >"$f" 2>&1
    echo "racecheck $1 $2 rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ')"
}
{ rc_row bf16 600,72,4104; rc_row bf16 8448,136,520; } &
rc_row f16 600,72,4104 &
ab_quick new 120 bf16 &
ab_quick new 120 f16 &
wait
ab_el "racecheck + quick tables"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table \
    --device cuda --quick --dtype bf16 --shape 600,72,4104 >"$R/san_memcheck.txt" 2>&1
echo "memcheck rc $?: $(grep -E 'passed|SUMMARY' "$R/san_memcheck.txt" | paste -sd' ')"
ab_el "all done"
ab_pack
