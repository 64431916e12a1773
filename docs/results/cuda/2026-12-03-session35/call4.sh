#!/usr/bin/env bash
# Session 35, call 4: the proof of main's device code (b99c85c) that fit the device time
# left (~370 s of wall time): tests/gpu/run.sh (~550 s) did not; its first attempt was
# taken back by the device tool mid-run and cost ~445 s of the session's budget. Run here:
# the build; the quick test table of every dtype and the table rows that take dW from the
# raw x (every dtype); memcheck and synccheck on two of them in bf16 and f32; the Python
# tests of the backward paths on CUDA; lnl-bench's full default run (the README's tables).
# device call: `bash docs/results/cuda/2026-12-03-session35/call4.sh`
. tests/gpu/ab.sh && ab_init s35c4 # results in $R ($OUT/s35c4)
AB_JOBS=16 ab_build new . "" lnlinear lnl-bench test_table
ab_el built
[ -x build-new/tests/test_table ] || { tail -5 "$R/build_new.log"; ab_pack; exit 1; }
( ab_quick new 200 bf16 ) > "$R/q_bf16.out" &
( ab_quick new 200 f16 ) > "$R/q_f16.out" &
( ab_quick new 200 f32 ) > "$R/q_f32.out" &
( ab_tables new 100 4224,1024,520 1100,3000,300 700,4104,16 260,8200,136 ) > "$R/t.out" &
( ab_pytest new 200 "dw_from_x or auto_small_n or workspace or backward" ) > "$R/p.out" &
wait
cat "$R"/q_*.out "$R/t.out" "$R/p.out"
ab_el tables
for d in bf16 f32; do
    for tool in memcheck synccheck; do
        s=1100,3000,300
        timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table \
            --device cuda --dtype $d --shape $s >"$R/${tool}_${d}.txt" 2>&1 &
    done
done
wait
for f in "$R"/memcheck_*.txt "$R"/synccheck_*.txt; do
    echo "$(basename $f) $(grep -E 'passed|ERROR SUMMARY' $f | paste -sd' ' | cut -c1-160)"
done
ab_el sanitized
timeout 170 build-new/bench/lnl-bench --device cuda --json "$R/bench.json" >"$R/bench.log" 2>&1
echo "lnl-bench rc $?: $(tail -1 "$R/bench.log")"
grep -E "auto|cuBLAS GEMM" "$R/bench.log" | grep -E "bf16|f16|f32" | cut -c1-150
ab_el done
ab_pack
