#!/usr/bin/env bash
# Session 39, call 4: the dx-in-the-epilogue prototype with V3 (x through shared memory:
# loaded by the producer warpgroup's second warp during the main loop, dx written over it
# in place and stored from there by TMA; a three-stage ring), beside V0-V2 of call 3.
# device call: `bash docs/results/cuda/2026-12-04-session39/call4.sh`
. tests/gpu/ab.sh && ab_init s39c4 # results in $R ($OUT/s39c4)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 16384,8192,1024 8192,1024,1024 8192,4096,4096 8192,768,3072 4096,768,768; do
    timeout 90 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; cat "$R/proto_$s.txt"
done
DX_PROTO_CHECK_ONLY=1 timeout 150 compute-sanitizer --tool memcheck "$R/dx_proto" 4096 768 256 >"$R/memcheck.txt" 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|check V' "$R/memcheck.txt" | tr '\n' ' ')"
DX_PROTO_CHECK_ONLY=1 timeout 150 compute-sanitizer --tool racecheck "$R/dx_proto" 1024 512 128 >"$R/racecheck.txt" 2>&1
echo "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|check V' "$R/racecheck.txt" | tr '\n' ' ')"
rm -f "$R/dx_proto"
ab_el proto
ab_pack
