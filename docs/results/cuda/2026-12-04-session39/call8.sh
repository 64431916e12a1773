#!/usr/bin/env bash
# Session 39, call 8: the dx prototype after its variants were rewritten onto shared helpers
# (main loop, epilogue, staging, barrier setup). V0-V3 and V5 compile to the same SASS as
# before (addresses aside); V4's changed, so every variant is checked and timed again.
# device call: `bash docs/results/cuda/2026-12-04-session39/call8.sh`
. tests/gpu/ab.sh && ab_init s39c8 # results in $R ($OUT/s39c8)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 65536,1024,256 8192,1024,1024; do
    timeout 90 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; cat "$R/proto_$s.txt"
done
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool memcheck "$R/dx_proto" 8192 768 256 >"$R/memcheck.txt" 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|check V' "$R/memcheck.txt" | tr '\n' ' ')"
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool racecheck "$R/dx_proto" 16384 512 128 >"$R/racecheck.txt" 2>&1
echo "racecheck rc $?: $(grep -E 'RACECHECK SUMMARY' "$R/racecheck.txt" | tr '\n' ' ')"
rm -f "$R/dx_proto"
ab_el done
ab_pack
