#!/usr/bin/env bash
# Session 37, call 2, on main's device code (call 1's variants reverted; the Hopper forward's
# SASS is 3d04945's, which session 36's run.sh proved):
#  - the statistics tests with the new late_offset case and the two new shapes (12800,4096,256
#    and 3000,16384,136: one column of tiles) on the shipped shifted sums;
#  - lnl-bench float32, three rounds (#7's f32 target; last measured in session 35);
#  - bench/compare.py against PyTorch eager, bf16 + f16 and f32 (last run in session 34).
# device call: `bash docs/results/cuda/2026-12-04-session37/call2.sh`
. tests/gpu/ab.sh && ab_init s37c2 # results in $R ($OUT/s37c2)
# the torch op too (ab_build leaves it out), as compare.py ran in session 34
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >"$R/cfg_gpu.log" 2>&1 &&
    cmake --build build-gpu -j 16 --target lnlinear lnlinear_torch lnl-bench >"$R/build_gpu.log" 2>&1 ||
    { tail -5 "$R/build_gpu.log"; ab_pack; exit 1; }
ab_el built
ab_pytest gpu 200 "stats_inside"
ab_el pytest
for r in 1 2 3; do
    timeout 150 build-gpu/bench/lnl-bench --device cuda --dtype f32 \
        --json "$R/bench_f32_r$r.json" >"$R/bench_f32_r$r.log" 2>&1
    echo "lnl-bench f32 round $r rc $? ($(grep -c ' ok$' "$R/bench_f32_r$r.log") ok, $(grep -c ' FAIL$' "$R/bench_f32_r$r.log") FAIL)"
done
python3 bench/lnl_bench_table.py --medians "$R"/bench_f32_r1.json "$R"/bench_f32_r2.json \
    "$R"/bench_f32_r3.json >"$R/medians_f32.md" 2>&1
echo "medians rc $?"
ab_el lnl-bench
for d in "bf16 f16" f32; do
    tag=${d// /_}
    LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 timeout 250 \
        python3 bench/compare.py --device cuda --dtypes $d --no-compile \
        --candidates lnl_fused lnl_auto eager floor --out "$R/cmp_$tag" --time-limit-s 200 \
        >"$R/compare_log_$tag.txt" 2>&1
    echo "compare $d rc $?"
    grep -A20 "^## Headline" "$R/cmp_$tag/results.md" | grep "^| [0-9]"
done
ab_el done
ab_pack
