#!/usr/bin/env bash
# session 7 call 3: 2-CTA clusters with TMA multicast of W' in the epilogue form, and the
# one-launch fold + statistics pre-pass for K <= 2048 (working tree on 3aaf7b4).
# Builds: gpu (the tree), nocl (-DLNL_SM90_CLUSTER=0), k1024 (-DLNL_FOLD_PREP_MAX_K=1024),
# old (3aaf7b4).
cd "$(dirname "$0")"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c3; mkdir -p $R
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON ${3:+-DCMAKE_CUDA_FLAGS=$3} > "$2.cfg.log" 2>&1; }
( cfg . build-gpu && cmake --build build-gpu -j 8 > $R/build_new.log 2>&1; echo "new rc $?" ) &
( cfg . build-nocl -DLNL_SM90_CLUSTER=0 && cmake --build build-nocl -j 3 --target lnlinear lnl-bench > $R/build_nocl.log 2>&1; echo "nocl rc $?" ) &
( cfg . build-k1024 -DLNL_FOLD_PREP_MAX_K=1024 && cmake --build build-k1024 -j 2 --target lnlinear lnl-bench > $R/build_k1024.log 2>&1; echo "k1024 rc $?" ) &
( cfg old build-old && cmake --build build-old -j 3 --target lnlinear lnl-bench > $R/build_old.log 2>&1; echo "old rc $?" ) &
wait
el builds done
grep -E "error" $R/build_*.log | head
T=build-gpu/tests/test_table
( timeout 150 $T --device cuda --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 rc $?" > $R/rc_table_bf16 ) &
( timeout 150 $T --device cuda --dtype f16 > $R/table_f16.txt 2>&1; echo "table f16 rc $?" > $R/rc_table_f16 ) &
( timeout 150 $T --device cuda --big > $R/table_big.txt 2>&1; echo "table big rc $?" > $R/rc_table_big ) &
( timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $T --device cuda --quick --dtype bf16 > $R/memcheck_bf16.txt 2>&1; echo "memcheck bf16 rc $?" > $R/rc_memcheck ) &
( timeout 270 tests/gpu/racecheck_ours.sh $T --device cuda --quick --dtype bf16 > $R/racecheck_bf16.txt 2>&1; echo "racecheck bf16 rc $?" > $R/rc_racecheck ) &
( timeout 150 env LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=$PWD/python \
  python3 -m pytest -q -x -p no:cacheprovider tests/python/test_numerics.py -k "many_tiles or auto_small_n or cuda_strategies or matches_pytorch or large_row_offset" > $R/pytest.txt 2>&1; echo "pytest rc $?" > $R/rc_pytest ) &
wait
el tests done
cat $R/rc_*; tail -n 3 $R/table_bf16.txt $R/table_f16.txt $R/table_big.txt $R/memcheck_bf16.txt $R/racecheck_bf16.txt $R/pytest.txt | cut -c1-300
B="--device cuda --dtype bf16 --strategy fused"
for r in 1 2; do for v in gpu nocl old; do
  [ $r = 2 ] && [ $v = old ] && continue
  timeout 50 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
done; done
K2="--device cuda --dtype bf16 --strategy fused --shape 8192,2048,2048 --shape 16384,2048,1024 --shape 4096,2048,8192"
for v in gpu k1024 gpu k1024; do timeout 30 build-$v/bench/lnl-bench $K2 >> $R/bench_k2048_$v.txt 2>&1; el "k2048 $v rc $?"; done
timeout 40 env PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so python3 bench/cuda/fold_fallback.py > $R/fold_fallback_gpu.txt 2>&1; el "fold_fallback rc $?"
cat $R/fold_fallback_gpu.txt
for f in $R/bench_*.txt; do echo "== $f"; grep "^cuda" $f | awk '{print $3,$4,$5,$6}'; done
cd $OUT && tar czf all.tgz c3 && rm -rf c3
