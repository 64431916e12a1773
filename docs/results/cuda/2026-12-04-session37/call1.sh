#!/usr/bin/env bash
# Session 37, call 1: the in-kernel statistics of centred rows (LNL_SM90_STATS_FAST,
# fused_forward_sm90.cu). Session 18's probes put the N = 256 forward's statistics cost in
# the sums' arithmetic, ~4 instructions an element (unpack, subtract the shift, add, FMA).
# A warp whose rows are centred (|shift| <= 4 std of the first slice) now sums x^2 unshifted;
# the sums of x come from the ALU (f1, three instructions an element) or from a ones-column
# wgmma m64n8k16 (f2, two). Builds of the working tree:
#   f0 = -DLNL_SM90_STATS_FAST=0 (shifted sums everywhere, as session 36 shipped);
#   f1 = -DLNL_SM90_STATS_FAST=1; f2 = the default (2).
# FUSED forward, bf16 three rounds in turn and f16 two, at N = 256 / 128 (one column of
# tiles) and two split-statistics shapes; then the statistics rows of the test table (every
# dtype) for f1 and f2, the sanitizers on f2's quick rows of that path, and the Python
# stats_inside tests (late_offset: the unshifted sums' worst cancellation) on f1 and f2.
# device call: `bash docs/results/cuda/2026-12-04-session37/call1.sh`
. tests/gpu/ab.sh && ab_init s37c1 # results in $R ($OUT/s37c1)
for v in 0 1 2; do
    AB_JOBS=5 ab_build f$v . "-DLNL_SM90_STATS_FAST=$v" lnlinear lnl-bench test_table &
done
wait
for v in 0 1 2; do [ -x build-f$v/tests/test_table ] || { tail -5 "$R/build_f$v.log"; ab_pack; exit 1; }; done
ab_el built
ab_smoke f2 30 "--dtype bf16 --strategy fused" 32768,4096,256 12800,4096,768 || { ab_pack; exit 1; }
ab_smoke f1 30 "--dtype bf16 --strategy fused" 32768,4096,256 || { ab_pack; exit 1; }
ab_el smoke
AB_BENCH_LIMIT=40 ab_bench 3 "f0 f1 f2" "--dtype bf16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,256 16384,2048,128 16384,8192,1024 12800,4096,768
AB_BENCH_LIMIT=40 ab_bench 2 "f0 f1 f2" "--dtype f16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,768
ab_el bench
ROWS="12800,200,136 12800,72,100 12800,72,136 4224,200,520 3200,72,1000 12800,200,1000 1664,72,1990 2200,200,1990 4200,264,1300"
# shellcheck disable=SC2086
( ab_tables f2 60 $ROWS ) >"$R/t_f2.out" &
# shellcheck disable=SC2086
( ab_tables f1 60 $ROWS ) >"$R/t_f1.out" &
( AB_SAN_LIMIT=150 ab_sanitize f2 bf16 12800,72,136 3200,72,1000 ) >"$R/san_f2.out" &
wait
( ab_pytest f2 200 "stats_inside or split_stats" ) >"$R/py_f2.out"
( ab_pytest f1 200 "stats_inside or split_stats" ) >"$R/py_f1.out"
cat "$R/t_f2.out" "$R/t_f1.out" "$R/san_f2.out" "$R/py_f2.out" "$R/py_f1.out"
ab_el done
ab_pack
