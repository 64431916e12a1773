#!/usr/bin/env bash
# session 7 call 1: the one-launch fold + statistics pre-pass (working tree on 3aaf7b4)
# against 3aaf7b4 (old/): correctness, then same-run A/B timings
cd "$(dirname "$0")"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/c1
R=$OUT/c1
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > "$2.cfg.log" 2>&1; }
( cfg . build-gpu && cmake --build build-gpu -j 11 > $R/build_new.log 2>&1; echo "new rc $?" ) &
( cfg old build-old && cmake --build build-old -j 5 --target lnlinear lnl-bench > $R/build_old.log 2>&1; echo "old rc $?" ) &
wait
el builds done
grep -E "error|warning" $R/build_new.log | head
T=build-gpu/tests/test_table
( timeout 200 $T --device cuda --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 rc $?" > $R/rc_table_bf16 ) &
( timeout 200 $T --device cuda --dtype f16 > $R/table_f16.txt 2>&1; echo "table f16 rc $?" > $R/rc_table_f16 ) &
( timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $T --device cuda --quick --dtype bf16 > $R/memcheck_bf16.txt 2>&1; echo "memcheck bf16 rc $?" > $R/rc_memcheck ) &
( timeout 200 env LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=$PWD/python \
  python3 -m pytest -q -x -p no:cacheprovider tests/python/test_numerics.py -k "many_tiles or auto_small_n or cuda_strategies or matches_pytorch or large_row_offset" > $R/pytest.txt 2>&1; echo "pytest rc $?" > $R/rc_pytest ) &
wait
el tests done
cat $R/rc_*; tail -n 2 $R/table_bf16.txt $R/table_f16.txt $R/memcheck_bf16.txt $R/pytest.txt
B="--device cuda --dtype bf16 --strategy fused --strategy auto"
for r in 1 2; do
  for v in gpu old; do
    timeout 60 build-$v/bench/lnl-bench $B --json $R/bench_${v}_$r.json > $R/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
  done
done
for v in gpu old; do
  timeout 60 env PYTHONPATH=python LNLINEAR_LIBRARY=build-$v/liblnlinear.so python3 bench/cuda/fold_fallback.py > $R/fold_fallback_$v.txt 2>&1; el "fold_fallback $v rc $?"
  cat $R/fold_fallback_$v.txt
done
timeout 60 build-gpu/bench/lnl-bench --device cuda --dtype f16 --strategy fused --shape 8192,768,3072 --shape 8192,4096,4096 > $R/bench_f16_gpu.txt 2>&1; el "f16 bench rc $?"
for f in $R/bench_gpu_1.txt $R/bench_old_1.txt $R/bench_gpu_2.txt $R/bench_old_2.txt; do echo "== $f"; grep "^cuda" $f | awk '{print $2,$3,$4,$5,$6,$7,$8}'; done
cd $OUT && tar czf all.tgz c1 && rm -rf c1
