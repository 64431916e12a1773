#!/usr/bin/env bash
# Session 41, call 1: f16's dx epilogue. f16's dW from the raw x now scales rstd dy by a
# power of two (dw_from_x.cu), so f16 takes that path where N < K, and with it FUSED's dx
# epilogue (dx_epilogue_sm90.cu, templated on the dtype). Correctness first (f16 table,
# the new tiny-spread row in both 16-bit dtypes, memcheck, the Python tests of the path),
# then old (main at 1e05520, ./ab-old) against new, lnl-bench rounds in turn.
. tests/gpu/ab.sh && ab_init call1
ab_build new . "" lnl-bench test_table lnlinear & ab_build old ab-old "" lnl-bench & wait
ab_el built
ab_smoke new 60 "--dtype f16 --strategy fused" 1000,1032,200 32768,4096,256 || { ab_pack; exit 1; }
timeout 300 build-new/tests/test_table --device cuda --dtype f16 > "$R/table_f16.txt" 2>&1 &
p1=$!
(for s in 600,2056,16 1000,1032,200 300,1032,72 129,768,257; do
  timeout 120 build-new/tests/test_table --device cuda --dtype bf16 --shape $s > "$R/table_bf16_$s.txt" 2>&1
  echo "table bf16 $s rc $?: $(tail -1 "$R/table_bf16_$s.txt")"
done) &
p2=$!
(for s in 600,2056,16 300,1032,72 260,1288,96; do
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --dtype f16 --shape $s > "$R/memcheck_$s.txt" 2>&1
  echo "memcheck f16 $s rc $?: $(grep -E 'passed|ERROR SUMMARY' "$R/memcheck_$s.txt" | paste -sd' ' | cut -c1-200)"
done) &
p3=$!
ab_pytest new 280 "dw_from_x or auto_small_n or dx_epilogue or workspace or saved_y" &
p4=$!
wait $p1; echo "table f16 rc $?: $(tail -1 "$R/table_f16.txt")"; grep -m5 -i "fail" "$R/table_f16.txt"
wait $p2 $p3 $p4
ab_el checked
AB_BENCH_LIMIT=120 ab_bench 2 "old new" "--dtype f16 --strategy auto" 32768,4096,256 16384,8192,1024 65536,1024,256 8192,4096,1024
AB_BENCH_LIMIT=120 ab_bench 2 "old new" "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024
ab_el ab
for r in 1 2 3; do
  timeout 90 build-new/bench/lnl-bench --device cuda --dtype f16 --json "$R/full_f16_r$r.json" > "$R/full_f16_r$r.txt" 2>&1
  echo "full f16 r$r rc $?"
done
python3 bench/lnl_bench_table.py --medians "$R"/full_f16_r*.json > "$R/medians_f16.md" 2>&1; tail -12 "$R/medians_f16.md"
ab_el done
ab_pack
