#!/usr/bin/env bash
# Session 15, call 7: next-dw-prep.sh cut to the ~250 s of device time left (start included):
# two builds instead of four (PDL on; the prep's time from lnl-bench's backward, not a
# profile), the quick bf16 table and the bf16 Python tests of the backward instead of the full
# table, memcheck of one FUSED shape, lnl-bench one round each. Every step writes as it goes,
# so a run cut short still returns what it did. Snapshot as in next-dw-prep.sh.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/dwprep; mkdir -p $R
b() { local src=$1 n=$2; shift 2
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg_$n.log 2>&1 \
    && cmake --build build-$n -j 8 --target "$@" > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b old old lnl-bench & b . new lnl-bench test_table lnlinear & wait; el builds
S="--shape 4096,768,768 --shape 8192,1024,1024 --shape 16384,8192,1024 --shape 32768,4096,256"
for v in new old; do
  timeout 40 build-$v/bench/lnl-bench --device cuda --dtype bf16 $S > $R/bench_$v.txt 2>&1
  echo "== $v rc $?"; grep -E "fused|auto" $R/bench_$v.txt | awk '{print $3, $4, $5, $6, $11}'
done; el bench
timeout 40 build-new/tests/test_table --device cuda --quick --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 quick rc $?: $(tail -1 $R/table_bf16.txt)"
timeout 40 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
  --dtype bf16 --shape 2048,16,1088 > $R/memcheck.txt 2>&1
echo "memcheck rc $?: $(grep -E 'passed|SUMMARY' $R/memcheck.txt | paste -sd' ' | cut -c1-120)"; el checks
LNLINEAR_LIBRARY=build-new/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda LNLINEAR_NO_CPP=1 PYTHONPATH=python timeout 60 \
  python3 -m pytest -q -x -p no:cacheprovider tests/python -k "bfloat16 and (backward or grad or dw) and not compile" > $R/pytest_bf16.txt 2>&1
echo "pytest bf16 rc $?: $(tail -1 $R/pytest_bf16.txt)"; el done
