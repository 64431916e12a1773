#!/usr/bin/env bash
# Session 20, call 2 (branch s20-tc-rowsum). FORM_FOLD_STATS's row sums from the tensor
# cores (a 64x8 wgmma of each x slice against a ones tile), the squares alone on the CUDA
# cores. Three builds of the branch:
#   off   -DLNL_SM90_TC_ROWSUM=0 -DLNL_SM90_UNIFORM_CW=0  main's kernel
#   tcs   -DLNL_SM90_UNIFORM_CW=0                         the row sums only
#   both  (defaults)                                      row sums + cw through a shuffle
# SASS (ln_gemm_fwd_sm90<bf16, 256, 2>): the slice loop's path ~255 instructions in off,
# ~235 in tcs, ~206 in both; no spill inside the loop in any.
# Run from the snapshot root: `bash docs/results/cuda/2026-12-02-session20/call2-tc-rowsum/call2.sh`.
. tests/gpu/ab.sh && ab_init c2
R=$PWD/res-c2 && rm -rf "$R" && mkdir -p "$R" # outside $OUT: packed after every step
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/c2.tgz" -C "$PWD" res-c2; }
AB_JOBS=5 ab_build off . "-DLNL_SM90_TC_ROWSUM=0 -DLNL_SM90_UNIFORM_CW=0" lnl-bench &
AB_JOBS=5 ab_build tcs . "-DLNL_SM90_UNIFORM_CW=0" lnl-bench test_table &
AB_JOBS=6 ab_build both . "" lnl-bench test_table &
wait
ab_el builds
ab_smoke both 30 "--dtype bf16 --strategy fused" 32768,4096,256 16384,8192,1024 || { pk; exit 1; }
ab_smoke tcs 30 "--dtype bf16 --strategy fused" 32768,4096,256 || { pk; exit 1; }
pk
ab_quick both 110 bf16
ab_quick tcs 110 bf16
ab_el quick
pk
AB_BENCH_LIMIT=90 ab_bench 3 "off tcs both" "--dtype bf16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,256 16384,2048,128 16384,8192,1024
ab_el bench
pk
ab_quick both 110 f16
AB_SAN_LIMIT=100 ab_sanitize both bf16 12800,200,136 4224,200,520
ab_el "all done"
pk
