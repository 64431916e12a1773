#!/usr/bin/env bash
# Session 43, call 6, on branch s43-dwx-wide (main at 10b8c64 + LNL_CUDA_DW_X_N_OVER_K, an
# experiment, not merged): dW from the raw x (dy' = rstd dy, db from its sums, no LN(x)
# rebuilt, no column-sum pass) at N >= K, against the rule's LN(x) rebuild there, AUTO
# backward, rounds in turn. Session 28 measured the rebuild 13-17% faster at 8192,1024,1024
# and 8192,768,3072 (FUSED's backward), before the prep kernel's one-wave grid (session 35).
. tests/gpu/ab.sh && ab_init s43c6
ab_build gpu . "" lnl-bench || { tail -5 "$R/build_gpu.log"; ab_pack; exit 1; }
ab_el built
for r in 1 2 3; do
  for v in 1 8; do
    for d in bf16 f16; do
      LNL_CUDA_DW_X_N_OVER_K=$v timeout 40 build-gpu/bench/lnl-bench --device cuda --dtype $d --strategy auto \
          --shape 8192,1024,1024 --shape 8192,768,3072 --shape 4096,768,768 --shape 8192,4096,4096 \
          >"$R/bwd_r${v}_${d}_$r.txt" 2>&1
      echo "== N<${v}K $d round $r rc $?"; ab_rows "$R/bwd_r${v}_${d}_$r.txt"
    done
  done
  ab_el "round $r"
  [ $(($(date +%s) - AB_T0)) -gt 170 ] && break
done
ab_pack
