#!/usr/bin/env bash
# Session 37, call 3: where float32's FUSED forward (the epilogue form on cuBLAS's fp32 GEMM,
# f32_fold.cu) beats UNFUSED. Every lnl-bench run since session 15 has it 3-4% faster at
# 32768,4096,256, where AUTO takes UNFUSED (call 2: 1.130 vs 1.170x the GEMM, medians of
# three). lnl-bench f32, every strategy, three rounds, at N <= 512 shapes of several M and K,
# on main's build.
# device call: `bash docs/results/cuda/2026-12-04-session37/call3.sh`
. tests/gpu/ab.sh && ab_init s37c3 # results in $R ($OUT/s37c3)
AB_JOBS=16 ab_build n . "" lnl-bench || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
AB_BENCH_LIMIT=150 ab_bench 3 "n" "--dtype f32" 32768,4096,256 65536,1024,256 16384,2048,128 \
    12800,4096,256 8192,4096,256 32768,1024,128 16384,4096,512 32768,2048,512 4096,4096,256 \
    8192,8192,256 16384,1024,1024
ab_el done
ab_pack
