#!/usr/bin/env bash
# Session 25, call 1: the split statistics' merge on all 256 consumer threads, and the split
# up to 16 column tiles (session 24's call 6, never run: no machine).
# The SASS of main's statistics kernel showed the merge's L2 loads one after another: one
# thread a row group merged all tn shares of its four rows, 16 round trips to L2 a tile at
# tn = 4 and 64 at tn = 16, while the whole CTA waits at a barrier. Now two threads a row
# load half the shares each, at most four loads in flight (no spill), and merge through a
# shuffle. Variants:
#   old: 76d1389's fused_forward_sm90.cu (the library of session 24's run.sh proof)
#   m4:  HEAD (the new merge, SPLIT_STATS_MAX_COL_TILES = 4, as shipped)
#   m16: HEAD with SPLIT_STATS_MAX_COL_TILES = 16: N <= 4096 with K >= 4096 computes the
#        statistics inside the GEMM kernel (8192,4096,4096: the 25 us pass gone)
# 1. smoke runs; 2. the test table's split rows (tn = 3, 4, 9, 16) and the Python redo tests
#    on m16; 3. clocks_ab.py back to back at the power cap, old / m4 / m16 in turn, two
#    rounds, cuBLAS beside in the first; 4. lnl-bench FUSED, two rounds in turn.
# Snapshot: git archive of HEAD into .snap, plus
#   git show 76d1389:src/cuda/fused_forward_sm90.cu > .snap/old_fused_forward_sm90.cu
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-03-session25/call1.sh`.
. tests/gpu/ab.sh && ab_init s25c1
for v in old m16; do
    mkdir -p ../$v && tar -c --exclude=./docs --exclude="./build-*" . | tar -x -C ../$v
done
cp old_fused_forward_sm90.cu ../old/src/cuda/fused_forward_sm90.cu
sed -i 's/^constexpr int SPLIT_STATS_MAX_COL_TILES = 4;/constexpr int SPLIT_STATS_MAX_COL_TILES = 16;/' \
    ../m16/src/cuda/fused_sm90.cuh
grep -q "SPLIT_STATS_MAX_COL_TILES = 16;" ../m16/src/cuda/fused_sm90.cuh || { echo "sed failed"; ab_pack; exit 1; }
AB_JOBS=6 ab_build old ../old "" lnlinear lnl-bench & AB_JOBS=6 ab_build m4 . "" lnlinear lnl-bench &
AB_JOBS=6 ab_build m16 ../m16 "" lnlinear lnl-bench test_table & wait
ab_el "built"
ab_smoke m16 40 "--dtype bf16 --strategy fused" 8192,4096,4096 8192,4096,2048 4096,8192,4096 2100,4096,3000 \
    || { ab_pack; exit 1; }
ab_smoke m16 40 "--dtype f16 --strategy fused" 8192,4096,4096 || { ab_pack; exit 1; }
ab_smoke m4 40 "--dtype bf16 --strategy fused" 16384,8192,1024 12800,4096,768 || { ab_pack; exit 1; }
ab_el "smoke done"
ab_tables m16 200 2200,200,2100 2100,264,4000 4224,200,520 3200,72,1000 12800,200,1000
ab_pytest m16 240 "stats_inside_redo_many_tiles"
ab_el "tables and pytest done"
export PYTHONPATH=python
i=0
for v in old m4 m16 old m4 m16; do
    i=$((i + 1))
    timeout 80 python3 bench/cuda/clocks_ab.py --lib "build-$v/liblnlinear.so" --shape 8192,4096,4096 \
        --shape 8192,4096,2048 --shape 16384,8192,1024 --shape 12800,4096,768 \
        --variant "$v:LNL_CUDA_PINGPONG_MAX_K=0" $([ $i -le 3 ] && echo --cublas) --seconds 1 --rounds 1 \
        >"$R/clocks_${i}_$v.txt" 2>&1
    echo "clocks $v rc $?"; grep -v "^shape" "$R/clocks_${i}_$v.txt" | tail -9
done
ab_el "clocks done"
ab_bench 2 "old m4 m16" "--dtype bf16 --strategy fused" 8192,4096,4096 8192,4096,2048 16384,8192,1024
ab_el "all done"
ab_pack
