#!/usr/bin/env bash
# For the next session with a GPU (written in session 14, not run): branch s14-tiny-forward,
# FUSED's float32 forward of tiny problems in one launch (src/cuda/tiny_forward.cuh) instead
# of two (statistics, then the SIMT GEMM). Its arithmetic is proven on the CPU
# (tests/cuda/test_tiny_forward_host.cu in ctest); this proves the kernel: the float32 CUDA
# table (its tiny rows now take it: 16,8,16 with output subsets, 1,1,1, 1,3,257, 16,1,16 at
# mean 1e3, 16,3,16, 129,8,1 without gamma/beta/bias), the float32 Python tests on CUDA,
# memcheck / racecheck / synccheck of the tiny rows, and lnl-bench against main; and a
# third build (-DLNL_TINY_FORWARD_16BIT=1) whose bf16/f16 tiny forwards take the kernel too
# (its quick tables, and its bf16 forward timed beside main's), to decide whether they should.
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session14/next-tiny-forward.sh .snap/ \
#     && rm -rf .snap/docs/results .snap/old/docs/results
# then the device call `cd .snap && ./next-tiny-forward.sh` with carry [".snap"] (~6 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/tf; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 5 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b old old "" lnl-bench & b . new "" lnl-bench test_table test_tiny_forward_host test_tiny_backward_host lnlinear &
b . all16 "-DLNL_TINY_FORWARD_16BIT=1" lnl-bench test_table & wait; el builds
for t in forward backward; do build-new/tests/test_tiny_${t}_host > $R/host_$t.txt 2>&1; echo "host $t rc $?: $(tail -1 $R/host_$t.txt)"; done
timeout 150 build-new/tests/test_table --device cuda --dtype f32 > $R/table_f32.txt 2>&1; echo "table f32 rc $?: $(tail -1 $R/table_f32.txt)"
for v in new all16; do for d in bf16 f16; do
  timeout 60 build-$v/tests/test_table --device cuda --quick --dtype $d > $R/table_${v}_$d.txt 2>&1
  echo "table $v $d quick rc $?: $(tail -1 $R/table_${v}_$d.txt)"
done; done; el tables
LNLINEAR_LIBRARY=build-new/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda LNLINEAR_NO_CPP=1 PYTHONPATH=python timeout 200 \
  python3 -m pytest -q -x -p no:cacheprovider tests/python -k "float32 and not compile" > $R/pytest_f32.txt 2>&1
echo "pytest f32 rc $?: $(tail -1 $R/pytest_f32.txt)"; el pytest
for s in 16,8,16 1,1,1 1,3,257 16,1,16 16,3,16 129,8,1; do
  for tool in memcheck racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
      --dtype f32 --shape $s > $R/san_${tool}_$s.txt 2>&1
    echo "$tool $s rc $?: $(grep -E 'passed|SUMMARY' $R/san_${tool}_$s.txt | paste -sd' ' | cut -c1-160)"
  done
done; el sanitizers
for r in 1 2 3; do for v in old new; do
  timeout 60 build-$v/bench/lnl-bench --device cuda --dtype f32 --shape 16,8,16 --shape 16,32,40 --shape 1,3,257 \
    > $R/bench_${v}_$r.txt 2>&1
  echo "== $v $r rc $?"; grep -E "GEMM|fused|auto" $R/bench_${v}_$r.txt | awk '{print $2, $3, $4, $5, $6, $9, $11}'
done; done
for r in 1 2 3; do for v in old all16; do
  timeout 60 build-$v/bench/lnl-bench --device cuda --dtype bf16 --shape 16,8,16 --shape 16,32,40 --shape 1,3,257 \
    > $R/bench16_${v}_$r.txt 2>&1
  echo "== bf16 $v $r rc $?"; grep -E "GEMM|fused|auto" $R/bench16_${v}_$r.txt | awk '{print $2, $3, $4, $5, $6, $9, $11}'
done; done; el done
cd $OUT && tar czf tf.tgz tf && rm -rf tf
