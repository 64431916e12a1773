#!/usr/bin/env bash
# Session 24, call 5 (diagnostic): call 4's kernel breakdown at the K >= 4096 shapes, where
# ncu put the GEMM kernel within 4.3% of cuBLAS's and the forward is still 1.12-1.29x the
# GEMM: how long the statistics pass (launch_ln_forward) and the weight folding take there.
# Device call: `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session24/call5.sh`
# with carry [".snap"] (a `git archive` of the commit that holds this script).
R=${OUT:-.}/c5
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target lnlinear >"$R/build.log" 2>&1
el "build rc $?"
export PYTHONPATH=python
timeout 150 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so \
    --shapes 8192,4096,4096 8192,4096,12288 16384,8192,1024 --dtypes bf16 --strategies fused \
    --iters 10 >"$R/profile.txt" 2>&1
el "profile rc $?"
grep -v Warning "$R/profile.txt" | grep -v _warn_once | cut -c1-140
el "all done"
