#!/usr/bin/env bash
# For the next session with a GPU (written in session 13, not run): branch s13-tiny-backward,
# FUSED's backward of tiny problems in one launch (src/cuda/tiny_backward.cuh). Its
# arithmetic is proven on the CPU (tests/cuda/test_tiny_backward_host.cu); this proves the
# kernel: the CUDA table (every tiny row of it now takes the kernel: 16,8,16 with output
# subsets, 1,1,1, 1,3,257, 16,1,16 at mean 1e3, 16,3,16, 129,8,1 without gamma/beta/bias),
# memcheck / racecheck / synccheck of those rows, and lnl-bench at 16,8,16 against main.
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-01-session13/next-tiny.sh .snap/
# then the device call `cd .snap && ./next-tiny.sh` with carry [".snap"] (~3 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/t; mkdir -p $R
b() { cmake -S "$1" -B "build-$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
        > $R/cfg_$2.log 2>&1 && cmake --build build-$2 -j 8 --target lnl-bench test_table test_tiny_backward_host \
        > $R/build_$2.log 2>&1; echo "build $2 rc $?"; }
b old old & b . new & wait; el builds
build-new/tests/test_tiny_backward_host > $R/host.txt 2>&1; echo "host body rc $?: $(tail -1 $R/host.txt)"
for d in f32 bf16 f16; do
  timeout 120 build-new/tests/test_table --device cuda --quick --dtype $d > $R/table_$d.txt 2>&1
  echo "table $d rc $?: $(tail -1 $R/table_$d.txt)"
done; el tables
for s in 16,8,16 1,1,1 1,3,257 16,1,16 16,3,16 129,8,1; do
  for tool in memcheck racecheck synccheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
      --shape $s > $R/san_${tool}_$s.txt 2>&1
    echo "$tool $s rc $?: $(grep -E 'passed|SUMMARY' $R/san_${tool}_$s.txt | paste -sd' ' | cut -c1-160)"
  done
done; el sanitizers
for r in 1 2 3; do for v in old new; do
  timeout 60 build-$v/bench/lnl-bench --device cuda --shape 16,8,16 --shape 64,32,48 > $R/bench_${v}_$r.txt 2>&1
  echo "== $v $r rc $?"; grep -E "fused|auto" $R/bench_${v}_$r.txt | awk '{print $2, $3, $4, $5, $6, $11, $NF}'
done; done; el done
cd $OUT && tar czf t.tgz t && rm -rf t
