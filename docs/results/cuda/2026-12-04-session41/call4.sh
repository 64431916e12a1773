#!/usr/bin/env bash
# Session 41, call 4: the proof of main at d5c18ba (tests/gpu/run.sh without lnl-bench),
# then, in what is left of the call, the kernel times of f16's scale after d5c18ba's
# atomics change (torch.profiler on run.sh's build, PDL on).
T0=$(date +%s)
LNL_GPU_BENCH=0 bash tests/gpu/run.sh > "$OUT/run_sh.txt" 2>&1
echo "run.sh rc $? in $(($(date +%s) - T0)) s"; tail -25 "$OUT/run_sh.txt"
left=$((580 - ($(date +%s) - T0)))
if [ $left -gt 30 ]; then
  timeout $left python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so \
      --shapes 32768,4096,256 65536,1024,256 --dtypes f16 --strategies auto unfused --iters 5 > "$OUT/profile.txt" 2>&1
  echo "profile rc $?"
  grep -E "lnlinear|row_terms|dy_absmax" "$OUT/profile.txt"
fi
