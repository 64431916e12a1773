#!/usr/bin/env bash
# For the next session with a GPU (written in session 15, not run): branch s15-f32-dw-x,
# which holds s15-dw-prep (the dW prep's vectorized tail and taller blocks) and adds dW from
# the raw x in float32 (src/cuda/dw_from_x.cu templated on the dtype): FUSED's float32
# backward at any N and AUTO's where N < K take one true-fp32 cuBLAS GEMM of the raw x
# instead of the SIMT dW kernel (FUSED: forward+backward 1.15-1.73x the floor in session
# 15's run) or LN(x) written out (AUTO); rows of |mean| rstd > 8 flag the call and the SIMT
# kernel, now able to return unless flagged, redoes dW with the row shift. This script
# proves both branches at once (next-dw-prep.sh need not run):
#  - the float32 CUDA table (its 700,2056,16 rows of mean 1e3 take the fallback) and the
#    quick bf16 table; the float32 and bf16 Python tests on CUDA;
#  - memcheck of the quick float32 table;
#  - lnl-bench float32 FUSED/AUTO and bf16 FUSED against main (old) and against the branch
#    built with -DLNL_F32_DW_X=0 (off: the dW prep change alone), two rounds.
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session15/next-f32-dw-x.sh .snap/ \
#     && rm -rf .snap/docs/results .snap/old/docs/results
# then the device call `cd .snap && ./next-f32-dw-x.sh` with carry [".snap"] (~8 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/f32dwx; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 5 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b old old "" lnl-bench & b . new "" lnl-bench test_table lnlinear & b . off "-DLNL_F32_DW_X=0" lnl-bench &
wait; el builds
timeout 200 build-new/tests/test_table --device cuda --dtype f32 > $R/table_f32.txt 2>&1; echo "table f32 rc $?: $(tail -1 $R/table_f32.txt)"
timeout 90 build-new/tests/test_table --device cuda --quick --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 quick rc $?: $(tail -1 $R/table_bf16.txt)"
el tables
for d in float32 bfloat16; do
  LNLINEAR_LIBRARY=build-new/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda LNLINEAR_NO_CPP=1 PYTHONPATH=python timeout 150 \
    python3 -m pytest -q -p no:cacheprovider tests/python -k "$d and not compile" > $R/pytest_$d.txt 2>&1
  echo "pytest $d rc $?: $(tail -1 $R/pytest_$d.txt)"
done; el pytest
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
  --dtype f32 > $R/memcheck_f32.txt 2>&1; echo "memcheck f32 rc $?: $(grep -E 'passed|SUMMARY' $R/memcheck_f32.txt | paste -sd' ')"
el memcheck
S="--shape 4096,768,768 --shape 8192,1024,1024 --shape 16384,8192,1024 --shape 32768,4096,256"
SF="--shape 4096,768,768 --shape 8192,1024,1024 --shape 32768,4096,256" # f32's 16384,8192,1024 takes ~1 min a run
for r in 1 2; do for v in old off new; do
  timeout 90 build-$v/bench/lnl-bench --device cuda --dtype f32 $SF > $R/bench_f32_${v}_$r.txt 2>&1
  echo "== f32 $v $r rc $?"; grep -E "fused|auto" $R/bench_f32_${v}_$r.txt | awk '{print $3, $4, $5, $6, $11}'
  timeout 60 build-$v/bench/lnl-bench --device cuda --dtype bf16 --strategy fused $S > $R/bench_bf16_${v}_$r.txt 2>&1
  echo "== bf16 $v $r rc $?"; grep -E "fused" $R/bench_bf16_${v}_$r.txt | awk '{print $3, $4, $5, $6, $11}'
done; done; el done
cd $OUT && tar czf f32dwx.tgz f32dwx && rm -rf f32dwx
