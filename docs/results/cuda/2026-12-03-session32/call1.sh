#!/usr/bin/env bash
# Session 32, call 1: session 31's next-ncu-backward.sh widened. Nsight Compute on bf16
# AUTO's memory-bound kernels (the forward's statistics-and-folding pass, the column sums,
# the LayerNorm backward, the ordered reduction), main's library, at 8192,1024,1024 and
# 4096,768,768: where the slack against a copy's rate is (DRAM/L2 throughput, occupancy,
# stall reasons). Caches are not flushed between kernels (--cache-control none), as in
# lnl-bench's repeated calls. One whole call's kernels (4 launches) after 4 skipped.
. tests/gpu/ab.sh && ab_init ncu-bwd # results in $R ($OUT/ncu-bwd)
AB_JOBS=16 ab_build n . "" lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
for s in 8192,1024,1024 4096,768,768; do
    cat >"$R/target_$s.py" <<PY
import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
c = Case(load("build-n/liblnlinear.so"), ${s}, "bf16", "auto")
for _ in range(3):
    c.fwd_bwd()
torch.cuda.synchronize()
PY
    timeout 120 ncu --kernel-name regex:'fold_prep|colsum_partials|ln_bwd_reg|reduce_partials' \
        --launch-skip 4 --launch-count 4 --cache-control none --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis python3 "$R/target_$s.py" >"$R/ncu_$s.txt" 2>&1
    echo "ncu $s rc $?"
    grep -E "fold_prep|colsum_partials|ln_bwd_reg|reduce_partials|Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Waves Per SM|Grid Size|Block Size|Stall|Mem Busy|Max Bandwidth" "$R/ncu_$s.txt" | cut -c1-130 | head -120
done
ab_pack
