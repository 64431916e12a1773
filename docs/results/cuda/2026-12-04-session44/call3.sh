#!/usr/bin/env bash
# Session 44, call 3: tests/gpu/run.sh (without its benchmark step) on 3a0566d: the Hopper
# forward in clusters of two CTAs by default, and run.sh's Python step without its two
# slowest CPU cases (df0acd5, its first run here).
LNL_GPU_BENCH=0 bash tests/gpu/run.sh > "$OUT/gpu_run.log" 2>&1
echo "run.sh rc $?"; grep -E "GPU SUMMARY|FAIL|passed in|failed in" "$OUT/gpu_run.log" | tail -40
