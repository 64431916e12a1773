#!/usr/bin/env bash
# Session 35, call 3: the LayerNorm backward's register kernel with two chunks a thread at
# K <= 4096 (LNL_CUDA_LN_BWD_CPT=2: half the threads, each row's reduction shared by twice
# the elements) against one chunk a thread, in one build: the quick bf16 table with the
# override, then lnl-bench AUTO, three rounds in turn.
# device call: `bash docs/results/cuda/2026-12-03-session35/call3.sh`
. tests/gpu/ab.sh && ab_init s35c3 # results in $R ($OUT/s35c3)
AB_JOBS=14 ab_build new . "" lnlinear lnl-bench test_table
ab_el built
[ -x build-new/bench/lnl-bench ] || { tail -5 "$R/build_new.log"; ab_pack; exit 1; }
LNL_CUDA_LN_BWD_CPT=2 ab_smoke new 60 "--dtype bf16 --strategy auto" 32768,4096,256 || { ab_pack; exit 1; }
LNL_CUDA_LN_BWD_CPT=2 ab_quick new 120 bf16
ab_el checked
for r in 1 2 3; do
    for e in 1 2; do
        LNL_CUDA_LN_BWD_CPT=$e timeout 100 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto \
            --shape 32768,4096,256 --shape 8192,4096,4096 --shape 8192,1024,1024 --shape 4096,768,768 \
            >"$R/bench_bf16_cpt${e}_r$r.txt" 2>&1
        echo "== bf16 cpt $e round $r rc $?"
        ab_rows "$R/bench_bf16_cpt${e}_r$r.txt"
    done
done
for r in 1 2; do
    for e in 1 2; do
        LNL_CUDA_LN_BWD_CPT=$e timeout 100 build-new/bench/lnl-bench --device cuda --dtype f16 --strategy auto \
            --shape 32768,4096,256 --shape 8192,4096,4096 >"$R/bench_f16_cpt${e}_r$r.txt" 2>&1
        echo "== f16 cpt $e round $r rc $?"
        ab_rows "$R/bench_f16_cpt${e}_r$r.txt"
    done
done
ab_el done
ab_pack
