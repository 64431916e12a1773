#!/usr/bin/env bash
# For the next session with a GPU (written in session 16, not run): branch s16-dx-epilogue,
# the LayerNorm backward in the epilogue of our own dy . W GEMM on Hopper
# (src/cuda/ln_backward_sm90.cu, variant B17 of docs/results/cuda/2026-11-30-sm90-variants.md):
# dxhat is never written; each tile's rows' sums merge across the row's K / 256 column tiles
# through global memory after a counter (the forward's split statistics' pattern, with up
# to 32 tiles), then dx from the float32 accumulators and dgamma/dbeta partials per m-tile.
# Predicted: at 32768,4096,256 the backward moves 2 x 268 MB less (cuBLAS's dxhat written
# and read back): ~0.53 -> ~0.35-0.4 ms, AUTO forward+backward / floor 1.24 -> ~1.0; at
# 16384,8192,1024 1.09 -> ~1.0. Risks: the epilogue spills (~500-800 bytes a thread, ptxas,
# outside the main loop) and reads x with 4-byte loads; a CTA waits on others (a hang: every
# step is under a timeout, the smoke test first).
# Builds: main (old), the branch (new), the branch with -DLNL_SM90_DX=0 (off: cuBLAS's
# dxhat and launch_ln_backward, as on main).
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session16/next-dx-epilogue.sh .snap/ \
#     && rm -rf .snap/docs/results .snap/old/docs/results
# then the device call `cd .snap && ./next-dx-epilogue.sh` with carry [".snap"] (~8 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/dx; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 5 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b old old "" lnl-bench & b . new "" lnl-bench test_table lnlinear & b . off "-DLNL_SM90_DX=0" lnl-bench &
wait; el builds
hung=0
for s in 8192,1024,1024 32768,4096,256; do
  timeout 30 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy unfused --shape $s > $R/smoke_$s.txt 2>&1
  rc=$?; [ $rc = 124 ] && hung=1
  echo "smoke $s rc $rc (124: a hang): $(grep -E ' (ok|BAD)' $R/smoke_$s.txt | awk '{print $4, $12, $NF}' | paste -sd' ')"
done; el smoke
if [ $hung = 1 ]; then echo "a hang: the rest skipped"; cd $OUT && tar czf dx.tgz dx && rm -rf dx; exit 1; fi
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
LNLINEAR_LIBRARY=build-new/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda LNLINEAR_NO_CPP=1 PYTHONPATH=python timeout 150 \
  python3 -m pytest -q -p no:cacheprovider tests/python -k "(bfloat16 or float16 or bf16 or f16) and not compile" \
  > $R/pytest.txt 2>&1
echo "pytest rc $?: $(tail -1 $R/pytest.txt)"; el pytest
S="--shape 4096,768,768 --shape 8192,768,3072 --shape 8192,1024,1024 --shape 8192,4096,4096 --shape 16384,8192,1024 --shape 32768,4096,256"
for r in 1 2; do for v in old off new; do
  timeout 90 build-$v/bench/lnl-bench --device cuda --dtype bf16 $S > $R/bench_${v}_$r.txt 2>&1
  echo "== $v $r rc $?"; awk '$1 == "cuda" && $4 != "cuBLAS" {print $3, $4, "bwd", $6, "f+b/floor", $11, "err", $12}' $R/bench_${v}_$r.txt
done; done; el done
cd $OUT && tar czf dx.tgz dx && rm -rf dx
