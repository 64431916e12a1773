#!/usr/bin/env bash
# Session 54, call 4: bench/compare.py against PyTorch eager on main's library (the last
# such run was session 42's, on the H200): #7's "faster than eager on every shape", with
# FUSED, AUTO, eager and the GEMM floor timed round-robin in one process; bf16 and f16,
# then float32 with what is left of the call (CALL_S, 400 s by default).
. tests/gpu/ab.sh && ab_init s54c4
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/summary.txt"
{ cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >/dev/null &&
  cmake --build build-gpu -j 16 --target lnlinear lnlinear_torch >"$R/build.log" 2>&1; } ||
  { echo "build failed" | tee -a "$R/summary.txt"; ab_pack; exit 1; }
ab_el built | tee -a "$R/summary.txt"
cmp() { # TAG LIMIT_S DTYPES...
  local tag=$1 lim=$2; shift 2
  LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 \
    timeout $((lim + 50)) python3 bench/compare.py --device cuda --dtypes "$@" --no-compile \
    --candidates lnl_fused lnl_auto eager floor --out "$R/cmp_$tag" --time-limit-s "$lim" \
    >"$R/compare_log_$tag.txt" 2>&1
  echo "compare $tag rc $? $(ab_el)" | tee -a "$R/summary.txt"
  grep -A30 "^## Headline" "$R/cmp_$tag/results.md" | grep "^| [0-9]"
}
cmp bf16_f16 "${CMP_S:-170}" bf16 f16
left=$(( ${CALL_S:-400} - $(date +%s) + AB_T0 ))
[ "$left" -gt 40 ] && cmp f32 "$left" f32
rm -f "$R"/cmp_*/*.png
ab_el done | tee -a "$R/summary.txt"
ab_pack
