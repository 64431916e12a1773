#!/usr/bin/env bash
# For the next session with a GPU (written in session 15, not run): branch s15-split-stats,
# the Hopper forward's row statistics inside its GEMM kernel at 2-4 columns of tiles
# (N <= 1024), each column tile summing every tn-th K slice and the tiles of a row of tiles
# merging their shares through global memory after a counter (fused_forward_sm90.cu,
# split_stats_merge). It replaces the statistics pass that session 15's profile timed at
# 0.075 ms of 0.44 at 16384,8192,1024 (and, with the folding, 0.009 of 0.039 at
# 8192,1024,1024). Predicted: FUSED forward 1.29x -> ~1.15x the GEMM there, if a tile's
# quarter share of the statistics costs ~1/4 of variant 15's (+0.11 ms for all of it).
# It is the first wait of one CTA on another in this code: every step runs under a timeout,
# the smoke test first. Builds: main (old), the branch (new), and the branch with
# -DLNL_SM90_SPLIT_STATS=0 (off: main's choice of form, with the branch's tile order and
# slice test, to see what they cost at N <= 256), and the branch with
# -DLNL_SM90_BN128_UPTO=256 (bn128: N = 256 as two 128-wide column tiles sharing the
# statistics, for 32768,4096,256 and 65536,1024,256, #7's N = 256 target).
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session15/next-split-stats.sh .snap/ \
#     && rm -rf .snap/docs/results .snap/old/docs/results
# then the device call `cd .snap && ./next-split-stats.sh` with carry [".snap"] (~8 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/split; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 5 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b old old "" lnl-bench & b . new "" lnl-bench test_table lnlinear & b . off "-DLNL_SM90_SPLIT_STATS=0" lnl-bench &
b . bn128 "-DLNL_SM90_BN128_UPTO=256" lnl-bench test_table & wait; el builds
hung=0
for s in 8192,1024,1024 16384,8192,1024; do
  timeout 20 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --shape $s > $R/smoke_$s.txt 2>&1
  rc=$?; [ $rc = 124 ] && hung=1
  echo "smoke $s rc $rc (124: a hang): $(grep -c ' ok$' $R/smoke_$s.txt) ok lines"
done; el smoke
if [ $hung = 1 ]; then # every later step would hang too: keep the call's time for a fix
  echo "a hang: the rest skipped"; cd $OUT && tar czf split.tgz split && rm -rf split; exit 1
fi
for s in 4224,200,520 3200,72,1000 12800,200,1000; do
  timeout 90 build-new/tests/test_table --device cuda --shape $s > $R/table_$s.txt 2>&1
  echo "table $s rc $?: $(tail -1 $R/table_$s.txt)"
done
for d in bf16 f16; do
  timeout 90 build-new/tests/test_table --device cuda --quick --dtype $d > $R/table_quick_$d.txt 2>&1
  echo "table quick $d rc $?: $(tail -1 $R/table_quick_$d.txt)"
done; el tables
for s in 4224,200,520 3200,72,1000; do for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
    --dtype bf16 --shape $s > $R/san_${tool}_$s.txt 2>&1
  echo "$tool $s rc $?: $(grep -E 'passed|SUMMARY' $R/san_${tool}_$s.txt | paste -sd' ' | cut -c1-150)"
done; done; el sanitizers
LNLINEAR_LIBRARY=build-new/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda PYTHONPATH=python timeout 150 \
  python3 -m pytest -q -p no:cacheprovider tests/python/test_numerics.py -k "stats_inside or fused_many_tiles" \
  > $R/pytest.txt 2>&1
echo "pytest rc $?: $(tail -1 $R/pytest.txt)"; el pytest
B="--device cuda --dtype bf16 --strategy fused"
for s in 8192,1024,1024 16384,8192,1024 8192,768,1024 12800,4096,768 32768,4096,256 65536,1024,256; do B="$B --shape $s"; done
timeout 60 build-bn128/tests/test_table --device cuda --quick --dtype bf16 > $R/table_bn128.txt 2>&1
echo "table bn128 quick bf16 rc $?: $(tail -1 $R/table_bn128.txt)"
for r in 1 2; do for v in old new off bn128; do
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1; echo "== $v $r rc $?"
  awk '/cuBLAS GEMM/ {print $3, "gemm", $6} / fused / {print $3, $4, $5, $9, $NF}' $R/bench_${v}_$r.txt
done; done; el done
cd $OUT && tar czf split.tgz split && rm -rf split
