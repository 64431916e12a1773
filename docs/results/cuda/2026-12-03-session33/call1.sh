#!/usr/bin/env bash
# Session 33, call 1 (main's library, bf16): where the forward's and the backward's
# memory-bound kernels and the gaps between kernels lose time.
#  1. bench/cuda/timeline.py: each kernel's start, duration and the gap before it, for
#     FUSED's forward and AUTO's backward at the small shapes (PDL on, as shipped);
#  2. session 32's prepared Nsight Compute run on fold_prep_kernel and
#     colsum_partials_kernel (next-ncu-colsum-prep.sh's steps).
# device call: `bash docs/results/cuda/2026-12-03-session33/call1.sh`
. tests/gpu/ab.sh && ab_init s33c1 # results in $R ($OUT/s33c1)
AB_JOBS=16 ab_build n . "" lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
L=build-n/liblnlinear.so
timeout 120 python3 bench/cuda/timeline.py --lib $L --shapes 16,8,16 4096,768,768 8192,768,3072 8192,1024,1024 \
    --strategies fused unfused --phase fwd >"$R/timeline_fwd.txt" 2>&1; echo "timeline fwd rc $?"
timeout 120 python3 bench/cuda/timeline.py --lib $L --shapes 4096,768,768 8192,768,3072 8192,1024,1024 32768,4096,256 \
    --strategies auto --phase bwd >"$R/timeline_bwd.txt" 2>&1; echo "timeline bwd rc $?"
cat "$R/timeline_fwd.txt" "$R/timeline_bwd.txt" | cut -c1-120
ab_el timelines
for s in 8192,768,3072 8192,1024,1024; do
    # FUSED's forward (AUTO's is UNFUSED at 8192,768,3072) and AUTO's backward
    target=$R/target_$s.py
    cat >"$target" <<PY
import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
lib = load("build-n/liblnlinear.so")
f, a = Case(lib, $s, "bf16", "fused"), Case(lib, $s, "bf16", "auto")
for _ in range(3):
    f.fwd()
    a.fwd_bwd()
torch.cuda.synchronize()
PY
    timeout 150 ncu --kernel-name regex:'fold_prep|colsum_partials' --launch-skip 2 --launch-count 3 \
        --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
        --section InstructionStats --section SourceCounters python3 "$target" >"$R/ncu_$s.txt" 2>&1
    echo "ncu $s rc $?"
    grep -E "fold_prep|colsum_partials|Duration|DRAM Throughput|L2 Hit|Achieved Occupancy|Waves Per SM|Eligible|Issued Warp|No Eligible|Executed Ipc|Executed Instructions  |Registers Per|Grid Size|Block Size" \
        "$R/ncu_$s.txt" | cut -c1-130 | head -60
done
ab_el done
ab_pack
