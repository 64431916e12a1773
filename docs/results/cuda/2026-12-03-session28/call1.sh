#!/usr/bin/env bash
# Session 28, call 1: FUSED's backward without ln_out takes the rebuild of LN(x) for cuBLAS
# where N >= K (as UNFUSED's and AUTO's do), instead of dW from the raw x (bf16, float32) or
# the mma.sync dW kernel (f16). old = a9820aa (.snap/old, carried), new = the working tree.
# Correctness of the new build first (quick tables of the three dtypes, the Python tests of
# dW's paths), then lnl-bench FUSED old/new in turn, then a kernel profile of the new.
# device call: `bash docs/results/cuda/2026-12-03-session28/call1.sh`
. tests/gpu/ab.sh && ab_init s28c1
AB_JOBS=8 ab_build old .snap/old "" lnl-bench &
AB_JOBS=8 ab_build new . "" lnl-bench test_table lnlinear &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_el "built"
ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,768,3072 || { ab_pack; exit 1; }
ab_quick new 150 bf16 & ab_quick new 150 f16 & ab_quick new 150 f32 &
ab_pytest new 170 "dw_from_x or auto_small_n or 16bit_fused_many_tiles or cuda_strategies or f32_fused_large_tiles" &
wait
ab_el "correctness done"
S6="4096,768,768 8192,768,3072 8192,1024,1024 8192,4096,4096 8192,4096,12288 16384,8192,1024"
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype bf16 --strategy fused" $S6
ab_el "bf16"
AB_BENCH_LIMIT=150 ab_bench 1 "old new" "--dtype f16 --strategy fused" $S6
ab_el "f16"
AB_BENCH_LIMIT=150 ab_bench 1 "old new" "--dtype f32 --strategy fused" 4096,768,768 8192,768,3072 8192,1024,1024
ab_el "f32"
timeout 60 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
    --shapes 8192,768,3072 --dtypes bf16 --strategies fused >"$R/profile_new.txt" 2>&1
echo "profile rc $?"
awk '/M,K,N/ { print } /lnlinear/ { p = 1 } /eager/ { p = 0 } p' "$R/profile_new.txt" | cut -c1-120 | head -60
ab_el "all done"
ab_pack
