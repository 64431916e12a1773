#!/usr/bin/env bash
# Session 39, call 2 (main at the plain-sum merge, whose run.sh was call 1):
#  1. the prototype of dx formed in the dy . W GEMM's epilogue (bench/cuda/dx_epilogue_proto.cu):
#     its check against float64 and its time beside cuBLAS's dy . W and a copy of x's size;
#  2. torch.profiler's kernel table of the AUTO and FUSED backward on the same shapes (what
#     the prototype would replace: cuBLAS's dy . W plus the LayerNorm backward kernel);
#  3. lnl-bench bf16 + f16 three rounds back to back: #7's medians on the new main.
# device call: `bash docs/results/cuda/2026-12-04-session39/call2.sh`
. tests/gpu/ab.sh && ab_init s39c2 # results in $R ($OUT/s39c2)
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Isrc/cuda -Iinclude \
    bench/cuda/dx_epilogue_proto.cu -lcublas -o "$R/dx_proto" >"$R/build_proto.log" 2>&1
echo "proto build rc $?"
for s in 32768,4096,256 16384,8192,1024 8192,1024,1024 8192,4096,4096 8192,768,3072 \
    4096,768,768 8192,4096,12288; do
    timeout 60 "$R/dx_proto" ${s//,/ } >"$R/proto_$s.txt" 2>&1
    echo "proto $s rc $?"; cat "$R/proto_$s.txt"
done
rm -f "$R/dx_proto"
ab_el proto
AB_JOBS=16 ab_build n . "" lnlinear lnl-bench || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
timeout 150 python3 bench/cuda/profile_cuda.py --lib build-n/liblnlinear.so --dtypes bf16 \
    --strategies auto fused --iters 5 --shapes 32768,4096,256 16384,8192,1024 8192,1024,1024 \
    8192,4096,4096 >"$R/profile.txt" 2>&1
echo "profile rc $?"
ab_el profile
for r in 1 2 3; do
    timeout 150 build-n/bench/lnl-bench --device cuda --dtype bf16 --dtype f16 \
        --json "$R/bench_r$r.json" >"$R/bench_r$r.log" 2>&1
    echo "lnl-bench round $r rc $?: $(tail -1 "$R/bench_r$r.log")"
    ab_el "round $r"
done
ab_pack
