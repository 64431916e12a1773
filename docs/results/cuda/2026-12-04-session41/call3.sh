#!/usr/bin/env bash
# Session 41, call 3 (main at a74a2e0): f16's scale taken by the dx epilogue's rows' pass
# (now before the dW path) instead of a pass of its own; the pass that remains (UNFUSED, or
# FUSED without y) grid-strided with four chunks' loads in flight. Checks (f16 table, the
# tiny-spread rows, memcheck and racecheck on the f16 epilogue rows, the path's Python
# tests), kernel times (-DLNL_PDL=0), old (1e05520) against new in turn, then three full
# lnl-bench runs a 16-bit dtype for #7's medians.
. tests/gpu/ab.sh && ab_init call3
ab_build new . "" lnl-bench test_table lnlinear & ab_build old ab-old "" lnl-bench & ab_build nopdl . "-DLNL_PDL=0" lnlinear & wait
ab_el built
ab_smoke new 60 "--dtype f16 --strategy fused" 1000,1032,200 32768,4096,256 || { ab_pack; exit 1; }
timeout 300 build-new/tests/test_table --device cuda --dtype f16 > "$R/table_f16.txt" 2>&1 &
p1=$!
(for s in 600,2056,16 1000,1032,200 600,2056,72; do
  timeout 120 build-new/tests/test_table --device cuda --dtype bf16 --shape $s > "$R/table_bf16_$s.txt" 2>&1
  echo "table bf16 $s rc $?: $(tail -1 "$R/table_bf16_$s.txt")"
done) &
p2=$!
(AB_SAN_LIMIT=150; for s in 600,2056,16 300,1032,72; do
  f=$R/memcheck_$s.txt
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table --device cuda --dtype f16 --shape $s > "$f" 2>&1
  echo "memcheck f16 $s rc $?: $(grep -E 'passed|ERROR SUMMARY' "$f" | paste -sd' ' | cut -c1-200)"
  f=$R/racecheck_$s.txt
  timeout 200 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --dtype f16 --shape $s > "$f" 2>&1
  echo "racecheck f16 $s rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-200)"
done) &
p3=$!
ab_pytest new 280 "dw_from_x or auto_small_n or dx_epilogue or workspace or saved_y" &
p4=$!
wait $p1; echo "table f16 rc $?: $(tail -1 "$R/table_f16.txt")"; grep -m5 "FAIL" "$R/table_f16.txt"
wait $p2 $p3 $p4
ab_el checked
timeout 150 python3 bench/cuda/profile_cuda.py --lib build-nopdl/liblnlinear.so \
    --shapes 16384,8192,1024 32768,4096,256 8192,4096,1024 --dtypes f16 --strategies auto unfused \
    --iters 5 > "$R/profile.txt" 2>&1
echo "profile rc $?"
grep -v "^ *$" "$R/profile.txt" | grep -v -i "warn" | grep -A9 "lnlinear"
ab_el profiled
AB_BENCH_LIMIT=120 ab_bench 2 "old new" "--dtype f16 --strategy auto" 32768,4096,256 16384,8192,1024 65536,1024,256 8192,4096,1024 16384,4096,1024
AB_BENCH_LIMIT=120 ab_bench 2 "old new" "--dtype f16 --strategy unfused" 32768,4096,256 16384,8192,1024
AB_BENCH_LIMIT=120 ab_bench 2 "old new" "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024 8192,4096,1024
ab_el ab
for r in 1 2 3; do
  for d in f16 bf16; do
    timeout 90 build-new/bench/lnl-bench --device cuda --dtype $d --json "$R/full_${d}_r$r.json" > "$R/full_${d}_r$r.txt" 2>&1
    echo "full $d r$r rc $?"
  done
done
for d in f16 bf16; do
  python3 bench/lnl_bench_table.py --medians "$R"/full_${d}_r*.json > "$R/medians_$d.md" 2>&1; tail -9 "$R/medians_$d.md"
done
ab_el done
ab_pack
