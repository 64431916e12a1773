#!/usr/bin/env bash
# Session 42, call 3: the dx epilogue kernel's x block prefetched into L2 by the producer
# (one TMA prefetch a 64-column box), LNL_CUDA_DX_X_AHEAD = 0 (none, as until now), 1 (when
# the producer starts the tile's loads) or 2 (a tile earlier), timed in turn in one build;
# checks of the epilogue's rows (tables, memcheck, racecheck, Python) on the default (1).
. tests/gpu/ab.sh && ab_init s42c3
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
ab_smoke new 60 "--dtype bf16 --strategy auto" 32768,4096,256 1000,1032,200 || { ab_pack; exit 1; }
(for d in bf16 f16; do
  for s in 600,2056,16 1000,1032,200 600,2056,72 300,1032,72; do
    timeout 100 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done) &
p1=$!
ab_pytest new 200 "dx_epilogue or saved_y or dw_from_x" &
p2=$!
for s in 600,2056,16 300,1032,72; do
  f=$R/memcheck_$s.txt
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --dtype bf16 --shape $s >"$f" 2>&1
  echo "memcheck bf16 $s rc $?: $(grep -E 'passed|ERROR SUMMARY' "$f" | paste -sd' ' | cut -c1-200)"
  f=$R/racecheck_$s.txt
  timeout 200 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype f16 --shape $s >"$f" 2>&1
  echo "racecheck f16 $s rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-200)"
done
wait $p1 $p2
ab_el checked
for v in 0 1 2; do
  LNL_CUDA_DX_X_AHEAD=$v timeout 100 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
      --shapes 32768,4096,256 16384,8192,1024 8192,4096,1024 --dtypes bf16 --strategies auto \
      --iters 5 >"$R/profile_x$v.txt" 2>&1
  echo "profile x_ahead $v rc $?: $(grep dx_epilogue_kernel "$R/profile_x$v.txt" | awk '{print $1}' | paste -sd' ')"
done
ab_el profiled
SH="--shape 32768,4096,256 --shape 16384,8192,1024 --shape 8192,4096,1024 --shape 65536,1024,256 --shape 16384,4096,1024"
for r in 1 2 3; do
  for v in 0 1 2; do
    LNL_CUDA_DX_X_AHEAD=$v timeout 120 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto $SH >"$R/bench_x${v}_r$r.txt" 2>&1
    echo "== bf16 x_ahead $v round $r rc $?"; ab_rows "$R/bench_x${v}_r$r.txt"
  done
done
for r in 1 2; do
  for v in 0 1 2; do
    LNL_CUDA_DX_X_AHEAD=$v timeout 120 build-new/bench/lnl-bench --device cuda --dtype f16 --strategy auto --shape 32768,4096,256 --shape 16384,8192,1024 --shape 8192,4096,1024 >"$R/bench16_x${v}_r$r.txt" 2>&1
    echo "== f16 x_ahead $v round $r rc $?"; ab_rows "$R/bench16_x${v}_r$r.txt"
  done
done
ab_el done
ab_pack
