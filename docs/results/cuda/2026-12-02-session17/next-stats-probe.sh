#!/usr/bin/env bash
# For the next session with a GPU (written in session 17, not run): branch s17-stats-probe.
# Where the N = 256 forward's in-kernel statistics cost goes (0.037 ms of 0.137 at
# 32768,4096,256, 0.026 of 0.088 at 65536,1024,256: session 17 call 2). Timing-only probes
# of FORM_FOLD_STATS's slice loop (-DLNL_SM90_STATS_PROBE, fused_forward_sm90.cu), each with
# wrong statistics (lnl-bench says FAIL; only the times count):
#   p0 main's loop; p1 the shared-memory loads alone; p2 the arithmetic alone on register
#   values; p3 unshifted sums (3 instructions an element, not 4); p4 neither.
# Reading: p4 - p0 is the statistics' whole cost in this structure; p1 and p2 against it say
# whether the loads (shared memory beside wgmma's reads) or the instructions cost; p3 what a
# 3-an-element formulation (row sums from the tensor cores) could save at most.
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir .snap && git archive HEAD | tar -x -C .snap \
#     && cp docs/results/cuda/2026-12-02-session17/next-stats-probe.sh .snap/ && rm -rf .snap/docs/results
# then `cd .snap && ./next-stats-probe.sh` with carry [".snap"] (~4 minutes).
cd "$(dirname "$0")" || exit 2
. tests/gpu/ab.sh && ab_init probe
for p in 0 1 2 3 4; do ab_build p$p . "-DLNL_SM90_STATS_PROBE=$p" lnl-bench & done
wait
ab_el builds
ab_smoke p0 30 "--dtype bf16 --strategy fused" 32768,4096,256 || { ab_pack; exit 1; }
ab_bench 3 "p0 p1 p2 p3 p4" "--dtype bf16 --strategy fused" 32768,4096,256 65536,1024,256 \
    12800,4096,256 16384,2048,128
ab_el "all done"
ab_pack
