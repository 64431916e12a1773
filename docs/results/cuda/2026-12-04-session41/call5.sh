#!/usr/bin/env bash
# Session 41, call 5: main at d5c18ba (the atomics of f16's scale word only where a value
# is above the word; run.sh passed on it in call 4) against main at 1e05520, f16 lnl-bench
# rounds in turn: AUTO (the dx epilogue, its scale from the rows' pass) and UNFUSED (dW
# from the raw x, its scale from a pass of its own).
. tests/gpu/ab.sh && ab_init call5
ab_build new . "" lnl-bench & ab_build old ab-old "" lnl-bench & wait
ab_el built
AB_BENCH_LIMIT=60 ab_bench 2 "old new" "--dtype f16 --strategy auto" 32768,4096,256 65536,1024,256 16384,8192,1024 8192,4096,1024
AB_BENCH_LIMIT=60 ab_bench 2 "old new" "--dtype f16 --strategy unfused" 32768,4096,256 16384,8192,1024
ab_el done
ab_pack
