#!/usr/bin/env bash
# Session 54, call 3: the f16 autocast training step on CUDA that session 52 left untimed
# (its call 4 timed bf16): eager autocast against the library's mixed call, the centred
# rule and x rounded uncentred, at session 52's three shapes.
T0=$(date +%s)
O=${OUT:-/tmp/s54c3}; mkdir -p "$O"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$O/autocast_cuda_f16.txt"
( cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >/dev/null &&
  cmake --build build-gpu -j 16 --target lnlinear lnlinear_torch >/dev/null ) || { echo "build failed"; exit 1; }
echo "build done at $(( $(date +%s) - T0 )) s"
PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so timeout 200 python3 \
    bench/autocast_step.py --device cuda --dtype f16 --uncentred --centred --steps 20 \
    --shape 4096,768,768 --shape 8192,1024,1024 --shape 32768,4096,256 2>&1 | tee -a "$O/autocast_cuda_f16.txt"
echo "done at $(( $(date +%s) - T0 )) s"
