#!/usr/bin/env bash
# Session 40, call 3: the dx epilogue after call 2's profile. The GEMM kernel takes whole
# tiles without bounds tests (and no longer spills); W^T moves in 16-byte chunks through
# a swizzled 64 x 64 tile; {c, f} come from a block a row of W; the rows' values load {c, f}
# 16 bytes at a time; dgamma/dbeta's loop has its fallback test hoisted. First the C test
# table's rows that take the path (bf16, N < K past the tiny class; the table now also
# runs lnl_backward_ex with the forward's y), memcheck on two of them, then kernel tables
# (-DLNL_PDL=0 build) and lnl-bench A/B.
. tests/gpu/ab.sh && ab_init call3
ab_build new . "" lnl-bench test_table & ab_build nopdl . "-DLNL_PDL=0" lnlinear & wait
ab_el built
mkdir -p build-old/bench && ln -sf "$PWD/build-new/bench/lnl-bench" build-old/bench/lnl-bench-real
printf '#!/usr/bin/env bash\nLNL_CUDA_DX_EPILOGUE=0 exec "$(dirname "$0")/lnl-bench-real" "$@"\n' > build-old/bench/lnl-bench
chmod +x build-old/bench/lnl-bench
ab_smoke new 60 "--dtype bf16 --strategy fused" 1000,1032,200 4224,2056,72 || { ab_pack; exit 1; }
for s in 12800,200,136 4224,1024,520 130,2056,264 260,8200,136 130,4104,264 700,4104,16 700,2056,16; do
  timeout 120 build-new/tests/test_table --device cuda --dtype bf16 --shape $s > "$R/table_$s.txt" 2>&1
  echo "table bf16 $s rc $?: $(tail -1 "$R/table_$s.txt")"
done
ab_el tables
for s in 700,2056,16 130,2056,264; do
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --dtype bf16 --shape $s > "$R/memcheck_$s.txt" 2>&1
  echo "memcheck $s rc $?: $(grep -E 'passed|ERROR SUMMARY' "$R/memcheck_$s.txt" | paste -sd' ' | cut -c1-200)"
done
ab_el memcheck
LNL_CUDA_DX_EPILOGUE=1 timeout 150 python3 bench/cuda/profile_cuda.py --lib build-nopdl/liblnlinear.so \
    --shapes 16384,8192,1024 8192,4096,1024 32768,4096,256 65536,1024,256 --dtypes bf16 --strategies auto \
    --iters 5 > "$R/profile_epi1.txt" 2>&1
grep -v "^ *$" "$R/profile_epi1.txt" | grep -v -i "warn" | grep -A9 "lnlinear auto"
ab_el profiled
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024 8192,4096,1024 65536,1024,256
ab_el done
ab_pack
