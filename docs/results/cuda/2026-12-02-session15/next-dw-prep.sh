#!/usr/bin/env bash
# For the next session with a GPU (written in session 15, not run): branch s15-dw-prep, the
# dW prep kernel (src/cuda/dw_from_x.cu) with its lanes' last rows 16 bytes at a time and
# blocks of 32 column threads x 8 row lanes, each lane at least 4 rows where M allows.
# Session 15's profile without PDL (call 6) timed the old kernel at 0.0325 ms for 6 MB of dy
# at 4096,768,768, 0.0269 at 8192,1024,1024, 0.057 at 8192,4096,4096, 0.034 at
# 16384,8192,1024 and 0.019 at 32768,4096,256. Predicted: near dy's bytes at ~3 TB/s
# (~4, 11, 22, 22 and 11 us). Checks: the bf16 CUDA table (full: FUSED's backward takes the prep
# past 2^24 multiply-adds, AUTO's where N < K), the quick f16/f32 tables (untouched paths),
# the Python tests of bf16 on CUDA, memcheck and racecheck of the quick bf16 table, then the
# prep kernel's own time (bench/cuda/profile_cuda.py, -DLNL_PDL=0 builds of main and the
# branch) and lnl-bench's FUSED/AUTO backward against main, three rounds.
# Snapshot, from the branch's checkout:
#   rm -rf .snap && mkdir -p .snap/old && git archive HEAD | tar -x -C .snap \
#     && git archive main | tar -x -C .snap/old && git rev-parse --short HEAD > .snap/COMMIT \
#     && cp docs/results/cuda/2026-12-02-session15/next-dw-prep.sh .snap/ \
#     && rm -rf .snap/docs/results .snap/old/docs/results
# then the device call `cd .snap && ./next-dw-prep.sh` with carry [".snap"] (~6 minutes).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/dwprep; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 && cmake --build build-$n -j 4 --target "$@" > $R/build_$n.log 2>&1
  echo "build $n rc $?"; }
b old old "" lnl-bench & b . new "" lnl-bench test_table lnlinear &
b old oldnp "-DLNL_PDL=0" lnlinear & b . newnp "-DLNL_PDL=0" lnlinear & wait; el builds
timeout 150 build-new/tests/test_table --device cuda --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 rc $?: $(tail -1 $R/table_bf16.txt)"
for d in f16 f32; do timeout 60 build-new/tests/test_table --device cuda --quick --dtype $d > $R/table_$d.txt 2>&1
  echo "table $d quick rc $?: $(tail -1 $R/table_$d.txt)"; done; el tables
LNLINEAR_LIBRARY=build-new/liblnlinear.so LNLINEAR_TEST_DEVICE=cuda LNLINEAR_NO_CPP=1 PYTHONPATH=python timeout 150 \
  python3 -m pytest -q -x -p no:cacheprovider tests/python -k "bfloat16 and not compile" > $R/pytest_bf16.txt 2>&1
echo "pytest bf16 rc $?: $(tail -1 $R/pytest_bf16.txt)"; el pytest
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table --device cuda --quick \
    --dtype bf16 --shape 2048,16,1088 > $R/san_$tool.txt 2>&1
  echo "$tool rc $?: $(grep -E 'passed|SUMMARY' $R/san_$tool.txt | paste -sd' ' | cut -c1-160)"
done; el sanitizers
S="4096,768,768 8192,1024,1024 8192,4096,4096 16384,8192,1024 32768,4096,256"
for v in oldnp newnp; do
  PYTHONPATH=python timeout 90 python3 bench/cuda/profile_cuda.py --lib build-$v/liblnlinear.so --dtypes bf16 \
    --shapes $S --strategies fused > $R/prof_$v.txt 2>&1
  echo "== profile $v rc $?"; grep -E "M,K,N|dw_prep|dw_sums" $R/prof_$v.txt | cut -c1-90
done; el profiles
B="--device cuda --dtype bf16"; for s in $S; do B="$B --shape $s"; done
for r in 1 2 3; do for v in old new; do
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1
  echo "== $v $r rc $?"; grep -E "fused|auto" $R/bench_${v}_$r.txt | awk '{print $3, $4, $5, $6, $11}'
done; done; el done
cd $OUT && tar czf dwprep.tgz dwprep && rm -rf dwprep
