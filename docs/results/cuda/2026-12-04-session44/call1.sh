#!/usr/bin/env bash
# Session 44, call 1: the Hopper forward's epilogue form in clusters of two CTAs (CL,
# LNL_CUDA_SM90_CLUSTER=1), each CTA loading half of each W' slice and multicasting it to
# both, in the cooperative form and the ping-pong form (LNL_CUDA_PINGPONG_MAX_K=65536).
# The working tree (new) against main at 647b7ac (old, copied into ./ab-old). A hang shows
# as rc 124 in the smoke runs, which come first; then the CL table rows, then the four
# forms at the power cap (clocks_ab.py), then old against new in the default form.
. tests/gpu/ab.sh && ab_init cl
ab_build old ab-old "" lnl-bench & ab_build new . "" lnl-bench test_table lnlinear & wait
[ -x build-new/bench/lnl-bench ] || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
export LNL_CUDA_SM90_CLUSTER=1
ab_smoke new 30 "--dtype bf16 --strategy fused" 8192,1024,1024 || { ab_pack; exit 1; }
LNL_CUDA_PINGPONG_MAX_K=65536 ab_smoke new 30 "--dtype bf16 --strategy fused" 8192,768,3072 || { ab_pack; exit 1; }
unset LNL_CUDA_SM90_CLUSTER
for d in bf16 f16; do
  for s in 4160,1024,520 8448,136,520; do
    timeout 60 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done
LNL_CUDA_SM90_CLUSTER=1 ab_quick new 100 bf16
ab_el checked
export LNL_CUDA_SM90_BN=256
for s in 8192,1024,1024 8192,768,3072 8192,4096,4096 16384,1024,4096; do
  timeout 100 python3 bench/cuda/clocks_ab.py --lib build-new/liblnlinear.so --shape $s --seconds 1.5 --rounds 3 \
      --variant coop:LNL_CUDA_PINGPONG_MAX_K=0,LNL_CUDA_SM90_CLUSTER=0 \
      --variant coopcl:LNL_CUDA_PINGPONG_MAX_K=0,LNL_CUDA_SM90_CLUSTER=1 \
      --variant pp:LNL_CUDA_PINGPONG_MAX_K=65536,LNL_CUDA_SM90_CLUSTER=0 \
      --variant ppcl:LNL_CUDA_PINGPONG_MAX_K=65536,LNL_CUDA_SM90_CLUSTER=1 >"$R/clocks_$s.txt" 2>&1
  echo "clocks $s rc $?"; tail -13 "$R/clocks_$s.txt"
done
unset LNL_CUDA_SM90_BN
ab_el timed
ab_bench 2 "old new" "--dtype bf16 --strategy fused" 8192,1024,1024 8192,4096,4096 32768,4096,256 4096,768,768
ab_el done
ab_pack
