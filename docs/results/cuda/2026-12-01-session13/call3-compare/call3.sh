#!/usr/bin/env bash
# session 13 call 3, as typed into the device call (one line there), from the repo root at
# 12478ca on the machine warm from call 2 (build-gpu left there by tests/gpu/run.sh):
# bench/compare.py bf16, once with the C++ node on CUDA and once with the Python node, then
# bench/python_overhead.py --paths (both nodes and eager in one process).
export PYTHONUNBUFFERED=1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=ON >/dev/null \
  && cmake --build build-gpu -j16 --target lnlinear lnlinear_torch > $OUT/build.log 2>&1; echo build $?
export PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
mkdir -p $OUT/c2
for p in cpp python; do
  env $([ $p = cpp ] && echo LNLINEAR_CPP_CUDA=1) timeout 115 python3 bench/compare.py --device cuda --dtypes bf16 \
    --no-compile --out $OUT/c2/$p --time-limit-s 95 > $OUT/c2/$p.log 2>&1
  echo "compare $p rc $?"; grep "^| [0-9]" $OUT/c2/$p/results.md | head -12
done
LNLINEAR_CPP_CUDA=1 timeout 75 python3 bench/python_overhead.py --paths --device cuda --dtype bf16 \
  --shapes 16,8,16 4096,768,768 8192,768,3072 8192,1024,1024 --iters 200 --repeats 5 2>&1 | tee $OUT/c2/overhead.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
