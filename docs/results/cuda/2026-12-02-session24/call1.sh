#!/usr/bin/env bash
# Session 24, call 1: the Hopper forward's epilogue through stmatrix and TMA stores (as
# cuBLAS's), with {c, d} padded to whole tiles (no bounds checks) and the accumulators
# left unzeroed (the tile's first wgmma ignores them). Session 21's ncu put 24% (K = 1024)
# and 10% (K = 4096) of our kernel's warp samples in its epilogue, 1331 instructions a warp
# and tile against cuBLAS's 385, with the tensor pipe idle meanwhile.
# 1. smoke runs and the quick tables bf16/f16 of the new library; 2. A/B against 62ba155's
#    kernel (the file as old_fused_forward_sm90.cu), lnl-bench FUSED bf16, three rounds in
#    turn, and clocks_ab.py back to back at the power cap, the two libraries in turn. The
#    sanitizers and the Python tests come with tests/gpu/run.sh in the next call.
# Snapshot: git archive of HEAD into .snap, plus
#   git show 62ba155:src/cuda/fused_forward_sm90.cu > .snap/old_fused_forward_sm90.cu
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session24/call1.sh`.
. tests/gpu/ab.sh && ab_init s24
mkdir -p ../old && tar -c --exclude=./docs --exclude="./build-*" . | tar -x -C ../old
cp old_fused_forward_sm90.cu ../old/src/cuda/fused_forward_sm90.cu
AB_JOBS=8 ab_build old ../old "" lnl-bench lnlinear & AB_JOBS=8 ab_build new . "" lnl-bench test_table lnlinear & wait
ab_el "built"
ab_smoke new 30 "--dtype bf16 --strategy fused" 8192,1024,1024 32768,4096,256 8192,4096,4096 \
    129,768,257 4224,1024,520 || { ab_pack; exit 1; }
ab_smoke new 30 "--dtype f16 --strategy fused" 4224,1024,520 16384,8192,1024 || { ab_pack; exit 1; }
ab_quick new 100 bf16 f16
ab_el "smoke and tables done"
ab_bench 3 "old new" "--dtype bf16 --strategy fused" 8192,768,3072 8192,1024,1024 8192,4096,4096 \
    16384,8192,1024 32768,4096,256
ab_el "bench done"
ab_pack; ab_init s24b
export PYTHONPATH=python
i=0
for v in old new old new; do
    i=$((i + 1))
    timeout 90 python3 bench/cuda/clocks_ab.py --lib "build-$v/liblnlinear.so" --shape 8192,1024,1024 \
        --shape 8192,768,3072 --shape 8192,4096,4096 --variant "$v:LNL_CUDA_PINGPONG_MAX_K=0" --cublas \
        --seconds 1 --rounds 1 >"$R/clocks_${i}_$v.txt" 2>&1
    echo "clocks $v rc $?"; grep -v "^shape" "$R/clocks_${i}_$v.txt" | tail -9
done
ab_el "all done"
ab_pack
