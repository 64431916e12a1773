#!/usr/bin/env bash
# session 6 call 1: correctness of the new forward/backward pieces, then A/B timings
cd "$(dirname "$0")"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON ${3:+-DCMAKE_CUDA_FLAGS=$3} > "$2.cfg.log" 2>&1; }
( cfg . build-gpu && cmake --build build-gpu -j 8 > $OUT/build_new.log 2>&1; echo "new rc $?" ) &
( cfg old build-old && cmake --build build-old -j 3 --target lnlinear lnl-bench > $OUT/build_old.log 2>&1; echo "old rc $?" ) &
( cfg . build-nopdl -DLNL_PDL=0 && cmake --build build-nopdl -j 3 --target lnlinear lnl-bench > $OUT/build_nopdl.log 2>&1; echo "nopdl rc $?" ) &
( cfg . build-s1 -DLNL_SM90_STATS_ALL_N=0 && cmake --build build-s1 -j 2 --target lnlinear lnl-bench > $OUT/build_s1.log 2>&1; echo "s1 rc $?" ) &
wait
el builds done
T=build-gpu/tests/test_table
timeout 200 $T --device cuda --dtype bf16 > $OUT/table_bf16.txt 2>&1; echo "table bf16 rc $?" > $OUT/rc_table_bf16 &
timeout 200 $T --device cuda --dtype f16 --quick > $OUT/table_f16.txt 2>&1; echo "table f16 rc $?" > $OUT/rc_table_f16 &
timeout 220 compute-sanitizer --tool memcheck --error-exitcode 99 $T --device cuda --quick --dtype bf16 > $OUT/memcheck_bf16.txt 2>&1; echo "memcheck bf16 rc $?" > $OUT/rc_memcheck &
timeout 220 env LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=$PWD/python \
  python3 -m pytest -q -x -p no:cacheprovider tests/python/test_numerics.py -k "many_tiles or dw_from_x or auto_small_n or cuda_strategies or matches_pytorch" > $OUT/pytest.txt 2>&1; echo "pytest rc $?" > $OUT/rc_pytest &
wait
el tests done
cat $OUT/rc_*; tail -n 2 $OUT/table_bf16.txt $OUT/table_f16.txt $OUT/memcheck_bf16.txt $OUT/pytest.txt
B="--device cuda --dtype bf16"
for r in 1 2; do
  for v in gpu old; do
    timeout 100 build-$v/bench/lnl-bench $B --json $OUT/bench_${v}_$r.json > $OUT/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
  done
  for v in nopdl s1; do
    [ $r = 1 ] || continue
    timeout 100 build-$v/bench/lnl-bench $B --strategy fused --strategy auto --json $OUT/bench_${v}_$r.json > $OUT/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
  done
done
timeout 90 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so --shapes 32768,4096,256 8192,4096,4096 --dtypes bf16 --strategies fused auto > $OUT/profile.txt 2>&1; el "profile rc $?"
grep -h "fused\|auto" $OUT/bench_gpu_1.txt | head -40
