#!/usr/bin/env bash
# Session 25, call 3: racecheck on the split statistics at 8 column tiles. run.sh at 85db163
# (call 2's companion) passed 14 of 16 steps; racecheck bf16 and f16 ran out of their 480 s
# (400 s in session 24) with the new quick row 2200,200,1990, which is now out of the quick
# set, and 1664,72,1990 (8 column tiles, one round) in. Here racecheck (judged on our
# kernels, tests/gpu/racecheck_ours.sh) on 1664,72,1990 in bf16 and f16 and on 2200,200,1990
# in bf16, side by side.
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-03-session25/call3.sh`.
. tests/gpu/ab.sh && ab_init s25c3
AB_JOBS=16 ab_build new . "" test_table
ab_el "built"
run_rc() { # NAME DTYPE SHAPE
    timeout 200 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype "$2" \
        --shape "$3" >"$R/race_$1.txt" 2>&1
    echo "racecheck $1 rc $?: $(grep -E 'passed|^racecheck:' "$R/race_$1.txt" | paste -sd' ' | cut -c1-240)"
}
run_rc bf16_1664 bf16 1664,72,1990 & run_rc f16_1664 f16 1664,72,1990 & run_rc bf16_2200 bf16 2200,200,1990 & wait
ab_el "all done"
ab_pack
