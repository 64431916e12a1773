#!/usr/bin/env bash
# Session 20, call 1 (branch s20-probe = s20-uniform-cw + a timing-only probe). Three builds:
#   old    -DLNL_SM90_UNIFORM_CW=0  main's SASS (cw = wg - 1)
#   ucw    the branch's default     cw through a shuffle: wgmma descriptors in uniform registers
#   noredo ucw + -DLNL_SM90_PROBE_NO_REDO=1: the idle transform-form launch skipped (wrong
#          only for off-centre rows, which lnl-bench's data does not have): what it costs
# bf16 FUSED forward, three rounds in turn; then ucw's quick bf16/f16 tables and sanitizers
# on one in-kernel-statistics and one split-statistics shape.
# Run from the snapshot root: `bash docs/results/cuda/2026-12-02-session20/call1-ucw/call1.sh`.
. tests/gpu/ab.sh && ab_init c1
R=$PWD/res-c1 && rm -rf "$R" && mkdir -p "$R" # outside $OUT: packed after every step
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/c1.tgz" -C "$PWD" res-c1; }
AB_JOBS=6 ab_build old . "-DLNL_SM90_UNIFORM_CW=0" lnl-bench &
AB_JOBS=6 ab_build ucw . "" lnl-bench test_table &
AB_JOBS=4 ab_build noredo . "-DLNL_SM90_PROBE_NO_REDO=1" lnl-bench &
wait
ab_el builds
ab_smoke ucw 30 "--dtype bf16 --strategy fused" 32768,4096,256 8192,1024,1024 || { pk; exit 1; }
pk
AB_BENCH_LIMIT=90 ab_bench 3 "old ucw noredo" "--dtype bf16 --strategy fused" 4096,768,768 \
    8192,1024,1024 8192,768,3072 8192,4096,4096 32768,4096,256 16384,2048,128
ab_el bench
pk
ab_quick ucw 110 bf16 f16
ab_el quick
pk
AB_SAN_LIMIT=100 ab_sanitize ucw bf16 12800,200,136 4224,200,520
ab_el "all done"
pk
