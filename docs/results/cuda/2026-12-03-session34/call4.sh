#!/usr/bin/env bash
# Session 34, call 4: does the backward's smaller workspace cost time? FUSED's backward
# (no ln_out kept: LN(x) rebuilt over dxhat in f16 and in bf16 at N >= K; dW from the raw
# x with dy' and its sums inside the M x K region in bf16 at N < K), lnl-bench, old =
# 232299f (.snap/old, carried) and new = the working tree in turn, three rounds.
# device call: `bash docs/results/cuda/2026-12-03-session34/call4.sh` (carry .snap/old)
. tests/gpu/ab.sh && ab_init s34c4 # results in $R ($OUT/s34c4)
AB_JOBS=8 ab_build old .snap/old "" lnl-bench &
AB_JOBS=8 ab_build new . "" lnl-bench &
wait
ab_el built
for v in old new; do [ -x build-$v/bench/lnl-bench ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
AB_BENCH_LIMIT=100 ab_bench 3 "old new" "--dtype f16 --strategy fused" 8192,1024,1024 8192,4096,4096 16384,8192,1024 32768,4096,256
ab_el f16
AB_BENCH_LIMIT=100 ab_bench 3 "old new" "--dtype bf16 --strategy fused" 8192,4096,4096 16384,8192,1024 32768,4096,256
ab_el done
ab_pack
