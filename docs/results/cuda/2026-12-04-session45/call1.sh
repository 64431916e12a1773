#!/usr/bin/env bash
# Session 45, call 1: the dx epilogue kernel with three x tile buffers (XS3,
# LNL_CUDA_DX_FORM=2; the default up to N = 256) against XS (=1), one build. A hang shows as
# rc 124 in the smoke runs, which come first; then the dx rows of the CUDA table (the new
# F_DX_FEW_CTAS rows give each CTA ten tiles), the sanitizers on the quick ones, the Python
# tests of the path, the kernels' times under the profiler (forms in turn), lnl-bench rounds.
. tests/gpu/ab.sh && ab_init xs3
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
LNL_CUDA_DX_FORM=2 ab_smoke new 40 "--dtype bf16 --strategy auto" 32768,4096,256 600,1032,200 || { ab_pack; exit 1; }
LNL_CUDA_DX_FORM=2 ab_smoke new 40 "--dtype f16 --strategy auto" 16384,8192,1024 || { ab_pack; exit 1; }
for d in bf16 f16; do
  for s in 600,1032,200 600,1032,264 1000,1032,200 600,2056,72 300,1032,72 260,1288,96 600,2056,16 4300,1032,264; do
    timeout 60 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done
# XS3 forced where N > 256 (K's 5 slices of N outrun its 3-stage ring), and XS forced on a
# few-CTA row at N <= 256
LNL_CUDA_DX_FORM=2 timeout 60 build-new/tests/test_table --device cuda --shape 4300,1032,264 >"$R/table_xs3_4300.txt" 2>&1
echo "table XS3 forced 4300,1032,264 rc $?: $(tail -1 "$R/table_xs3_4300.txt")"
LNL_CUDA_DX_FORM=1 timeout 60 build-new/tests/test_table --device cuda --shape 600,1032,200 >"$R/table_xs_600.txt" 2>&1
echo "table XS forced 600,1032,200 rc $?: $(tail -1 "$R/table_xs_600.txt")"
ab_el tables
AB_SAN_LIMIT=100 ab_sanitize new f16 600,1032,200
ab_el sanitized
ab_pytest new 150 "dx_epilogue or saved_y"
ab_el pytest
for r in 1 2; do
  for v in 1 2; do
    LNL_CUDA_DX_FORM=$v timeout 90 python3 bench/cuda/profile_cuda.py --lib build-new/liblnlinear.so \
        --shapes 32768,4096,256 65536,1024,256 12800,4096,256 32768,4096,128 32768,4096,512 16384,8192,1024 \
        --dtypes bf16 --strategies auto --iters 5 >"$R/profile_f${v}_r$r.txt" 2>&1
    echo "profile form $v round $r rc $?: dx_epilogue_kernel ms $(grep dx_epilogue_kernel "$R/profile_f${v}_r$r.txt" | awk '{print $1}' | paste -sd' ')"
  done
done
ab_el profiled
for r in 1 2 3; do
  for v in 1 2; do
    LNL_CUDA_DX_FORM=$v timeout 60 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto \
        --shape 32768,4096,256 --shape 65536,1024,256 --shape 32768,4096,128 >"$R/bench_f${v}_r$r.txt" 2>&1
    echo "== form $v round $r rc $?"; ab_rows "$R/bench_f${v}_r$r.txt"
  done
done
ab_el done
ab_pack
