#!/usr/bin/env bash
# Session 29, call 3: the fix for call 4's racecheck reports (run.sh on c677899: 2 hazards
# in ln_gemm_fwd_sm90<bf16/f16, 192, FORM_FOLD>, the producer's spin on the verdict word
# that warp 1 writes; now an mbarrier carries it), and the ping-pong rows back at 256.
# racecheck, memcheck and synccheck on the quick rows that give a CTA of the epilogue form
# more than one tile (the new 600,72,4104 rows) or take the narrow tiles by the rule, the
# quick tables, and a timing smoke.
# device call: `bash docs/results/cuda/2026-12-03-session29/call3.sh`
. tests/gpu/ab.sh && ab_init s29c3
AB_JOBS=16 ab_build new . "" lnl-bench test_table || { ab_pack; exit 1; }
ab_el "built"
ab_smoke new 60 "--dtype bf16 --strategy fused" 4096,768,768 8192,1024,1024 || { ab_pack; exit 1; }
rc_rows() { # DTYPE: racecheck on each row (test_table takes one --shape)
    local d=$1 sh f
    for sh in 600,72,4104 8448,136,520 2048,16,1088; do
        f=$R/racecheck_${d}_$sh.txt
        timeout 100 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --quick \
            --no-auto --dtype "$d" --shape "$sh" >"$f" 2>&1
        echo "racecheck $d $sh rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ')"
    done
}
rc_rows bf16 &
rc_rows f16 &
ab_quick new 200 bf16 &
ab_quick new 200 f16 &
wait
ab_el "racecheck + quick tables"
for tool in memcheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table \
        --device cuda --quick --dtype bf16 --shape 600,72,4104 >"$R/san_${tool}.txt" 2>&1
    echo "$tool rc $?: $(grep -E 'passed|SUMMARY' "$R/san_${tool}.txt" | paste -sd' ')"
done
ab_el "all done"
ab_pack
