#!/usr/bin/env bash
# Session 38, call 5: the in-kernel statistics' end-of-tile merge of a row's 8 threads by
# plain sums (branch s38-plain-sums, -DLNL_SM90_ROW_MERGE=1). Call 4's Nsight Compute put
# 7.4% of the split kernel's samples at 8192,1024,1024 in the three Chan levels (a division
# each) that merge the 8 threads' (count, mean, M2); the threads share the row's shift, so
# their shifted sums simply add (the STATS kernel: 5400 -> 4888 SASS instructions; the host
# model with plain sums passes test_split_stats_host's 6720 checks, worst rstd error the
# same 1.34e-6). Builds: c (=0, SASS identical to main's) and s (=1). Correctness of s first
# (the statistics rows of the test table, every dtype; the Python statistics tests), then
# FUSED forward, c and s in turn, three rounds: N = 256 / 128 (one column of tiles) and
# split shapes.
# device call: `bash docs/results/cuda/2026-12-04-session38/call5.sh`
. tests/gpu/ab.sh && ab_init s38c5
AB_JOBS=8 ab_build c . "-DLNL_SM90_ROW_MERGE=0" lnl-bench lnlinear &
AB_JOBS=8 ab_build s . "-DLNL_SM90_ROW_MERGE=1" lnl-bench test_table lnlinear & wait
for v in c s; do [ -x build-$v/bench/lnl-bench ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_el built
ab_smoke s 60 "--dtype bf16 --strategy fused" 32768,4096,256 16384,8192,1024 || { ab_pack; exit 1; }
ROWS="12800,200,136 12800,72,100 12800,72,136 4224,200,520 3200,72,1000 12800,200,1000 1664,72,1990 2200,200,1990 4200,264,1300"
# shellcheck disable=SC2086
( ab_tables s 90 $ROWS ) >"$R/t_s.out" &
( ab_pytest s 240 "stats_inside or many_tiles or folded_weight" ) >"$R/py_s.out" &
wait
cat "$R/t_s.out" "$R/py_s.out"
ab_el correctness
AB_BENCH_LIMIT=90 ab_bench 3 "c s" "--dtype bf16 --strategy fused" 32768,4096,256 65536,1024,256 \
    12800,4096,256 16384,2048,128 16384,8192,1024 12800,4096,768 8192,4096,2048
AB_BENCH_LIMIT=60 ab_bench 2 "c s" "--dtype f16 --strategy fused" 32768,4096,256 16384,8192,1024
ab_el done
ab_pack
