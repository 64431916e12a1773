#!/usr/bin/env bash
# Session 40, call 2: where the dx epilogue's backward spends its time. Call 1 had it
# faster than the old way at 32768,4096,256 but slower at 16384,8192,1024, 8192,4096,1024
# and 65536,1024,256. prep_sums_kernel and dgb_kernel now load 16 bytes a lane with
# several loads in flight (they were one 2-byte or 4-byte load a thread an iteration).
# Kernel tables from a -DLNL_PDL=0 build (with PDL, torch.profiler's durations include
# each kernel's wait for the one before: session 39, call 10), then lnl-bench A/B.
. tests/gpu/ab.sh && ab_init call2
ab_build new . "" lnl-bench & ab_build nopdl . "-DLNL_PDL=0" lnlinear & wait
ab_el built
mkdir -p build-old/bench && ln -sf "$PWD/build-new/bench/lnl-bench" build-old/bench/lnl-bench-real
printf '#!/usr/bin/env bash\nLNL_CUDA_DX_EPILOGUE=0 exec "$(dirname "$0")/lnl-bench-real" "$@"\n' > build-old/bench/lnl-bench
chmod +x build-old/bench/lnl-bench
for e in 0 1; do
  LNL_CUDA_DX_EPILOGUE=$e timeout 150 python3 bench/cuda/profile_cuda.py --lib build-nopdl/liblnlinear.so \
    --shapes 16384,8192,1024 8192,4096,1024 32768,4096,256 65536,1024,256 --dtypes bf16 --strategies auto \
    --iters 5 > "$R/profile_epi$e.txt" 2>&1
  echo "profile epi=$e rc $?"
done
grep -v "^ *$" "$R/profile_epi1.txt" | grep -iv "aten\|at::\|elementwise\|vectorized" | head -80
ab_el profiled
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024 8192,4096,1024 65536,1024,256
ab_el done
ab_pack
