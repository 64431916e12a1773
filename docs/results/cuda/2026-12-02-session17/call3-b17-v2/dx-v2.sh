#!/usr/bin/env bash
# Session 17, call 3: B17 v2 (branch s16-dx-epilogue): x's tile by TMA into shared
# memory for the epilogue of ln_bwd_sm90 (v1 read x with 4-byte global loads and lost:
# 0.555 ms against 0.353 at 32768,4096,256, DRAM 17%). Builds: the branch (new) and the
# branch with -DLNL_SM90_DX=0 (off: cuBLAS's dxhat and ln_bwd_reg_kernel, as on main).
# Snapshot from the branch's checkout:
#   rm -rf .snap && mkdir .snap && git archive HEAD | tar -x -C .snap && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session17/dx-v2.sh .snap/ && rm -rf .snap/docs/results
# then `cd .snap && ./dx-v2.sh` with carry [".snap"] (~5 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/dx2; mkdir -p $R
b() { local n=$1 fl=$2; shift 2
  cmake -S . -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 8 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b new "" lnl-bench test_table & b off "-DLNL_SM90_DX=0" lnl-bench &
wait; el builds
hung=0
for s in 8192,1024,1024 32768,4096,256; do
  timeout 30 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --shape $s > $R/smoke_$s.txt 2>&1
  rc=$?; [ $rc = 124 ] && hung=1
  echo "smoke $s rc $rc (124: a hang): $(grep -E ' (ok|BAD)' $R/smoke_$s.txt | awk '{print $4, $6, $12, $NF}' | paste -sd' ')"
done; el smoke
if [ $hung = 1 ]; then echo "a hang: the rest skipped"; cd $OUT && tar czf dx2.tgz dx2 && rm -rf dx2; exit 1; fi
for s in 4224,520,136 3200,1000,72 12800,200,136; do
  timeout 90 build-new/tests/test_table --device cuda --shape $s > $R/table_$s.txt 2>&1
  echo "table $s rc $?: $(tail -1 $R/table_$s.txt)"
done
for d in bf16 f16; do
  timeout 120 build-new/tests/test_table --device cuda --quick --dtype $d > $R/table_quick_$d.txt 2>&1
  echo "table quick $d rc $?: $(tail -1 $R/table_quick_$d.txt)"
done; el tables
for s in 4224,520,136 3200,1000,72; do for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
    --dtype bf16 --shape $s > $R/san_${tool}_$s.txt 2>&1
  echo "$tool $s rc $?: $(grep -E 'passed|SUMMARY' $R/san_${tool}_$s.txt | paste -sd' ' | cut -c1-150)"
  grep "Race reported" $R/san_${tool}_$s.txt | sed 's/+0x.*//;s/.*access at //' | sort | uniq -c | head -5
done; done; el sanitizers
S="--shape 4096,768,768 --shape 8192,1024,1024 --shape 8192,4096,4096 --shape 16384,8192,1024 --shape 32768,4096,256 --shape 65536,1024,256"
for r in 1 2; do for v in off new; do
  timeout 90 build-$v/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --strategy auto $S > $R/bench_${v}_$r.txt 2>&1
  echo "== $v $r rc $?"; awk '$1 == "cuda" && $4 != "cuBLAS" {print $3, $4, "bwd", $6, "f+b/floor", $11, "err", $12}' $R/bench_${v}_$r.txt
done; done; el done
cd $OUT && tar czf dx2.tgz dx2 && rm -rf dx2
