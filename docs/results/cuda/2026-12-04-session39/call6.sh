#!/usr/bin/env bash
# Session 39, call 6: the dx prototype's V5 (ping-pong: each consumer warpgroup on every other
# 64-row tile, one's epilogue under the other's main loop) beside V0-V4: how close can the
# fused dx get to the copy of x's size?
# device call: `bash docs/results/cuda/2026-12-04-session39/call6.sh`
. tests/gpu/ab.sh && ab_init s39c6 # results in $R ($OUT/s39c6)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 16384,8192,1024 8192,1024,1024 8192,4096,4096 65536,1024,256 32768,4096,128; do
    timeout 90 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; grep -E "V5|one call|back to back" "$R/proto_$s.txt"
done
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool memcheck "$R/dx_proto" 8192 768 256 >"$R/memcheck.txt" 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|check V5' "$R/memcheck.txt" | tr '\n' ' ')"
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool racecheck "$R/dx_proto" 16384 512 128 >"$R/racecheck.txt" 2>&1
echo "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY|check V5' "$R/racecheck.txt" | tr '\n' ' ')"
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool synccheck "$R/dx_proto" 16384 512 128 >"$R/synccheck.txt" 2>&1
echo "synccheck rc $?: $(grep -E 'ERROR SUMMARY|check V5' "$R/synccheck.txt" | tr '\n' ' ')"
rm -f "$R/dx_proto"
ab_el done
ab_pack
