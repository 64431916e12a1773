#!/usr/bin/env bash
# Session 45's device script, call 2 of 2 (after call 1, on the same warm machine; it
# builds again if build-new is gone): the dx epilogue kernel's time in its four forms, XS /
# XS3 (LNL_CUDA_DX_FORM=1 / 2) without and with clusters (LNL_CUDA_DX_CLUSTER), taken in
# turn: the profiler's kernel times at N = 128 to 1024, then lnl-bench rounds (AUTO's
# backward runs the dx epilogue where N <= K / 4).
. tests/gpu/ab.sh && ab_init s45c2
[ -x build-new/bench/lnl-bench ] || ab_build new . "" lnl-bench lnlinear || { ab_pack; exit 1; }
VARIANTS="xs:LNL_CUDA_DX_FORM=1,LNL_CUDA_DX_CLUSTER=0 xs3:LNL_CUDA_DX_FORM=2,LNL_CUDA_DX_CLUSTER=0 xscl:LNL_CUDA_DX_FORM=1,LNL_CUDA_DX_CLUSTER=1 xs3cl:LNL_CUDA_DX_FORM=2,LNL_CUDA_DX_CLUSTER=1"
for r in 1 2; do
  for v in $VARIANTS; do
    name=${v%%:*}; settings=${v#*:}
    env ${settings//,/ } timeout 90 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
        --shapes 32768,4096,256 65536,1024,256 12800,4096,256 32768,4096,128 32768,4096,512 16384,8192,1024 \
        --dtypes bf16 --strategies auto --iters 5 >"$R/profile_${name}_r$r.txt" 2>&1
    echo "profile $name r$r rc $?: dx_epilogue_kernel ms $(grep dx_epilogue_kernel "$R/profile_${name}_r$r.txt" | awk '{print $1}' | paste -sd' ')"
  done
done
ab_el profiled
for r in 1 2 3; do
  for v in $VARIANTS; do
    name=${v%%:*}; settings=${v#*:}
    env ${settings//,/ } timeout 60 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto \
        --shape 32768,4096,256 --shape 65536,1024,256 --shape 16384,8192,1024 >"$R/bench_${name}_r$r.txt" 2>&1
    echo "== $name round $r rc $?"; ab_rows "$R/bench_${name}_r$r.txt"
  done
done
ab_el done
ab_pack
