#!/usr/bin/env bash
# Session 34, call 3 (right after call 2's tests/gpu/run.sh, whose build-gpu it reuses):
# bench/compare.py against eager, bf16 and f16, on the library with both workspace cuts
# (time and peak memory); then f32 where time is left.
# device call: `bash docs/results/cuda/2026-12-03-session34/call3.sh`
set -o pipefail
R=$OUT/s34c3 && mkdir -p "$R"
[ -f build-gpu/liblnlinear.so ] || cmake --build build-gpu -j 16 >"$R/build.log" 2>&1 ||
    { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >>"$R/build.log" 2>&1 &&
        cmake --build build-gpu -j 16 --target lnlinear lnlinear_torch >>"$R/build.log" 2>&1; }
ls build-gpu/liblnlinear*.so
for d in "bf16 f16" f32; do
    tag=${d// /_}
    LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 timeout 250 \
        python3 bench/compare.py --device cuda --dtypes $d --no-compile \
        --candidates lnl_fused lnl_auto eager floor --out "$R/cmp_$tag" --time-limit-s 200 \
        >"$R/compare_log_$tag.txt" 2>&1
    echo "compare $d rc $?"
    grep -A20 "^## Headline" "$R/cmp_$tag/results.md" | grep "^| [0-9]"
    grep -E "^\| (lnlinear auto|PyTorch eager)" "$R/cmp_$tag/results.md" | awk -F'|' '{print $2, "peak", $10}' | paste -sd' ' | sed 's/ lnlinear/\nlnlinear/g'
done
