#!/usr/bin/env bash
# Session 30, call 5 (evidence for the next session, no change tested): each kernel's own
# time in the small shapes' forward+backward, where AUTO misses #7's floor by 10-21%
# (8192,1024,1024; 16384,8192,1024; 32768,4096,256). Under PDL the profiler times a
# dependent kernel from its launch, so its figures overlap the kernel before; a build with
# -DLNL_PDL=0 launches every kernel the ordinary way. torch.profiler's kernel table
# (bench/cuda/profile_cuda.py), bf16, AUTO and FUSED, against eager.
# device call: `bash docs/results/cuda/2026-12-03-session30/call5.sh`
export PYTHONUNBUFFERED=1
R=${OUT:-.}/s30c5
rm -rf "$R" && mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
cmake -S . -B build-nopdl -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF "-DCMAKE_CUDA_FLAGS=-DLNL_PDL=0" >"$R/cfg.log" 2>&1 &&
    cmake --build build-nopdl -j16 --target lnlinear >"$R/build.log" 2>&1
el "build rc $?"
timeout 150 python3 bench/cuda/profile_cuda.py --lib build-nopdl/liblnlinear.so \
    --shapes 4096,768,768 8192,1024,1024 32768,4096,256 16384,8192,1024 --dtypes bf16 \
    --strategies auto fused --iters 10 >"$R/profile_nopdl.txt" 2>&1
el "profile rc $?"
cat "$R/profile_nopdl.txt"
(cd "${OUT:-.}" && tar czf s30c5.tgz s30c5)
