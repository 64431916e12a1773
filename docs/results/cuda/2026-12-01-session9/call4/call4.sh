#!/usr/bin/env bash
# session 9 call 4 (same trees as call 3): the LayerNorm backward kernel's time at the
# boost clock, new vs old: bench/cuda/profile_cuda.py (torch.profiler, kernel by kernel,
# AUTO bf16, 20 passes) at four shapes, new / old / new / old; then the CUDA Python
# tests of test_numerics.py (LNLINEAR_TEST_DEVICE=cuda) on the new library.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c4; mkdir -p $R
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > "$R/$3.cfg.log" 2>&1; }
( cfg . build-gpu new && cmake --build build-gpu -j 10 --target lnlinear > $R/build_new.log 2>&1; echo "new rc $?" ) &
( cfg old build-old old && cmake --build build-old -j 6 --target lnlinear > $R/build_old.log 2>&1; echo "old rc $?" ) &
wait
el builds done
for r in 1 2; do for v in gpu old; do
  timeout 80 python3 bench/cuda/profile_cuda.py --lib build-$v/liblnlinear.so --dtypes bf16 --iters 20 \
     --shapes 32768,4096,256 8192,4096,4096 16384,8192,1024 4096,768,768 > $R/profile_${v}_$r.txt 2>&1
  el "profile $v $r rc $?"
done; done
for f in $R/profile_*.txt; do echo "== $f"; grep -E "M,K,N|lnlinear auto|ln_bwd" $f | cut -c1-120; done
timeout 240 env LNLINEAR_TEST_DEVICE=cuda PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so \
  python3 -m pytest -q -p no:cacheprovider tests/python/test_numerics.py > $R/pytest_numerics_cuda.txt 2>&1
el "pytest numerics cuda rc $?"; tail -n 3 $R/pytest_numerics_cuda.txt | cut -c1-300
grep -E "auto_small_n" $R/pytest_numerics_cuda.txt | head
cd $OUT && tar czf all.tgz c4 && rm -rf c4
