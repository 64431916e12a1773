#!/usr/bin/env bash
# Session 43, call 2, on main with XS as the dx epilogue's default form: #7's medians (three
# full lnl-bench runs of bf16 and f16 in turn); XS against the cooperative form
# (LNL_CUDA_DX_FORM=0) in f16, rounds in turn; and FUSED's backward (the dx epilogue) against
# UNFUSED's at K/4 < N < K, outside AUTO's rule (N <= K/4), to see whether XS moves the line.
. tests/gpu/ab.sh && ab_init s43c2
ab_build gpu . "" lnl-bench test_table || { tail -5 "$R/build_gpu.log"; ab_pack; exit 1; }
ab_el built
ab_tables gpu 120 4300,1032,264 1000,1032,200
for r in 1 2 3; do
  for d in bf16 f16; do
    timeout 90 build-gpu/bench/lnl-bench --device cuda --dtype $d --json "$R/full_${d}_r$r.json" >"$R/full_${d}_r$r.txt" 2>&1
    echo "full $d r$r rc $?"
  done
done
for d in bf16 f16; do
  python3 bench/lnl_bench_table.py --medians "$R"/full_${d}_r*.json > "$R/medians_$d.md" 2>&1; tail -9 "$R/medians_$d.md"
done
ab_el medians
for r in 1 2; do
  for v in 0 1; do
    LNL_CUDA_DX_FORM=$v timeout 60 build-gpu/bench/lnl-bench --device cuda --dtype f16 --strategy auto \
        --shape 32768,4096,256 --shape 16384,8192,1024 --shape 65536,1024,256 >"$R/f16_form${v}_r$r.txt" 2>&1
    echo "== f16 form $v round $r rc $?"; ab_rows "$R/f16_form${v}_r$r.txt"
  done
done
ab_el forms
for r in 1 2; do
  for d in bf16 f16; do
    timeout 90 build-gpu/bench/lnl-bench --device cuda --dtype $d --strategy fused --strategy unfused \
        --shape 8192,4096,2048 --shape 16384,2048,1024 --shape 8192,2048,1024 --shape 16384,4096,2048 \
        --shape 8192,4096,1536 --shape 4096,4096,2048 >"$R/mid_${d}_r$r.txt" 2>&1
    echo "== mid N $d round $r rc $?"; ab_rows "$R/mid_${d}_r$r.txt"
  done
done
ab_el done
ab_pack
