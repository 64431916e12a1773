#!/usr/bin/env bash
# Session 39, call 9: the dx path's other pieces, measured instead of estimated: each row's
# epilogue values from dy and z, dgamma and dbeta from W, P and colsum(dy), and z's store in
# the forward (a memset of M x N); with the prototype's variants again at the same shapes.
# device call: `bash docs/results/cuda/2026-12-04-session39/call9.sh`
. tests/gpu/ab.sh && ab_init s39c9 # results in $R ($OUT/s39c9)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 16384,8192,1024 8192,1024,1024; do
    timeout 90 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; cat "$R/proto_$s.txt"
done
DX_PROTO_CHECK_ONLY=1 timeout 120 compute-sanitizer --tool memcheck "$R/dx_proto" 8192 768 256 >"$R/memcheck.txt" 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|other pieces' "$R/memcheck.txt" | tr '\n' ' ')"
rm -f "$R/dx_proto"
ab_el done
ab_pack
