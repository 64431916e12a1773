#!/usr/bin/env bash
# Session 43, call 3: tests/gpu/run.sh (without its benchmark step) on main with the dx
# epilogue's XS form and the C++ op's own operand checks.
LNL_GPU_BENCH=0 bash tests/gpu/run.sh > "$OUT/gpu_run.log" 2>&1
echo "run.sh rc $?"; grep -E "GPU SUMMARY|FAIL" "$OUT/gpu_run.log" | tail -30
