#!/usr/bin/env bash
# Session 22, call 1: the ping-pong epilogue form (branch s22-pingpong, -DLNL_SM90_PINGPONG=1)
# with its main loops taking turns. Session 22's first run of session 21's version
# (next-pingpong.sh in ../2026-12-02-session21) failed with an unspecified launch failure
# wherever K > 2 * 4 * 64: the second warpgroup waited on full barriers KT / S phases ahead
# of the ring. Run from a snapshot of the branch in .snap (carry [".snap"]):
#   cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session22/call1.sh
. tests/gpu/ab.sh && ab_init pp
R=$PWD/res-pp && rm -rf "$R" && mkdir -p "$R" # outside $OUT: packed after every step
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/pp.tgz" -C "$PWD" res-pp; }
AB_JOBS=8 ab_build main . "" lnl-bench &
AB_JOBS=8 ab_build pp . "-DLNL_SM90_PINGPONG=1" lnl-bench test_table lnlinear &
wait
ab_el builds
ab_smoke pp 30 "--dtype bf16 --strategy fused" 4224,1032,520 8192,1024,1024 8192,4096,4096 \
    8448,136,520 || { pk; exit 1; }
pk
ab_tables pp 120 4224,1032,520 8448,136,520 129,768,257
ab_quick pp 150 bf16 f16
ab_el tables
pk
AB_BENCH_LIMIT=120 ab_bench 3 "main pp" "--dtype bf16 --strategy fused" 8192,1024,1024 \
    8192,768,3072 8192,4096,4096 8192,4096,12288 4096,768,768 16384,8192,1024
ab_el bench
pk
AB_SAN_LIMIT=150 ab_sanitize pp bf16 4224,1032,520 129,768,257
ab_pytest pp 240 "many_tiles or folded_weight_overflow or cuda_strategies"
ab_el "all done"
pk
