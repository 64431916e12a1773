#!/usr/bin/env bash
# Session 20, call 4 (branch s20-tc-slice). Call 3 (run.sh on main 668848d, the merged row
# sums of call 2) failed three f16 Python tests: y's error 1.9-14x PyTorch's where a column's
# folded weight overflowed, with the tensor cores' float32 sums carrying |mean| * K. Here each
# slice's sums are folded into a shifted float32 sum as soon as they complete (64 values at a
# time). Lean, to leave the budget for run.sh: the Python tests of the in-kernel statistics,
# the table's rows that take them, and bf16 forward timings against the CUDA-core sums
# (off: -DLNL_SM90_TC_ROWSUM=0 -DLNL_SM90_UNIFORM_CW=0). From the snapshot root.
. tests/gpu/ab.sh && ab_init c4
R=$PWD/res-c4 && rm -rf "$R" && mkdir -p "$R"
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/c4.tgz" -C "$PWD" res-c4; }
AB_JOBS=6 ab_build off . "-DLNL_SM90_TC_ROWSUM=0 -DLNL_SM90_UNIFORM_CW=0" lnl-bench &
AB_JOBS=10 ab_build new . "" lnl-bench test_table lnlinear &
wait
ab_el builds
ab_smoke new 30 "--dtype bf16 --strategy fused" 32768,4096,256 || { pk; exit 1; }
pk
LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so PYTHONPATH=python LNLINEAR_TEST_DEVICE=cuda \
    timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_numerics.py \
    -k "folded_weight_overflow or stats_inside or (16bit_fused_many_tiles and 13000)" \
    >"$R/pytest.txt" 2>&1
echo "pytest rc $?: $(tail -1 "$R/pytest.txt")"
ab_el pytest
pk
ab_tables new 60 12800,200,136 12800,72,100 12800,72,136
AB_BENCH_LIMIT=60 ab_bench 2 "off new" "--dtype bf16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,256 16384,2048,128
ab_el "all done"
pk
