#!/usr/bin/env bash
# Session 39, call 5: the dx prototype's V4 (W^T's tile resident in shared memory, each CTA
# on a contiguous range of tiles in column order; layers with N <= 256) beside V0-V3, and
# Nsight Compute on V0, V4 and cuBLAS's dy . W at 32768,4096,256: is the N = 256 kernel
# bound by the operands' L2 traffic (V0 reads 192 KB of dy and W^T for each 64 KB of dx)?
# device call: `bash docs/results/cuda/2026-12-04-session39/call5.sh`
. tests/gpu/ab.sh && ab_init s39c5 # results in $R ($OUT/s39c5)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 65536,1024,256 12800,4096,256 32768,4096,128 16384,8192,1024; do
    timeout 90 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; cat "$R/proto_$s.txt"
done
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool memcheck "$R/dx_proto" 4096 768 256 >"$R/memcheck.txt" 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|check V4' "$R/memcheck.txt" | tr '\n' ' ')"
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool racecheck "$R/dx_proto" 1024 512 128 >"$R/racecheck.txt" 2>&1
echo "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|check V4' "$R/racecheck.txt" | tr '\n' ' ')"
ab_el proto
m="--section SpeedOfLight --section MemoryWorkloadAnalysis --metrics lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
DX_PROTO_CHECK_ONLY=1 timeout 120 ncu --kernel-name regex:'dx_gemm_kernel|dx_gemm_bres' --launch-count 5 \
    $m "$R/dx_proto" 32768 4096 256 >"$R/ncu_proto.txt" 2>&1
echo "ncu proto rc $?"
timeout 120 ncu --kernel-name regex:nvjet --launch-count 1 \
    $m "$R/dx_proto" 32768 4096 256 >"$R/ncu_cublas.txt" 2>&1
echo "ncu cublas rc $?"
grep -E "dx_gemm|nvjet|  Duration|DRAM Throughput|L2 Cache Throughput|lts__t_bytes|dram__bytes|hmma|Compute \(SM\)" \
    "$R/ncu_proto.txt" "$R/ncu_cublas.txt" | cut -c1-150 | head -70
rm -f "$R/dx_proto"
ab_el ncu
ab_pack
