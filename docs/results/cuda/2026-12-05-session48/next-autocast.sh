#!/usr/bin/env bash
# For the next session with a device (written in session 48, not run): the autocast rule
# (python/lnlinear/autocast.py) on the H200 against eager autocast, after tests/gpu/run.sh
# has built build-gpu (and run test_autocast.py's CUDA cases in its Python steps). Each
# dtype's rows: eager autocast, lnlinear autocast, lnlinear float32 (the behaviour before
# session 48), and the op on operands rounded uncentred; ~1-2 minutes.
[ -f build-gpu/liblnlinear.so ] || { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLNL_ENABLE_CUDA=ON >/dev/null && cmake --build build-gpu -j 16 >/dev/null; } || exit 1
mkdir -p "${OUT:-.}/autocast"
for d in bf16 f16; do
    PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so timeout 240 python3 \
        bench/autocast_step.py --device cuda --dtype $d --uncentred --steps 20 \
        --shape 16,8,16 --shape 4096,768,768 --shape 8192,768,3072 --shape 8192,4096,4096 \
        --shape 32768,4096,256 | tee "${OUT:-.}/autocast/cuda_$d.txt"
done
