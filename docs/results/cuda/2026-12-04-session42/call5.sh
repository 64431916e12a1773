#!/usr/bin/env bash
# Session 42, call 5, on b15e195's device code (run.sh's, call 4): #7's medians, three full
# lnl-bench runs a dtype (bf16 and f16 in turn, then float32 while the call's time lasts).
. tests/gpu/ab.sh && ab_init s42c5
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
cmake --build build-gpu -j 16 --target lnl-bench >"$R/build.log" 2>&1 || { tail -5 "$R/build.log"; ab_pack; exit 1; }
ab_el built
for r in 1 2 3; do
  for d in bf16 f16; do
    timeout 90 build-gpu/bench/lnl-bench --device cuda --dtype $d --json "$R/full_${d}_r$r.json" >"$R/full_${d}_r$r.txt" 2>&1
    echo "full $d r$r rc $?"
  done
done
ab_el 16-bit
for r in 1 2 3; do
  [ $(($(date +%s) - AB_T0)) -gt 330 ] && { echo "f32 round $r skipped (time)"; break; }
  timeout 100 build-gpu/bench/lnl-bench --device cuda --dtype f32 --json "$R/full_f32_r$r.json" >"$R/full_f32_r$r.txt" 2>&1
  echo "full f32 r$r rc $?"
done
for d in bf16 f16 f32; do
  ls "$R"/full_${d}_r*.json >/dev/null 2>&1 || continue
  python3 bench/lnl_bench_table.py --medians "$R"/full_${d}_r*.json > "$R/medians_$d.md" 2>&1; tail -9 "$R/medians_$d.md"
done
ab_el done
ab_pack
