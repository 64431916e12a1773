#!/usr/bin/env bash
# For the next session with a GPU (written in session 13, not run): the README's table
# "GPU against PyTorch, through Python" is still the Python node's (f734ff3). This remeasures
# it with the C++ node, the default since 41a971a: bench/compare.py --device cuda, bf16 and
# f32, two rounds, Liger beside it when its wheel travels (here, before the call:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --platform manylinux2014_x86_64 -d .whl liger-kernel   (or its py3-none-any wheel)
# and carry [".whl"]). From the repo root: `bash docs/results/cuda/2026-12-01-session13/next-compare.sh`.
export PYTHONUNBUFFERED=1
R=$OUT/cmp; mkdir -p $R
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=ON \
  -DLNL_BUILD_TESTS=OFF -DLNL_BUILD_BENCH=OFF > $R/cfg.log 2>&1 \
  && cmake --build build-gpu -j16 --target lnlinear lnlinear_torch > $R/build.log 2>&1; echo "build rc $?"
ls .whl/liger_kernel-*.whl > /dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --no-compile \
  --no-cache-dir --target /tmp/site .whl/liger_kernel-*.whl; echo "liger rc $?"
export PYTHONPATH=python:/tmp/site LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
for r in 1 2; do
  timeout 240 python3 bench/compare.py --device cuda --dtypes bf16 f32 --no-compile --out $R/run$r \
    --time-limit-s 220 > $R/run${r}_log.txt 2>&1
  echo "compare run $r rc $?"; grep "^| [0-9]" $R/run$r/results.md | head -16
done
cd $OUT && tar czf cmp.tgz cmp && rm -rf cmp
