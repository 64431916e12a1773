#!/usr/bin/env bash
# For a session with a GPU (written in session 14, not run): branch s14-f32-fold, float32's
# epilogue form (src/cuda/f32_fold.cu), an experiment built with -DLNL_F32_FOLD=1: FUSED's
# float32 forward past the tiny class as cuBLAS's fp32 GEMM of the raw x with W' = W gamma,
# then y = rstd (y - mean c) + d; rows of |mean| rstd > 16 redone by the SIMT kernel.
# Predicted ~1.02-1.04x cuBLAS at K = 4096 against the SIMT kernel's 1.45-1.54x
# (docs/results/cuda/2026-11-30-sm90-variants.md, "float32: the epilogue form").
# Checks: the float32 table and Python tests on CUDA with the switch on (their rows of mean
# 1e3 take the fallback), memcheck of the quick float32 table, and lnl-bench FUSED float32
# against main and the branch's default build. Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session14/next-f32-fold.sh .snap/ \
#     && rm -rf .snap/docs/results .snap/old/docs/results
# then the device call `cd .snap && ./next-f32-fold.sh` with carry [".snap"] (~7 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/f32fold; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 5 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b old old "" lnl-bench & b . new "" lnl-bench test_table & b . fold "-DLNL_F32_FOLD=1" lnl-bench test_table lnlinear &
wait; el builds
timeout 20 build-fold/bench/lnl-bench --device cuda --dtype f32 --strategy fused --shape 8192,1024,1024 > $R/smoke.txt 2>&1
echo "smoke rc $?: $(grep -c ' ok$' $R/smoke.txt) ok lines"
timeout 200 build-fold/tests/test_table --device cuda --dtype f32 > $R/table_f32.txt 2>&1; echo "table f32 (fold) rc $?: $(tail -1 $R/table_f32.txt)"
timeout 60 build-new/tests/test_table --device cuda --quick --dtype f32 > $R/table_f32_new.txt 2>&1; echo "table f32 quick (default build) rc $?: $(tail -1 $R/table_f32_new.txt)"
el tables
LNLINEAR_LIBRARY=build-fold/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda LNLINEAR_NO_CPP=1 PYTHONPATH=python timeout 200 \
  python3 -m pytest -q -x -p no:cacheprovider tests/python -k "float32 and not compile" > $R/pytest_f32.txt 2>&1
echo "pytest f32 (fold) rc $?: $(tail -1 $R/pytest_f32.txt)"; el pytest
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 build-fold/tests/test_table --device cuda --quick --dtype f32 \
  > $R/memcheck.txt 2>&1; echo "memcheck rc $?: $(grep -E 'passed|SUMMARY' $R/memcheck.txt | paste -sd' ')"; el memcheck
B="--device cuda --dtype f32 --strategy fused"
for s in 4096,768,768 8192,1024,1024 8192,4096,4096 16384,8192,1024 32768,4096,256; do B="$B --shape $s"; done
for r in 1 2; do for v in old fold; do
  timeout 150 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1; echo "== $v $r rc $?"
  grep -E "GEMM|fused" $R/bench_${v}_$r.txt | awk '{print $3, $4, $5, $6, $9, $11, $NF}'
done; done; el done
cd $OUT && tar czf f32fold.tgz f32fold && rm -rf f32fold
