#!/usr/bin/env bash
# Session 45's device script, call 1 of 2 (written in session 45, which was lent no device:
# run it from the branch s45-dx-xs3). The dx epilogue kernel with three x tile buffers
# (XS3, LNL_CUDA_DX_FORM=2; the branch's default up to N = 256) and the XS forms in clusters
# of two CTAs sharing W^T slices (CL, LNL_CUDA_DX_CLUSTER=1; off unless asked for), one
# build: checks only. A hang shows as rc 124 in the smoke runs, which come first; then the
# dx rows of the CUDA table (F_DX_FEW_CTAS rows give each CTA ten or more tiles), the
# sanitizers on two quick rows, the Python tests of the path. Call 2 times them.
. tests/gpu/ab.sh && ab_init s45c1
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
LNL_CUDA_DX_FORM=2 ab_smoke new 40 "--dtype bf16 --strategy auto" 32768,4096,256 600,1032,200 || { ab_pack; exit 1; }
LNL_CUDA_DX_CLUSTER=1 ab_smoke new 40 "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024 650,1032,200 || { ab_pack; exit 1; }
for d in bf16 f16; do
  for s in 600,1032,200 600,1032,264 650,1032,200 650,1032,264 2200,1032,136 1000,1032,200 600,2056,72 300,1032,72 260,1288,96 600,2056,16 4300,1032,264; do
    timeout 60 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done
# forced forms: XS3 where N > 256 (K's 5 slices of N outrun its 3-stage ring), XS at N <= 256
for v in "LNL_CUDA_DX_FORM=2 4300,1032,264" "LNL_CUDA_DX_FORM=1 600,1032,200" "LNL_CUDA_DX_FORM=2 650,1032,264"; do
  set -- $v
  env "$1" timeout 60 build-new/tests/test_table --device cuda --shape "$2" >"$R/table_forced_$1_$2.txt" 2>&1
  echo "table $1 $2 rc $?: $(tail -1 "$R/table_forced_$1_$2.txt")"
done
ab_el tables
AB_SAN_LIMIT=100 ab_sanitize new f16 600,1032,200 650,1032,200
ab_el sanitized
ab_pytest new 150 "dx_epilogue or saved_y"
mv "$R/pytest_new.txt" "$R/pytest_new_nocl.txt"
LNL_CUDA_DX_CLUSTER=1 ab_pytest new 150 "dx_epilogue or saved_y"
ab_el done
ab_pack
