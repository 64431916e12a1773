#!/usr/bin/env bash
# Session 15: the README's "GPU against PyTorch, through Python" table, remeasured with the
# C++ node (the default since 41a971a) on the commit tests/gpu/run.sh proved in the call
# before, on the same warm machine (build-gpu, torch op included, is left there by run.sh):
# bench/compare.py --device cuda, bf16 and f32, two rounds, Liger beside it (its wheel
# downloaded here with `python3 -m pip download --no-deps --only-binary=:all:
# --python-version 3.12 --platform manylinux2014_x86_64 -d .whl liger-kernel`, carry
# [".whl"]). From the repo root: `C=<commit> bash docs/results/cuda/2026-12-02-session15/compare.sh`.
export PYTHONUNBUFFERED=1
R=$OUT/cmp; mkdir -p $R
echo "${C:-unknown}" > $R/COMMIT  # C=<commit> given on the command line
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg.log 2>&1 \
  && cmake --build build-gpu -j16 --target lnlinear lnlinear_torch > $R/build.log 2>&1; echo "build rc $?"
ls .whl/liger_kernel-*.whl > /dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --no-compile \
  --no-cache-dir --target /tmp/site .whl/liger_kernel-*.whl > $R/liger.log 2>&1; echo "liger rc $?"
export PYTHONPATH=python:/tmp/site LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
for r in 1 2; do
  timeout 200 python3 bench/compare.py --device cuda --dtypes bf16 f32 --no-compile --out $R/run$r \
    --time-limit-s 180 > $R/run${r}_log.txt 2>&1
  echo "compare run $r rc $?"; grep "^| [0-9]" $R/run$r/results.md | head -40
done
cd $OUT && tar czf cmp.tgz cmp && rm -rf cmp
