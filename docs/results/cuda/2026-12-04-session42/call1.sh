#!/usr/bin/env bash
# Session 42, call 1, on main at 5528299 (d5c18ba's device code but for ab54adc's two swapped
# comparisons): the state of record before any change.
#  - bench/compare.py against PyTorch eager, bf16 + f16 and f32 (last run: session 37,
#    before either 16-bit dx epilogue);
#  - bench/dw_from_x_numerics.py --dtype f16 --device cuda: the tensor-core column that
#    session 41 left unrun, which decides whether f16's off-centre limit may rise from 16;
#  - kernel times (-DLNL_PDL=0) of the FUSED and UNFUSED forward+backward at the shapes
#    where #7's forward misses furthest;
# device call: `bash docs/results/cuda/2026-12-04-session42/call1.sh`
. tests/gpu/ab.sh && ab_init s42c1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >"$R/cfg_gpu.log" 2>&1 &&
    cmake --build build-gpu -j 12 --target lnlinear lnlinear_torch lnl-bench >"$R/build_gpu.log" 2>&1 &
ab_build nopdl . "-DLNL_PDL=0" lnlinear &
wait
[ -f build-gpu/liblnlinear.so ] || { tail -5 "$R/build_gpu.log"; ab_pack; exit 1; }
ab_el built
LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python timeout 120 \
    python3 bench/dw_from_x_numerics.py --dtype f16 --device cuda --offsets 0 4 16 32 64 128 256 \
    >"$R/dw_from_x_numerics_f16_cuda.md" 2>&1
echo "numerics rc $?"; tail -15 "$R/dw_from_x_numerics_f16_cuda.md"
ab_el numerics
timeout 200 python3 bench/cuda/profile_cuda.py --lib build-nopdl/liblnlinear.so \
    --shapes 8192,1024,1024 16384,8192,1024 8192,768,3072 8192,4096,4096 --dtypes bf16 \
    --strategies fused unfused --iters 5 >"$R/profile_nopdl.txt" 2>&1
echo "profile rc $?"
ab_el profiled
for d in "bf16 f16" f32; do
    tag=${d// /_}
    LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 timeout 250 \
        python3 bench/compare.py --device cuda --dtypes $d --no-compile \
        --candidates lnl_fused lnl_auto eager floor --out "$R/cmp_$tag" --time-limit-s 200 \
        >"$R/compare_log_$tag.txt" 2>&1
    echo "compare $d rc $?"
    grep -A20 "^## Headline" "$R/cmp_$tag/results.md" | grep "^| [0-9]"
done
ab_el compared
ab_el done
ab_pack
