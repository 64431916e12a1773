#!/usr/bin/env bash
# Session 24, call 2: call 1's lnl-bench rounds had the new epilogue 3.5-11% slower at
# 16384,8192,1024 (the split statistics form; old 0.410-0.440 ms, new 0.426-0.464) and
# even at 32768,4096,256 (the one-column statistics form), where lnl-bench's short runs
# are noisy. Back to back at the power cap, the two libraries in turn (old = 62ba155's
# kernel file), three rounds each: the statistics forms and 8192,4096,12288.
# Snapshot as call 1 (.snap with old_fused_forward_sm90.cu);
# device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session24/call2.sh`.
. tests/gpu/ab.sh && ab_init s24c2
mkdir -p ../old && tar -c --exclude=./docs --exclude="./build-*" . | tar -x -C ../old
cp old_fused_forward_sm90.cu ../old/src/cuda/fused_forward_sm90.cu
AB_JOBS=8 ab_build old ../old "" lnlinear & AB_JOBS=8 ab_build new . "" lnlinear & wait
ab_el "built"
export PYTHONPATH=python
i=0
for v in old new old new old new; do
    i=$((i + 1))
    timeout 60 python3 bench/cuda/clocks_ab.py --lib "build-$v/liblnlinear.so" --shape 16384,8192,1024 \
        --shape 32768,4096,256 --shape 8192,4096,12288 --variant "$v:LNL_CUDA_PINGPONG_MAX_K=0" \
        --seconds 1 --rounds 1 >"$R/clocks_${i}_$v.txt" 2>&1
    echo "clocks $v rc $?"; grep -v "^shape" "$R/clocks_${i}_$v.txt" | tail -3
done
ab_el "all done"
ab_pack
