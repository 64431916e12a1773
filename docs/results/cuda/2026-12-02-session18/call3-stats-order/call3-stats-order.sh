#!/usr/bin/env bash
# Session 18, call 3 (branch s18-stats-order): FORM_FOLD_STATS's statistics after the
# previous stage's release (-DLNL_SM90_STATS_AFTER_RELEASE=1, the branch's default) against
# before it (=0, main's order). Calls 1-2's probes: the loads cost nothing, the arithmetic
# all of it; released after the arithmetic, each stage reached the producer ~150
# instructions late. Snapshot as in session 17's README; `cd .snap && ./call3-stats-order.sh`.
cd "$(dirname "$0")" || exit 2
. tests/gpu/ab.sh && ab_init order
ab_build before . "-DLNL_SM90_STATS_AFTER_RELEASE=0" lnl-bench &
ab_build after . "" lnl-bench test_table &
wait
ab_el builds
ab_smoke after 30 "--dtype bf16 --strategy fused" 32768,4096,256 16384,8192,1024 || { ab_pack; exit 1; }
ab_bench 3 "before after" "--dtype bf16 --strategy fused" 32768,4096,256 65536,1024,256 \
    12800,4096,256 16384,2048,128 16384,8192,1024
ab_el bench
ab_quick after 150 bf16
ab_el "all done"
ab_pack
