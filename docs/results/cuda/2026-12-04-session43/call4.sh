#!/usr/bin/env bash
# Session 43, call 4, on main at run.sh's tree (call 3): the host time of a call
# (bench/cuda/host_breakdown.py --fb-only, run.sh's build-gpu library and C++ op), the
# package as it is against fb2be46's functional.py and _cpp.py (call3-oldpy/, untracked,
# removed after the call), in turn; then bench/compare.py against eager at the shapes
# where a call is host-bound, bf16 and f16.
. tests/gpu/ab.sh && ab_init s43c4
if [ ! -f build-gpu/liblnlinear_torch.so ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >"$R/cfg.log" 2>&1 &&
      cmake --build build-gpu -j 16 --target lnlinear lnlinear_torch >"$R/build.log" 2>&1 || { tail -5 "$R/build.log"; ab_pack; exit 1; }
fi
ab_el built
D=docs/results/cuda/2026-12-04-session43
for r in 1 2; do
  for v in new old; do
    pp=python; [ $v = old ] && pp=$D/call3-oldpy
    for s in 16,8,16 4096,768,768; do
      LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=$pp timeout 100 python3 bench/cuda/host_breakdown.py \
          --dtype bf16 --shape $s --fb-only > "$R/host_${v}_${s}_r$r.txt" 2>&1
      echo "== host $v $s r$r rc $?"; grep -E "recording|forward\+backward$" "$R/host_${v}_${s}_r$r.txt"
    done
  done
  ab_el "host round $r"
done
LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 timeout 150 \
    python3 bench/compare.py --device cuda --dtypes bf16 f16 --no-compile --shapes 16,8,16 4096,768,768 8192,1024,1024 \
    --candidates lnl_fused lnl_auto eager floor --out "$R/cmp" --time-limit-s 110 >"$R/compare_log.txt" 2>&1
echo "compare rc $?"
grep -A12 "^## Headline" "$R/cmp/results.md" | grep "^| "
ab_el done
ab_pack
