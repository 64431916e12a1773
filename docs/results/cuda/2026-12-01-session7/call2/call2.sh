#!/usr/bin/env bash
# session 7 call 2: the one-launch fold + statistics pre-pass, second version (block
# flags, 16 chunks a lane at most), against 3aaf7b4 (old/)
cd "$(dirname "$0")"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c2; mkdir -p $R
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > "$2.cfg.log" 2>&1; }
( cfg . build-gpu && cmake --build build-gpu -j 11 > $R/build_new.log 2>&1; echo "new rc $?" ) &
( cfg old build-old && cmake --build build-old -j 5 --target lnlinear lnl-bench > $R/build_old.log 2>&1; echo "old rc $?" ) &
wait
el builds done
T=build-gpu/tests/test_table
( timeout 200 $T --device cuda --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 rc $?" > $R/rc_table_bf16 ) &
( timeout 200 $T --device cuda --dtype f16 > $R/table_f16.txt 2>&1; echo "table f16 rc $?" > $R/rc_table_f16 ) &
( timeout 200 $T --device cuda --big > $R/table_big.txt 2>&1; echo "table big rc $?" > $R/rc_table_big ) &
( timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $T --device cuda --quick --dtype bf16 > $R/memcheck_bf16.txt 2>&1; echo "memcheck bf16 rc $?" > $R/rc_memcheck ) &
( timeout 200 env LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=$PWD/python \
  python3 -m pytest -q -x -p no:cacheprovider tests/python/test_numerics.py -k "many_tiles or auto_small_n or cuda_strategies or matches_pytorch or large_row_offset" > $R/pytest.txt 2>&1; echo "pytest rc $?" > $R/rc_pytest ) &
wait
el tests done
cat $R/rc_*; tail -n 2 $R/table_bf16.txt $R/table_f16.txt $R/table_big.txt $R/memcheck_bf16.txt $R/pytest.txt
B="--device cuda --dtype bf16 --strategy fused"
for r in 1 2; do
  for v in gpu old; do
    timeout 60 build-$v/bench/lnl-bench $B --json $R/bench_${v}_$r.json > $R/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
  done
done
for r in 1 2; do for v in gpu old; do
  timeout 60 env PYTHONPATH=python LNLINEAR_LIBRARY=build-$v/liblnlinear.so python3 bench/cuda/fold_fallback.py > $R/fold_fallback_${v}_$r.txt 2>&1; el "fold_fallback $v $r rc $?"
done; done
timeout 90 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so --shapes 8192,768,3072 8192,4096,4096 16384,8192,1024 --dtypes bf16 --strategies fused > $R/profile_new.txt 2>&1; el "profile new rc $?"
timeout 90 python3 bench/cuda/profile_cuda.py --lib build-old/liblnlinear.so --shapes 8192,768,3072 8192,4096,4096 16384,8192,1024 --dtypes bf16 --strategies fused > $R/profile_old.txt 2>&1; el "profile old rc $?"
for f in $R/fold_fallback_*; do echo "== $f"; cat $f; done
for f in $R/bench_gpu_1.txt $R/bench_old_1.txt $R/bench_gpu_2.txt $R/bench_old_2.txt; do echo "== $f"; grep "^cuda" $f | awk '{print $3,$4,$5,$6}'; done
grep -E "fold|ln_fwd|stats|prep|sm90|pass" $R/profile_new.txt | head -40
cd $OUT && tar czf all.tgz c2 && rm -rf c2
