#!/usr/bin/env bash
# Session 36, call 3 (main's library, 2e66232 = 3d04945's device code): where #7 stands,
# with the noise measured rather than guessed, and why the N = 256 forward trails cuBLAS.
#  1. Nsight Compute on the bf16 forward at 32768,4096,256: our Hopper kernel (FUSED, the
#     epilogue form with the statistics inside) beside UNFUSED's cuBLAS GEMM on LN(x):
#     time, tensor pipe, DRAM and L2 throughput, warp stalls (the largest #7 forward gap:
#     1.37x the GEMM where the target is 1.2x max(GEMM, one read of x));
#  2. lnl-bench, bf16 and f16, every default shape and strategy, three rounds back to
#     back: the medians and spreads of #7's ratios.
# device call: `bash docs/results/cuda/2026-12-04-session36/call3.sh`
. tests/gpu/ab.sh && ab_init s36c3 # results in $R ($OUT/s36c3)
AB_JOBS=16 ab_build n . "" lnlinear lnl-bench || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
s=32768,4096,256
target=$R/target_fwd.py
cat >"$target" <<PY
import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
lib = load("build-n/liblnlinear.so")
f, u = Case(lib, $s, "bf16", "fused"), Case(lib, $s, "bf16", "unfused")
for _ in range(3):
    f.fwd()
    u.fwd()
torch.cuda.synchronize()
PY
timeout 200 ncu --kernel-name regex:'ln_gemm_fwd_sm90|nvjet|gemm' --launch-skip 3 --launch-count 4 \
    --cache-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second,dram__bytes_read.sum,lts__t_bytes.sum,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio \
    python3 "$target" >"$R/ncu_fwd_$s.txt" 2>&1
echo "ncu rc $?"
grep -E "ln_gemm_fwd_sm90|nvjet|  Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|tensor_op|lts__t_bytes|dram__bytes|Issued Warp|No Eligible|Eligible Warps|Stall|Registers Per|Grid Size|Dynamic Shared" \
    "$R/ncu_fwd_$s.txt" | cut -c1-140 | head -90
ab_el ncu
for r in 1 2 3; do
    timeout 150 build-n/bench/lnl-bench --device cuda --dtype bf16 --dtype f16 \
        --json "$R/bench_r$r.json" >"$R/bench_r$r.log" 2>&1
    echo "lnl-bench round $r rc $?: $(tail -1 "$R/bench_r$r.log")"
    ab_el "round $r"
done
ab_pack
