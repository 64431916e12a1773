#!/usr/bin/env bash
# Session 28, call 4: the proof of the LN(x)-from-the-LayerNorm-backward change (call 3's
# variant with its overrun fixed) in the device time left (~480 s held, after two refused
# starts cost 90 s each): not run.sh, but the steps that cover the change, side by side:
# the full CUDA test table for bf16 and f16 (every row: the register, ring and generic
# LayerNorm-backward kernels, K = 1032 ... 8200, tails), memcheck on the rows that failed in
# call 3, the Python numerics/ops/module tests on CUDA; then lnl-bench's default run
# (bf16, f16, f32) alone for the README's tables.
# device call: `bash docs/results/cuda/2026-12-03-session28/call4.sh`
. tests/gpu/ab.sh && ab_init s28c4
AB_JOBS=16 ab_build new . "" lnl-bench test_table lnlinear
[ -x build-new/tests/test_table ] || { ab_pack; exit 1; }
ab_el "built"
for dt in bf16 f16; do
    (timeout 175 build-new/tests/test_table --device cuda --dtype $dt >"$R/table_$dt.txt" 2>&1
     echo "table $dt rc $?: $(tail -1 "$R/table_$dt.txt")") &
done
for sh in 130,4104,264 16,4097,257 260,8200,136; do
    (timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table \
        --device cuda --no-auto --dtype f16 --shape $sh >"$R/memcheck_f16_$sh.txt" 2>&1
     echo "memcheck f16 $sh rc $?: $(grep -E 'passed|SUMMARY' "$R/memcheck_f16_$sh.txt" | paste -sd' ')") &
done
(LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so PYTHONPATH=python LNLINEAR_TEST_DEVICE=cuda \
    timeout 175 python3 -m pytest -q -p no:cacheprovider -rf tests/python/test_numerics.py \
    tests/python/test_ops.py tests/python/test_module.py >"$R/pytest.txt" 2>&1
 echo "pytest rc $?: $(tail -1 "$R/pytest.txt")") &
wait
ab_el "correctness done"
timeout 125 build-new/bench/lnl-bench --device cuda --json "$R/bench.json" >"$R/bench.log" 2>&1
echo "bench rc $?: $(tail -1 "$R/bench.log")"
ab_el "all done"
ab_pack
