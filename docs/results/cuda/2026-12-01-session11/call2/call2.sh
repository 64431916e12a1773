#!/usr/bin/env bash
# session 11 call 2 (tree: see COMMIT, the FORM_FOLD_STATS fix; old/ = 2ceb37c, the new test
#  on the library before the fix):
#  1. test_cuda_stats_inside_redo_many_tiles on old's library (expected to fail) and on the fix;
#  2. on the fix: the CUDA numerics tests that reach the Hopper forward's forms;
#  3. on the fix: memcheck of one new case (python, f16 all_rows 40000,512,256) and of the quick table's
#     12800-row rows (bf16); lnl-bench FUSED bf16 at 32768,4096,256 and 12800,4096,256, old / new.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c2; mkdir -p $R
b() { local src=$1 n=$2; shift 2
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg_$n.log 2>&1 \
   && cmake --build build-$n -j 8 --target "$@" > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b old old lnlinear lnl-bench & b . new lnlinear lnl-bench test_table &
wait; el builds done
grep -hE " error|error:" $R/build_*.log | head
P="python3 -m pytest -q -p no:cacheprovider tests/python/test_numerics.py"
export LNLINEAR_TEST_DEVICE=cuda PYTHONPATH=python
LNLINEAR_LIBRARY=$PWD/build-old/liblnlinear.so timeout 90 $P -k stats_inside_redo > $R/redo_old.txt 2>&1; el "redo test on old rc $? (expected 1)"; grep -E "^FAILED|AssertionError: [0-9]+ rows|passed|failed" $R/redo_old.txt | cut -c1-220 | tail -n 14
LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so timeout 90 $P -k stats_inside_redo > $R/redo_new.txt 2>&1; el "redo test on new rc $? (expected 0)"; tail -n 1 $R/redo_new.txt
LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so timeout 150 $P -k "many_tiles or overflow or auto_small_n or dw_from_x" > $R/numerics_new.txt 2>&1; el "numerics subset on new rc $?"; tail -n 1 $R/numerics_new.txt
( LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $P -k "stats_inside_redo and f16 and all_rows and 512" > $R/memcheck_py.txt 2>&1; echo "memcheck py rc $?" > $R/rc_mpy ) &
( timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --shape 12800,72,136 > $R/memcheck_table.txt 2>&1; echo "memcheck table rc $?" > $R/rc_mt ) &
wait; el "memchecks done"; cat $R/rc_*
grep -E "ERROR SUMMARY|passed" $R/memcheck_py.txt $R/memcheck_table.txt | tail -n 4 | cut -c1-200
B="--device cuda --dtype bf16 --strategy fused --shape 32768,4096,256 --shape 12800,4096,256 --shape 8192,4096,4096"
for r in 1 2; do for v in old new; do
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1; echo "== $v $r: $(grep '^cuda' $R/bench_${v}_$r.txt | grep fused | awk '{print $3, $5}' | paste -sd' ')"
done; done
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
