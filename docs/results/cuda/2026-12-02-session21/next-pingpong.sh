#!/usr/bin/env bash
# For the next session with a GPU (written in session 21, compiled here, never run): the
# ping-pong epilogue form, branch s21-pingpong (patch: patches/pingpong-epilogue-form.patch
# against 3c3f07c). With -DLNL_SM90_PINGPONG=1 the epilogue form at BN = 256 (N > 256, the
# statistics from the pre-pass) runs its two consumer warpgroups on different 64 x 256
# tiles, taken in turn, so that one stores its tile while the other's MMAs run. Without the
# flag the branch compiles to main's SASS, function by function (cuobjdump, session 21).
# Session 21's ncu: the tensor pipe does cuBLAS's busy time, and idles 17 vs 11 us at
# 8192,1024,1024 (61 vs 38 us at 8192,4096,4096), mostly while both warpgroups store.
# What to expect: the kernel 5-15% faster where K <= 1024, a few % at K = 4096; against it,
# W' is read from L2 once per 64 rows instead of per 128 (40 KB a stage for 64 x 256 x 64
# MACs; L2 was 31% busy in call 2's ncu).
# Risks: a hang (the two warpgroups' stage sequences interleave through one ring;
# ab_smoke's 30 s limit catches it), the off-centre path (this kernel runs to its end and
# the transform form redoes the call: the many_tiles offsets 1e3 / one_row and the f16
# overflow tests cover it).
# Snapshot of the branch: rm -rf .snap && mkdir .snap && git archive s21-pingpong | tar -x -C .snap
# (without the branch: the same from main, then in .snap
#   git apply docs/results/cuda/2026-12-02-session21/patches/pingpong-epilogue-form.patch)
# then the device call `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session21/next-pingpong.sh`
# with carry [".snap"]. ~5 minutes.
. tests/gpu/ab.sh && ab_init pp
R=$PWD/res-pp && rm -rf "$R" && mkdir -p "$R" # outside $OUT: packed after every step
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/pp.tgz" -C "$PWD" res-pp; }
AB_JOBS=8 ab_build main . "" lnl-bench &
AB_JOBS=8 ab_build pp . "-DLNL_SM90_PINGPONG=1" lnl-bench test_table lnlinear &
wait
ab_el builds
ab_smoke pp 30 "--dtype bf16 --strategy fused" 8192,1024,1024 8192,4096,4096 8448,136,520 || { pk; exit 1; }
pk
ab_tables pp 90 8448,136,520 129,768,257
ab_quick pp 120 bf16 f16
ab_el tables
pk
AB_BENCH_LIMIT=90 ab_bench 3 "main pp" "--dtype bf16 --strategy fused" 8192,1024,1024 \
    8192,768,3072 8192,4096,4096 8192,4096,12288 4096,768,768
ab_el bench
pk
AB_SAN_LIMIT=150 ab_sanitize pp bf16 8448,136,520 129,768,257
ab_pytest pp 200 "many_tiles or folded_weight_overflow or cuda_strategies"
ab_el "all done"
pk
