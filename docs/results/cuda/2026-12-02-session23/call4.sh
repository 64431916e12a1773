#!/usr/bin/env bash
# Session 23, call 4: run.sh's two racecheck steps (bf16, f16) again, as run.sh runs them,
# with tests/gpu/racecheck_ours.sh back to instrumenting cuBLAS's kernels. In call 3
# (run.sh at 07d00e7) the script's new --kernel-name-exclude kns=nvjet_ made
# compute-sanitizer fail within 8 s on those two tables ("Internal Sanitizer Error");
# run.sh's other 14 steps passed there, on the same library code as here.
# Device call: `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session23/call4.sh`
# with carry [".snap"] (a `git archive` of the commit that holds this script).
R=${OUT:-.}
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target test_table >"$R/build.log" 2>&1
el "build rc $?"
for dt in bf16 f16; do
    ( timeout 520 tests/gpu/racecheck_ours.sh build-gpu/tests/test_table --device cuda \
        --quick --dtype "$dt" >"$R/racecheck_$dt.log" 2>&1; echo "$?" >"$R/racecheck_$dt.rc" ) &
done
wait
for dt in bf16 f16; do
    el "racecheck $dt exit $(cat "$R/racecheck_$dt.rc")"
    grep -E "passed, |RACECHECK SUMMARY|^racecheck:" "$R/racecheck_$dt.log"
done
