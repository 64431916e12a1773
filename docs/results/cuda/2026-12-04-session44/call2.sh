#!/usr/bin/env bash
# Session 44, call 2: clusters (CL) on by default at 256-wide tiles. The table's cluster
# rows in both dtypes; f16 and one more bf16 shape at the power cap, cooperative against
# CL; then memcheck / synccheck / racecheck (side by side) on the quick rows that take CL
# (600,264,520 cooperative, 4224,1024,520 ping-pong).
. tests/gpu/ab.sh && ab_init cl2
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_smoke new 30 "--dtype f16 --strategy fused" 8192,1024,1024 || { ab_pack; exit 1; }
for d in bf16 f16; do
  for s in 4160,1024,520 600,264,520 8448,136,520 8448,136,1024 4224,1024,520; do
    timeout 60 build-new/tests/test_table --device cuda --dtype $d --shape $s >"$R/table_${d}_$s.txt" 2>&1
    echo "table $d $s rc $?: $(tail -1 "$R/table_${d}_$s.txt")"
  done
done
ab_el checked
for s in 8192,4096,4096 16384,1024,4096; do
  timeout 60 python3 bench/cuda/clocks_ab.py --lib build-new/liblnlinear.so --dtype f16 --shape $s --seconds 1.5 --rounds 3 \
      --variant coop:LNL_CUDA_SM90_CLUSTER=0 --variant cl:LNL_CUDA_SM90_CLUSTER=2 >"$R/clocks_f16_$s.txt" 2>&1
  echo "clocks f16 $s rc $?"; tail -6 "$R/clocks_f16_$s.txt"
done
timeout 60 python3 bench/cuda/clocks_ab.py --lib build-new/liblnlinear.so --shape 8192,4096,12288 --seconds 1.5 --rounds 3 \
    --variant coop:LNL_CUDA_SM90_CLUSTER=0 --variant cl:LNL_CUDA_SM90_CLUSTER=2 >"$R/clocks_bf16_8192,4096,12288.txt" 2>&1
echo "clocks bf16 8192,4096,12288 rc $?"; tail -6 "$R/clocks_bf16_8192,4096,12288.txt"
ab_el timed
for s in 600,264,520 4224,1024,520; do
  for tool in memcheck synccheck; do
    (timeout 200 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda \
        --quick --dtype bf16 --shape $s >"$R/san_${tool}_$s.txt" 2>&1; echo "$tool $s rc $?" >>"$R/san_rc.txt") &
  done
  (timeout 200 tests/gpu/racecheck_ours.sh build-new/tests/test_table --device cuda --quick --dtype bf16 --shape $s \
      >"$R/san_racecheck_$s.txt" 2>&1; echo "racecheck $s rc $?" >>"$R/san_rc.txt") &
done
wait
cat "$R/san_rc.txt"
for f in "$R"/san_*_*.txt; do echo "$(basename "$f"): $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-220)"; done
ab_el done
ab_pack
