#!/usr/bin/env bash
# session 9 call 3 (tree: see COMMIT; old/ = main 4481ed3, whose library is 449b676's):
#  builds: build-gpu (new, everything), build-old (old/: lnlinear + lnl-bench);
#  1. ln_backward_ab.py on both (gradient digests must agree bit for bit; backward ms);
#  2. lnl-bench --strategy auto bf16 at five shapes, new / old, two rounds in turn;
#  3. ncu --set full on the new register kernel at 8192,4096,4096 (unfused, ln_out kept);
#  4. test_table --quick bf16 / f16 / f32 on CUDA, and the AUTO resolution tests of pytest.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c3; mkdir -p $R
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > "$R/$3.cfg.log" 2>&1; }
( cfg . build-gpu new && cmake --build build-gpu -j 10 > $R/build_new.log 2>&1; echo "new rc $?" ) &
( cfg old build-old old && cmake --build build-old -j 6 --target lnlinear lnl-bench > $R/build_old.log 2>&1; echo "old rc $?" ) &
wait
el builds done
grep -E " error|error:" $R/build_*.log | head
for v in gpu old; do
  timeout 60 env PYTHONPATH=python LNLINEAR_LIBRARY=build-$v/liblnlinear.so python3 bench/cuda/ln_backward_ab.py > $R/ab_$v.txt 2>&1; el "ab $v rc $?"; grep -v Warn $R/ab_$v.txt
done
B="--device cuda --dtype bf16 --strategy auto --shape 4096,768,768 --shape 8192,1024,1024 --shape 8192,4096,4096 --shape 16384,8192,1024 --shape 32768,4096,256"
for r in 1 2; do for v in gpu old; do
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_auto_${v}_$r.txt 2>&1; el "bench auto $v $r rc $?"
done; done
for f in $R/bench_*.txt; do echo "== $f"; grep "^cuda" $f | awk '{print $3,$4,$5,$6,$10,$11,$12,$13,$14}'; done
export PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
timeout 60 ncu -k regex:ln_bwd -c 1 --set full python3 ncu_target.py 8192,4096,4096 unfused 0 > $R/ncu_reg_k4096_new.txt 2>&1; el "ncu rc $?"
grep -E "Duration|DRAM Throughput|Issue Slots Busy|Executed Instructions  |Registers Per|Achieved Occupancy|excessive" $R/ncu_reg_k4096_new.txt | cut -c1-160
T=build-gpu/tests/test_table
for dt in bf16 f16 f32; do
  ( timeout 150 $T --device cuda --quick --dtype $dt > $R/table_quick_$dt.txt 2>&1; echo "table quick $dt rc $?" > $R/rc_table_$dt ) &
done
( timeout 150 python3 -m pytest -q tests/python/test_numerics.py -p no:cacheprovider > $R/pytest_numerics.txt 2>&1; echo "pytest rc $?" > $R/rc_pytest ) &
wait
el tests done
cat $R/rc_*; tail -n 2 $R/table_quick_*.txt $R/pytest_numerics.txt | cut -c1-300
cd $OUT && tar czf all.tgz c3 && rm -rf c3
