#!/usr/bin/env bash
# For the next session (written in session 31, not run: no device time was left). Nsight
# Compute on the backward's three memory-bound kernels of bf16 AUTO at 8192,1024,1024 (the
# column sums, the LayerNorm backward, the ordered reduction), main's library: where call
# 5's slack is (DRAM throughput, occupancy, stall reasons). Caches are not flushed between
# kernels (--cache-control none), as in lnl-bench's repeated calls.
# device call: `bash docs/results/cuda/2026-12-03-session31/next-ncu-backward.sh`
. tests/gpu/ab.sh && ab_init ncu-bwd # results in $R ($OUT/ncu-bwd)
AB_JOBS=16 ab_build n . "" lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
cat >"$R/target.py" <<'PY'
import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
c = Case(load("build-n/liblnlinear.so"), 8192, 1024, 1024, "bf16", "auto")
for _ in range(3):
    c.fwd_bwd()
torch.cuda.synchronize()
PY
timeout 90 ncu --kernel-name regex:'colsum_partials|ln_bwd_reg|reduce_partials' --launch-skip 3 \
    --launch-count 3 --cache-control none --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
    python3 "$R/target.py" >"$R/ncu.txt" 2>&1
echo "ncu rc $?"
grep -E "colsum_partials|ln_bwd_reg|reduce_partials|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Waves Per SM|Stall|L2 Hit|Mem Busy" "$R/ncu.txt" | cut -c1-120 | head -80
ab_pack
