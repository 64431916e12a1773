#!/usr/bin/env bash
# Session 43, call 1 (session 42's next-dx-xs.sh, with host_breakdown.py at the end), on
# branch s42-dx-pingpong at 1ae21b0. The dx epilogue kernel's x through shared memory
# (LNL_CUDA_DX_PINGPONG=2: TMA loads of each warpgroup's x tile, ldmatrix, dx in place by
# stmatrix, TMA store from there) against the cooperative form (0) and plain ping-pong (1).
# Checks first (a hang shows as rc 124 in the smoke), then ncu's view of the cooperative
# kernel's epilogue (L1 wavefronts of its x loads), then kernel times and lnl-bench rounds.
. tests/gpu/ab.sh && ab_init next_xs
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
export LNL_CUDA_DX_PINGPONG=2
ab_smoke new 40 "--dtype bf16 --strategy auto" 1000,1032,200 32768,4096,256 || { ab_pack; exit 1; }
for d in bf16 f16; do
  for s in 600,2056,16 1000,1032,200 600,2056,72 300,1032,72; do
    timeout 60 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table XS $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done
for tool in memcheck synccheck; do
  f=$R/${tool}.txt
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda --dtype bf16 --shape 300,1032,72 >"$f" 2>&1
  echo "$tool XS rc $?: $(grep -E 'passed|ERROR SUMMARY' "$f" | paste -sd' ' | cut -c1-160)"
done
f=$R/racecheck.txt
timeout 150 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype f16 --shape 1000,1032,200 >"$f" 2>&1
echo "racecheck XS rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-200)"
LNL_CUDA_DX_PINGPONG=0 timeout 200 ncu --kernel-name regex:dx_epilogue_kernel --launch-count 1 \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    python3 "$(ab_target new 32768,4096,256 bf16 auto)" >"$R/ncu_coop.txt" 2>&1
echo "ncu rc $?"; grep -E "L1/TEX Hit|Mem Busy|Max Bandwidth|Stall|Warp Cycles" "$R/ncu_coop.txt" | head -20
for v in 0 1 2; do
  LNL_CUDA_DX_PINGPONG=$v timeout 60 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
      --shapes 32768,4096,256 16384,8192,1024 8192,4096,1024 --dtypes bf16 --strategies auto \
      --iters 5 >"$R/profile_pp$v.txt" 2>&1
  echo "profile form $v: dx_epilogue_kernel ms $(grep dx_epilogue_kernel "$R/profile_pp$v.txt" | awk '{print $1}' | paste -sd' ')"
done
for r in 1 2 3; do
  for v in 0 2; do
    LNL_CUDA_DX_PINGPONG=$v timeout 60 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto \
        --shape 32768,4096,256 --shape 16384,8192,1024 --shape 8192,4096,1024 --shape 65536,1024,256 \
        >"$R/bench_form${v}_r$r.txt" 2>&1
    echo "== form $v round $r rc $?"; ab_rows "$R/bench_form${v}_r$r.txt"
  done
done
for d in bf16; do
  LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so PYTHONPATH=python timeout 120 python3 bench/cuda/host_breakdown.py \
      --dtype $d --shape 4096,768,768 >"$R/host_breakdown_$d.txt" 2>&1
  echo "host_breakdown $d rc $?"; head -12 "$R/host_breakdown_$d.txt"
done
ab_el done
ab_pack
