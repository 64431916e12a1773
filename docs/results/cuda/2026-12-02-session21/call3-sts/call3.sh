#!/usr/bin/env bash
# Session 21, call 3: the Hopper forward kernel's shared-memory pointer kept in the shared
# address space (branch s21-sts: smem = smem_raw + offset instead of a pointer rounded as an
# integer), so that the epilogue's staging stores/loads and sstat compile to STS/LDS, not
# generic ST/LD (call 2's ncu: the epilogue was 24% of the warps' samples at 8192,1024,1024).
# 1. A/B against main's kernel (3c3f07c, the file as old_fused_forward_sm90.cu), lnl-bench
#    FUSED bf16, two rounds in turn; 2. tests/gpu/run.sh on the new tree (its logs land in $OUT) without its
#    lnl-bench (LNL_GPU_BENCH=0; the A/B rounds check lnl-bench's error bounds).
# Snapshot: git archive of s21-sts into .snap, plus
#   git show 3c3f07c:src/cuda/fused_forward_sm90.cu > .snap/old_fused_forward_sm90.cu
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session21/call3-sts/call3.sh`.
. tests/gpu/ab.sh && ab_init s21
pk() { (cd "$OUT" && tar czf s21.tgz s21); }
mkdir -p ../old && tar -c --exclude=./docs --exclude="./build-*" . | tar -x -C ../old
cp old_fused_forward_sm90.cu ../old/src/cuda/fused_forward_sm90.cu
AB_JOBS=8 ab_build old ../old "" lnl-bench & AB_JOBS=8 ab_build new . "" lnl-bench & wait
ab_el "built"
ab_smoke new 30 "--dtype bf16 --strategy fused" 8192,1024,1024 32768,4096,256 || { ab_pack; exit 1; }
ab_bench 2 "old new" "--dtype bf16 --strategy fused" 8192,1024,1024 8192,768,3072 8192,4096,4096 \
    32768,4096,256
ab_el "bench done"
pk
LNL_GPU_BENCH=0 tests/gpu/run.sh > "$R/run_stdout.txt" 2>&1
echo "run.sh exit $?"
ab_el "run.sh done"
tail -4 "$R/run_stdout.txt"
ab_pack
