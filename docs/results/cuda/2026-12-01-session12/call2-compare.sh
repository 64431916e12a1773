#!/usr/bin/env bash
# For the next session with a GPU (not run in session 12: no device was lent), after
# tests/gpu/run.sh has passed with the C++ node: its effect through Python on the H200.
#  - bench/compare.py --device cuda --dtypes bf16, two rounds, each with the C++ node on CUDA
#    (LNLINEAR_CPP_CUDA=1) and then the Python node, Liger beside them if its wheel is there
#    (python3 -m pip download --no-deps -d .whl liger-kernel, here, before the snapshot);
#  - bench/python_overhead.py --paths --device cuda: host time per call of both nodes and eager
#    in one process, at the shapes where AUTO lost to eager through Python at f734ff3.
# Snapshot as in ../2026-12-01-session11 (tar of git ls-files into .snap, .whl copied in), then
# the device call `cd .snap && ./call2-compare.sh` with carry [".snap"].
cd "$(dirname "$0")"
echo "tree $(cat COMMIT 2>/dev/null)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c2; mkdir -p $R
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_BUILD_TESTS=OFF -DLNL_BUILD_BENCH=OFF \
  -DLNL_BUILD_TORCH_OPS=ON > $R/cfg.log 2>&1 && cmake --build build-gpu -j16 > $R/build.log 2>&1; el "build rc $?"
ls .whl/liger_kernel-*.whl > /dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --no-compile \
  --no-cache-dir --target /tmp/site .whl/liger_kernel-*.whl; el "liger rc $?"
export PYTHONPATH=python:/tmp/site LNLINEAR_LIBRARY=build-gpu/liblnlinear.so PYTHONUNBUFFERED=1
for r in 1 2; do for p in cpp python; do
  env $([ $p = cpp ] && echo LNLINEAR_CPP_CUDA=1) timeout 140 python3 bench/compare.py --device cuda \
    --dtypes bf16 --no-compile --out $R/$p-run$r --time-limit-s 120 > $R/$p-run${r}_log.txt 2>&1
  el "compare $p $r rc $?"; grep "^| [0-9]" $R/$p-run$r/results.md | head -8
done; done
LNLINEAR_CPP_CUDA=1 timeout 100 python3 bench/python_overhead.py --paths --device cuda --dtype bf16 \
  --shapes 16,8,16 4096,768,768 8192,768,3072 8192,1024,1024 --iters 200 --repeats 9 > $R/overhead.txt 2>&1
el "overhead rc $?"; cat $R/overhead.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
