#!/usr/bin/env bash
# Session 39, call 3: the dx-in-the-epilogue prototype again, with a per-element check (half
# an ulp of bf16 plus 2^-12 of the row's rms; call 2's rms-relative bound of 1e-2 was below
# bf16's own rounding of values up to ~4 rms) and two more ways to have x ready for the
# epilogue: V1 loads the whole tile's x before the main loop, V2 also has the producer
# prefetch the tile's x into L2 with one tensor prefetch (V0 is call 2's kernel).
# device call: `bash docs/results/cuda/2026-12-04-session39/call3.sh`
. tests/gpu/ab.sh && ab_init s39c3 # results in $R ($OUT/s39c3)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 16384,8192,1024 8192,1024,1024 8192,4096,4096 8192,768,3072 4096,768,768; do
    timeout 90 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; cat "$R/proto_$s.txt"
done
rm -f "$R/dx_proto"
ab_el proto
ab_pack
