#!/usr/bin/env bash
# Session 39, call 7: what bounds the dx prototype at 32768,4096,256 (1.5x a copy of x's size
# in its best variants)? Nsight Compute with warp states and SASS-level samples of V0 (x by
# ld.global), V1, V2, V3 (x through shared memory by TMA) and V5 (ping-pong).
# device call: `bash docs/results/cuda/2026-12-04-session39/call7.sh`
. tests/gpu/ab.sh && ab_init s39c7 # results in $R ($OUT/s39c7)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -lineinfo -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
DX_PROTO_CHECK_ONLY=1 timeout 200 ncu --cache-control none \
    --kernel-name regex:'dx_gemm_kernel|dx_gemm_smem|dx_gemm_pp' --launch-count 5 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
    --import-source no -f -o "$R/ncu_dx" "$R/dx_proto" 32768 4096 256 >"$R/ncu_dx.log" 2>&1
echo "ncu rc $?"
timeout 40 ncu --import "$R/ncu_dx.ncu-rep" --page details >"$R/details.txt" 2>&1
timeout 60 ncu --import "$R/ncu_dx.ncu-rep" --page source --csv --print-source sass >"$R/sass.csv" 2>&1
grep -E "dx_gemm|  Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|dram__bytes|hmma" \
    "$R/details.txt" | cut -c1-120 | head -60
timeout 60 python3 bench/cuda/ncu_sass_summary.py "$R/sass.csv" --list 2>&1 | head -8
for k in 0 3 4; do
    timeout 60 python3 bench/cuda/ncu_sass_summary.py "$R/sass.csv" --kernel $k --top 16 \
        >"$R/summary_k$k.txt" 2>&1
    head -45 "$R/summary_k$k.txt" | cut -c1-150
done
gzip -f "$R/sass.csv"
rm -f "$R/ncu_dx.ncu-rep" "$R/dx_proto"
ab_el done
ab_pack
