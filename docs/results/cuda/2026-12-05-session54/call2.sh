#!/usr/bin/env bash
# Session 54, call 2, on main's code of call 1 (5e7d6e6 and later commits that change no
# device code): #7's medians, then what call 1's run.sh could not finish.
# 1. three full lnl-bench runs of bf16 and f16 in turn, alone on the GPU (the medians the
#    README's verdicts are taken from: bench/lnl_bench_table.py --medians);
# 2. then, side by side, the run.sh steps that ran out of their limits in call 1 (a
#    16-core H100 host running all 23 steps at once): memcheck and synccheck on the quick
#    table without AUTO's rows, racecheck on bf16's and f16's FUSED rows, and ctest; each
#    cut off so that the call ends inside the device tool's 600 s.
. tests/gpu/ab.sh && ab_init s54c2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/summary.txt"
if [ ! -x build-gpu/bench/lnl-bench ] || [ ! -x build-gpu/tests/test_table ]; then
  { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >/dev/null &&
    cmake --build build-gpu -j 16 >"$R/build.log" 2>&1; } || { echo "build failed" | tee -a "$R/summary.txt"; ab_pack; exit 1; }
fi
ab_el "built" | tee -a "$R/summary.txt"
for r in 1 2 3; do
  for d in bf16 f16; do
    timeout 70 build-gpu/bench/lnl-bench --device cuda --dtype $d --json "$R/full_${d}_r$r.json" >"$R/full_${d}_r$r.txt" 2>&1
    echo "full $d r$r rc $? $(ab_el)" | tee -a "$R/summary.txt"
  done
done
for d in bf16 f16; do
  python3 bench/lnl_bench_table.py --medians "$R"/full_${d}_r*.json >"$R/medians_$d.md" 2>&1
done
left=$(( 570 - $(date +%s) + AB_T0 ))
ab_el "sanitizers with ${left} s" | tee -a "$R/summary.txt"
TABLE=build-gpu/tests/test_table
san() { # NAME CMD...: under the time left, one line to the summary
  local n=$1; shift
  timeout "$left" "$@" >"$R/$n.log" 2>&1
  echo "$n: exit $? $(tail -n 2 "$R/$n.log" | tr '\n' ' ' | cut -c1-200)" >>"$R/summary.txt"
}
for tool in memcheck synccheck; do
  san "$tool" compute-sanitizer --tool $tool --error-exitcode 99 $TABLE --device cuda --quick --no-auto &
done
for dt in bf16 f16; do
  san "racecheck_${dt}_fused" tests/gpu/racecheck_ours.sh $TABLE --device cuda --quick --no-auto \
      --dtype $dt --strategy fused &
done
san ctest ctest --test-dir build-gpu --output-on-failure -j 4 &
wait
ab_el "done" | tee -a "$R/summary.txt"
cat "$R/summary.txt"; tail -n 14 "$R"/medians_*.md
ab_pack
