#!/usr/bin/env bash
# Session 43, call 5, on main at 461b4dc (run.sh's device code; the fast path's test as
# e51c679 left it): bench/compare.py against eager at the host-bound 4096,768,768 (and
# 8192,768,3072 beside it), bf16 and f16, with a longer timing budget than the standard
# run's 2 s a shape, so the forward-alone verdict rests on more samples.
. tests/gpu/ab.sh && ab_init s43c5
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j 16 --target lnlinear lnlinear_torch >"$R/build.log" 2>&1 || { tail -5 "$R/build.log"; ab_pack; exit 1; }
ab_el built
LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 timeout 150 \
    python3 bench/compare.py --device cuda --dtypes bf16 f16 --no-compile --shapes 4096,768,768 8192,768,3072 \
    --candidates lnl_fused lnl_auto eager floor --budget-s 12 --reps 400 --out "$R/cmp" --time-limit-s 100 \
    >"$R/compare_log.txt" 2>&1
echo "compare rc $?"
grep -A8 "^## Headline" "$R/cmp/results.md" | grep "^| "
ab_el done
ab_pack
