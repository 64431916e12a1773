#!/usr/bin/env bash
# Session 28, call 3: the backward's recomputed LN(x) written by the LayerNorm backward
# (which reads x anyway) instead of a LayerNorm pass of its own, where dxhat is 16-bit
# (K >= 512) and ln_out was not kept; the dW GEMM then runs after the LayerNorm backward.
# old = 3ccdf24 (.snap/old, carried), new = the working tree. Correctness of the new build
# first (quick tables, table rows of each LayerNorm-backward kernel, Python tests of the
# paths), then lnl-bench FUSED and AUTO, old/new in turn.
# device call: `bash docs/results/cuda/2026-12-03-session28/call3.sh`
. tests/gpu/ab.sh && ab_init s28c3
AB_JOBS=8 ab_build old .snap/old "" lnl-bench &
AB_JOBS=8 ab_build new . "" lnl-bench test_table lnlinear &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_el "built"
ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,768,3072 || { ab_pack; exit 1; }
ab_quick new 150 bf16 & ab_quick new 150 f16 &
# the reg kernel (1032), the ring (4104: one block an SM), the generic kernel (4097, 8200)
ab_tables new 150 130,4104,264 260,8200,136 16,4097,257 16,768,768 129,768,257 4224,1024,520 &
ab_pytest new 170 "dw_from_x or auto_small_n or 16bit_fused_many_tiles or cuda_strategies or fold_prep_long_rows or matches_pytorch" &
wait
ab_el "correctness done"
for sh in 130,4104,264 16,4097,257; do
    timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table \
        --device cuda --no-auto --dtype f16 --shape $sh >"$R/san_memcheck_f16_$sh.txt" 2>&1
    echo "memcheck f16 $sh rc $?: $(grep -E 'passed|SUMMARY' "$R/san_memcheck_f16_$sh.txt" | paste -sd' ')"
done
ab_el "memcheck"
S5="4096,768,768 8192,768,3072 8192,1024,1024 8192,4096,4096 8192,4096,12288"
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype bf16 --strategy fused --strategy auto" $S5
ab_el "bf16"
AB_BENCH_LIMIT=150 ab_bench 1 "old new" "--dtype f16 --strategy fused" $S5 16384,8192,1024
ab_el "all done"
ab_pack
