#!/usr/bin/env bash
# Session 29, call 2: bench/compare.py against PyTorch eager and Liger (the first run since
# session 21, before sessions 22-29's forward and backward changes; f16 for the first time),
# and torch.profiler's kernel table of AUTO's and FUSED's forward+backward at the two small
# README shapes, where AUTO is 1.10-1.20x the floor.
# The Liger wheel is carried in .whl/ (pip download liger-kernel --no-deps; the device has
# no network). device call: `bash docs/results/cuda/2026-12-03-session29/call2.sh`, carry [".whl"]
export PYTHONUNBUFFERED=1
R=${OUT:-.}/s29c2
rm -rf "$R" && mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
pack() { (cd "${OUT:-.}" && tar czf s29c2.tgz s29c2); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target lnlinear lnlinear_torch >"$R/build.log" 2>&1
el "build rc $?"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
    .whl/liger_kernel-*.whl >"$R/liger.log" 2>&1
el "liger rc $?"
export PYTHONPATH=python:/tmp/site LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
timeout 330 python3 bench/compare.py --device cuda --dtypes bf16 f16 f32 --no-compile \
    --out "$R/compare" --time-limit-s 300 >"$R/compare_log.txt" 2>&1
el "compare rc $?"
grep "^| [0-9]" "$R/compare/results.md" | head -40
pack
timeout 120 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so \
    --shapes 4096,768,768 8192,1024,1024 --dtypes bf16 --strategies auto fused --iters 10 \
    >"$R/profile.txt" 2>&1
el "profile rc $?"
cat "$R/profile.txt" | head -120
pack
