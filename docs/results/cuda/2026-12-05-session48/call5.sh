#!/usr/bin/env bash
# Session 48, call 5, on 69b9d63 (run.sh's build-gpu from call 3 when the machine kept it):
# #7's medians, three full lnl-bench runs of bf16 and f16 in turn.
. tests/gpu/ab.sh && ab_init s48c5
[ -x build-gpu/bench/lnl-bench ] || ab_build gpu . "" lnl-bench || { ab_pack; exit 1; }
for r in 1 2 3; do
  for d in bf16 f16; do
    timeout 90 build-gpu/bench/lnl-bench --device cuda --dtype $d --json "$R/full_${d}_r$r.json" >"$R/full_${d}_r$r.txt" 2>&1
    echo "full $d r$r rc $?"
  done
done
for d in bf16 f16; do
  python3 bench/lnl_bench_table.py --medians "$R"/full_${d}_r*.json > "$R/medians_$d.md" 2>&1; tail -12 "$R/medians_$d.md"
done
ab_el done
ab_pack
