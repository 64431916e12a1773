#!/usr/bin/env bash
# Session 42, call 6 (branch s42-dx-pingpong): the dx epilogue kernel's ping-pong form
# (LNL_CUDA_DX_PINGPONG=1) against the cooperative one in one build. The session's last
# ~280 s of device time: checks first (hang smoke, the epilogue's table rows, memcheck and
# racecheck on one row), then kernel times and lnl-bench rounds while time lasts.
. tests/gpu/ab.sh && ab_init s42c6
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
export LNL_CUDA_DX_PINGPONG=1
ab_smoke new 40 "--dtype bf16 --strategy auto" 1000,1032,200 32768,4096,256 || { ab_pack; exit 1; }
for d in bf16 f16; do
  for s in 600,2056,16 1000,1032,200 300,1032,72; do
    timeout 60 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table PP $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done
f=$R/memcheck.txt
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --dtype bf16 --shape 300,1032,72 >"$f" 2>&1
echo "memcheck PP bf16 300,1032,72 rc $?: $(grep -E 'passed|ERROR SUMMARY' "$f" | paste -sd' ' | cut -c1-160)"
f=$R/racecheck.txt
timeout 90 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype bf16 --shape 1000,1032,200 >"$f" 2>&1
echo "racecheck PP bf16 1000,1032,200 rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-200)"
ab_el checked
for v in 0 1; do
  LNL_CUDA_DX_PINGPONG=$v timeout 60 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
      --shapes 32768,4096,256 16384,8192,1024 8192,4096,1024 --dtypes bf16 --strategies auto \
      --iters 5 >"$R/profile_pp$v.txt" 2>&1
  echo "profile pp $v rc $?: dx_epilogue_kernel ms $(grep dx_epilogue_kernel "$R/profile_pp$v.txt" | awk '{print $1}' | paste -sd' ')"
done
ab_el profiled
for r in 1 2; do
  for v in 0 1; do
    [ $(($(date +%s) - AB_T0)) -gt 190 ] && break 2
    LNL_CUDA_DX_PINGPONG=$v timeout 40 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto --shape 32768,4096,256 --shape 16384,8192,1024 --shape 8192,4096,1024 >"$R/bench_pp${v}_r$r.txt" 2>&1
    echo "== pp $v round $r rc $?"; ab_rows "$R/bench_pp${v}_r$r.txt"
  done
done
ab_el done
ab_pack
