#!/usr/bin/env bash
# Session 36, call 5: the in-kernel statistics' loads and sums placed elsewhere in the
# main loop (LNL_SM90_STATS_PIPE, fused_forward_sm90.cu). Call 4 found the N = 256 kernel
# ~35% slower with the sums than without (ncu 165.7 vs 122.9 us; cuBLAS 120.8), its top
# stall a long-scoreboard wait right after the slice's shared-memory loads, issued behind
# the wgmma group's own shared-memory reads. Builds of the working tree:
#   p0 = as shipped (loads after the group's issue, sums after the previous group's wait);
#   p1 = loads before the group's issue;
#   p2 = sums one slice later, right after the next group's issue.
# FUSED bf16 forward, three rounds in turn, at N = 256 / 128 (one column of tiles) and two
# split-statistics shapes; then the test table's rows of both statistics paths (every
# dtype) for p1 and p2, the sanitizers on p2's quick rows of that path, and the Python
# stats_inside tests on p2.
# device call: `bash docs/results/cuda/2026-12-04-session36/call5.sh`
. tests/gpu/ab.sh && ab_init s36c5 # results in $R ($OUT/s36c5)
for v in 0 1 2; do
    AB_JOBS=5 ab_build p$v . "-DLNL_SM90_STATS_PIPE=$v" lnlinear lnl-bench test_table &
done
wait
for v in 0 1 2; do [ -x build-p$v/tests/test_table ] || { tail -5 "$R/build_p$v.log"; ab_pack; exit 1; }; done
ab_el built
ab_smoke p2 30 "--dtype bf16 --strategy fused" 32768,4096,256 12800,4096,768 || { ab_pack; exit 1; }
ab_smoke p1 30 "--dtype bf16 --strategy fused" 32768,4096,256 || { ab_pack; exit 1; }
ab_el smoke
AB_BENCH_LIMIT=40 ab_bench 3 "p0 p1 p2" "--dtype bf16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,256 16384,2048,128 16384,8192,1024 12800,4096,768
ab_el bench
ROWS="12800,200,136 12800,72,100 12800,72,136 4224,200,520 3200,72,1000 12800,200,1000 1664,72,1990 2200,200,1990 4200,264,1300"
# shellcheck disable=SC2086
( ab_tables p2 60 $ROWS ) >"$R/t_p2.out" &
# shellcheck disable=SC2086
( ab_tables p1 60 $ROWS ) >"$R/t_p1.out" &
( AB_SAN_LIMIT=150 ab_sanitize p2 bf16 12800,72,136 3200,72,1000 ) >"$R/san_p2.out" &
( ab_pytest p2 150 "stats_inside or split_stats" ) >"$R/py_p2.out" &
wait
cat "$R/t_p2.out" "$R/t_p1.out" "$R/san_p2.out" "$R/py_p2.out"
ab_el done
ab_pack
