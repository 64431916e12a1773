#!/usr/bin/env bash
# Session 44, call 5, on d4d66cf: Nsight Compute on the dx epilogue kernel (XS) at
# 32768,4096,256 bf16, where it moves x and dx at ~76% of a copy's rate (session 43): is it
# DRAM-bound short of the ceiling, or stalled? Same sections for x.clone() as the ceiling.
. tests/gpu/ab.sh && ab_init s44c5
ab_build new . "" lnlinear || { tail -5 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
timeout 150 ncu --kernel-name regex:dx_epilogue_kernel --launch-count 1 $S \
    python3 "$(ab_target new 32768,4096,256 bf16 auto)" >"$R/ncu_xs.txt" 2>&1
echo "ncu xs rc $?"
grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|L2 Hit|Mem Busy|Max Bandwidth|Achieved Occupancy|Warp Cycles Per Issued|No Eligible|Issued Warp|Registers Per|Dynamic Shared" "$R/ncu_xs.txt" | head -24
cat > "$R/clone.py" <<'PY'
import torch
x = torch.randn(32768, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(2):
    y = x.clone()
torch.cuda.synchronize()
PY
timeout 60 ncu --launch-skip 1 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    python3 "$R/clone.py" >"$R/ncu_clone.txt" 2>&1
echo "ncu clone rc $?"
grep -E "Duration|DRAM Throughput|Memory Throughput|Max Bandwidth" "$R/ncu_clone.txt" | head -6
ab_el done
ab_pack
