#!/usr/bin/env bash
# Session 25, call 2: session 24's library (76d1389) against HEAD (the split statistics'
# merge on two threads a row with its loads in flight, and SPLIT_STATS_MAX_COL_TILES = 8)
# in the same run. Call 1's "old" build failed (its fused_forward_sm90.cu alone beside
# HEAD's cuda_backend.cu, which calls fused_forward_sm90_split_cols): this time the old
# variant is the whole tree of 76d1389.
# 1. builds; 2. smoke runs; 3. clocks_ab.py back to back at the power cap, old / new in
#    turn, two rounds each (8192,4096,4096 is the control: the pre-pass in both);
#    4. lnl-bench FUSED, three rounds in turn; 5. lnl-bench of new at N = 2048, AUTO /
#    UNFUSED / FUSED (AUTO's forward takes FUSED only up to N = 1024).
# Snapshot: git archive of HEAD into .snap, plus
#   git archive 76d1389 > .snap/old76.tar
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-03-session25/call2.sh`.
. tests/gpu/ab.sh && ab_init s25c2
mkdir -p ../old && tar -x -C ../old -f old76.tar --exclude=docs
AB_JOBS=8 ab_build old ../old "" lnlinear lnl-bench & AB_JOBS=8 ab_build new . "" lnlinear lnl-bench & wait
ab_el "built"
ab_smoke new 40 "--dtype bf16 --strategy fused" 8192,4096,2048 16384,8192,1024 12800,4096,768 \
    || { ab_pack; exit 1; }
ab_el "smoke done"
export PYTHONPATH=python
i=0
for v in old new old new; do
    i=$((i + 1))
    timeout 80 python3 bench/cuda/clocks_ab.py --lib "build-$v/liblnlinear.so" --shape 8192,4096,4096 \
        --shape 8192,4096,2048 --shape 16384,8192,1024 --shape 12800,4096,768 \
        --variant "$v:LNL_CUDA_PINGPONG_MAX_K=0" $([ $i -le 2 ] && echo --cublas) --seconds 1 --rounds 1 \
        >"$R/clocks_${i}_$v.txt" 2>&1
    echo "clocks $v rc $?"; grep -v "^shape\|^NVIDIA" "$R/clocks_${i}_$v.txt" | tail -12
done
ab_el "clocks done"
ab_bench 3 "old new" "--dtype bf16 --strategy fused" 8192,4096,2048 16384,8192,1024 12800,4096,768
ab_el "bench done"
for st in auto unfused fused; do
    timeout 60 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy $st --shape 8192,4096,2048 \
        --shape 4096,4096,2048 >"$R/n2048_$st.txt" 2>&1
    echo "n2048 $st rc $?"; ab_rows "$R/n2048_$st.txt"
done
ab_el "all done"
ab_pack
