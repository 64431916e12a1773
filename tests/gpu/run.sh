#!/usr/bin/env bash
# The CUDA backend's proof, run on a machine with an NVIDIA GPU from the repo root:
#   tests/gpu/run.sh
# Builds (CMake + ninja, Release, build-gpu), runs the C test table on CUDA (full and
# --big), compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on the quick
# table, lnl-bench --device cuda, and the Python tests on CUDA when present. Every
# step's result goes into the last line: "GPU SUMMARY: all passed (...)" or
# "GPU SUMMARY: FAILED: ...". Exit status is non-zero on any failure. When $OUT is
# set (the device tool), the whole log is also written to $OUT/gpu_run.log.
# Budget: under 8 minutes on one H200 (LNL_SANITIZER_TIMEOUT caps each sanitizer run,
# default 150 s; racecheck of the quick table took 59 s on 2026-11-30).
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
LOG=${OUT:+$OUT/gpu_run.log}
LOG=${LOG:-build-gpu-run.log}
: >"$LOG"
JOBS=$(nproc 2>/dev/null || echo 4)
T0=$(date +%s)
passed=()
failed=()
skipped=()

# step NAME TIMEOUT_S CMD...: runs CMD with a time limit, logs it, records the result.
step() {
    local name=$1 limit=$2
    shift 2
    local t=$(date +%s)
    echo "=== [$name] $*" | tee -a "$LOG"
    timeout "$limit" "$@" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ]; then
        passed+=("$name")
        echo "=== [$name] passed in $(($(date +%s) - t)) s" | tee -a "$LOG"
    else
        [ "$rc" -eq 124 ] && rc="$rc, timed out after ${limit} s"
        failed+=("$name")
        echo "=== [$name] FAILED (exit $rc) after $(($(date +%s) - t)) s" | tee -a "$LOG"
    fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"

step configure 120 cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON
step build 300 cmake --build build-gpu -j "$JOBS"

TABLE=build-gpu/tests/test_table
if [ -x "$TABLE" ]; then
    step table 240 "$TABLE" --device cuda
    step table_big 180 "$TABLE" --device cuda --big
    if command -v compute-sanitizer >/dev/null; then
        for tool in memcheck racecheck initcheck synccheck; do
            step "sanitizer_$tool" "${LNL_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
                "$TABLE" --device cuda --quick
        done
    else
        skipped+=("sanitizers (compute-sanitizer not found)")
    fi
else
    failed+=("table (build-gpu/tests/test_table missing)")
fi

if [ -x build-gpu/bench/lnl-bench ]; then
    step bench 240 build-gpu/bench/lnl-bench --device cuda
else
    skipped+=("bench (build-gpu/bench/lnl-bench absent)")
fi

if [ -d tests/python ] && [ -f pyproject.toml ]; then
    step pip_install 300 python3 -m pip install -q --no-build-isolation --no-deps .
    step pytest 300 env LNLINEAR_TEST_DEVICE=cuda python3 -m pytest -q tests/python
else
    skipped+=("python (tests/python absent)")
fi

elapsed=$(($(date +%s) - T0))
note="${#passed[@]} steps passed in ${elapsed} s"
[ ${#skipped[@]} -gt 0 ] && note="$note; skipped: ${skipped[*]}"
if [ ${#failed[@]} -eq 0 ]; then
    echo "GPU SUMMARY: all passed ($note: ${passed[*]})" | tee -a "$LOG"
    exit 0
fi
echo "GPU SUMMARY: FAILED: ${failed[*]} ($note)" | tee -a "$LOG"
exit 1
