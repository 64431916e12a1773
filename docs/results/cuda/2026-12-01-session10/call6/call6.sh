#!/usr/bin/env bash
# session 10 call 6: test_table's three new rows (1c1f905: the LayerNorm forward's warp
# kernel at 2-4 chunks a lane, the column sums' 32 x 16 blocks) on the GPU, plain and under
# memcheck and racecheck (ours judged). Tree: main (see COMMIT); the library is f734ff3's.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c6; mkdir -p $R
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target test_table > $R/build.log 2>&1; el "build rc $?"
TT=build-gpu/tests/test_table
for sh in 300,496,40 300,384,136 300,200,72; do
  timeout 30 $TT --device cuda --shape $sh > $R/table_$sh.txt 2>&1; echo "table $sh rc $? $(tail -n 1 $R/table_$sh.txt)"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 $TT --device cuda --shape $sh > $R/memcheck_$sh.txt 2>&1 &
  timeout 60 tests/gpu/racecheck_ours.sh $TT --device cuda --shape $sh > $R/racecheck_$sh.txt 2>&1 &
done
wait; el "sanitizers done"
for f in $R/memcheck_* $R/racecheck_*; do echo "$(basename $f): $(grep -E "ERROR SUMMARY|racecheck:" $f | tail -n 1) | $(grep -E "passed, " $f | tail -n 1)"; done
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
