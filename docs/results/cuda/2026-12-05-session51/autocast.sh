#!/usr/bin/env bash
# Session 51, after tests/gpu/run.sh built build-gpu in the same device call: autocast on
# the H200 now that CUDA takes the mixed call (ln_float32, src/cuda/mixed_backend.cu).
# Each dtype's rows: eager autocast, lnlinear autocast (the mixed call), lnlinear float32,
# the op on operands rounded uncentred, and the op on a centred 16-bit x (CUDA's rule
# until this session). Shapes whose float64 reference (on the host) stays short.
[ -f build-gpu/liblnlinear.so ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLNL_ENABLE_CUDA=ON >/dev/null && cmake --build build-gpu -j 16 >/dev/null; } || exit 1
mkdir -p "${OUT:-.}/autocast"
for d in bf16 f16; do
    PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so timeout 150 python3 \
        bench/autocast_step.py --device cuda --dtype $d --uncentred --centred --steps 20 \
        --shape 16,8,16 --shape 4096,768,768 --shape 8192,768,3072 --shape 8192,1024,1024 \
        --shape 32768,4096,256 | tee "${OUT:-.}/autocast/cuda_$d.txt"
done
# The op alone, the mixed call (float32 x) against the same call on a 16-bit x (GPU time
# between events, forward and backward)
for d in bf16 f16; do
    PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so timeout 90 python3 \
        bench/mixed_call.py --device cuda --dtype $d --steps 50 --rounds 3 \
        --shape 4096,768,768 --shape 8192,768,3072 --shape 8192,1024,1024 \
        --shape 8192,4096,4096 --shape 32768,4096,256 | tee "${OUT:-.}/autocast/mixed_call_cuda_$d.txt"
done
