#!/usr/bin/env bash
# Session 24, call 6 (an experiment, not merged): the split statistics up to 16 column tiles.
# Call 5 found the statistics pass 25 us at 8192,4096,4096 (7% of cuBLAS's GEMM) while the
# GEMM kernel is within 4-6% of cuBLAS's. The split statistics (each of a row of tiles'
# tn column tiles sums every tn-th K slice, then they merge) stop at tn = 4 today; the
# patch patches/split-stats-16-col-tiles.patch raises the limit to 16, so N <= 4096 with
# K >= 4096 computes the statistics inside the GEMM kernel. The persistent grid becomes a
# multiple of 16 (128 CTAs), which costs nothing at 8192,4096,4096: 1024 tiles are 8 rounds
# on 128 or 132 CTAs. The risk: the statistics form's GEMM kernel ran 1.16x cuBLAS's at
# 16384,8192,1024 against 1.06x for the pre-pass form at 8192,4096,4096.
# 1. builds of main (HEAD) and of the patched tree; 2. lnl-bench FUSED on the patched one
#    (its error checks) at the shapes the patch changes; 3. back to back at the power cap,
#    the two libraries in turn, with cuBLAS beside.
# Device call: `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session24/call6.sh`
# with carry [".snap"] (a `git archive` of the commit that holds this script).
. tests/gpu/ab.sh && ab_init s24c6
mkdir -p ../s16 && tar -c --exclude=./docs/results/lnl-bench --exclude="./build-*" . | tar -x -C ../s16
# the patch is one line; sed, in case the machine has no `patch`
sed -i 's/^constexpr int SPLIT_STATS_MAX_COL_TILES = 4;/constexpr int SPLIT_STATS_MAX_COL_TILES = 16;/' \
    ../s16/src/cuda/fused_sm90.cuh
grep -q "SPLIT_STATS_MAX_COL_TILES = 16;" ../s16/src/cuda/fused_sm90.cuh || { echo "patch failed"; ab_pack; exit 1; }
AB_JOBS=8 ab_build main . "" lnlinear lnl-bench & AB_JOBS=8 ab_build s16 ../s16 "" lnlinear lnl-bench & wait
ab_el "built"
ab_smoke s16 40 "--dtype bf16 --strategy fused" 8192,4096,4096 8192,4096,2048 4096,8192,4096 || { ab_pack; exit 1; }
ab_smoke s16 40 "--dtype f16 --strategy fused" 8192,4096,4096 || { ab_pack; exit 1; }
ab_el "smoke done"
export PYTHONPATH=python
i=0
for v in main s16 main s16; do
    i=$((i + 1))
    timeout 80 python3 bench/cuda/clocks_ab.py --lib "build-$v/liblnlinear.so" --shape 8192,4096,4096 \
        --shape 8192,4096,2048 --shape 4096,8192,4096 --variant "$v:LNL_CUDA_PINGPONG_MAX_K=0" \
        $([ $i -le 2 ] && echo --cublas) --seconds 1 --rounds 1 >"$R/clocks_${i}_$v.txt" 2>&1
    echo "clocks $v rc $?"; grep -v "^shape" "$R/clocks_${i}_$v.txt" | tail -9
done
ab_el "all done"
ab_pack
