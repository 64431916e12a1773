#!/usr/bin/env bash
# Session 19, call 4 (branch s19-stats-loads): FORM_FOLD_STATS's slice loads issued between
# the slice's wgmma issue and the wait for the previous group (-DLNL_SM90_STATS_EARLY_LOADS=1,
# the branch's default) against right before their sums (=0, main's order). Call 3's ncu
# source counters put ~13% of the kernel's warp samples on the loads' first use (short
# scoreboard) at 32768,4096,256. Snapshot as call 1's; `cd .snap && ./call4.sh`.
cd "$(dirname "$0")" || exit 2
. tests/gpu/ab.sh && ab_init c4
R=$PWD/res-c4 && rm -rf "$R" && mkdir -p "$R" # outside $OUT: packed after every step
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/c4.tgz" -C "$PWD" res-c4; }
AB_JOBS=8 ab_build late . "-DLNL_SM90_STATS_EARLY_LOADS=0" lnl-bench &
AB_JOBS=8 ab_build early . "" lnl-bench test_table &
wait
ab_el builds
ab_smoke early 30 "--dtype bf16 --strategy fused" 32768,4096,256 || { pk; exit 1; }
pk
AB_BENCH_LIMIT=60 ab_bench 3 "late early" "--dtype bf16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,256 16384,2048,128
ab_el bench
pk
ab_quick early 110 bf16
ab_el "all done"
pk
