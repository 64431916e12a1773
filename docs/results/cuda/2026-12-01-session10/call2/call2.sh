#!/usr/bin/env bash
# session 10 call 2: branch s10-colsum (see COMMIT) against main 568abaa (old/):
#  2-D column sums (fixed loop), G = ceil(M/R), LNL_LN_BWD_MIN_ROWS 8, warp-a-row LayerNorm forward.
#  Builds: -DLNL_PDL=0 (per-kernel times) and with PDL (lnl-bench; new also its tests).
#  1. test_table --device cuda --quick on new;
#  2. profile_cuda.py AUTO bf16, old/new alternating, two rounds;
#  3. lnl-bench bf16 (every strategy) at #7's shapes, old/new alternating, two rounds;
#  4. memcheck and racecheck (ours judged) on four table rows that take the new kernels' shapes.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c2; mkdir -p $R
b() { # src name cuda_flags targets...
  local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 \
   && cmake --build build-$n -j 4 --target "$@" > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b old old-nopdl -DLNL_PDL=0 lnlinear & b . new-nopdl -DLNL_PDL=0 lnlinear &
b old old-pdl "" lnl-bench & b . new-pdl "" lnl-bench test_table &
wait; el builds done
TT=build-new-pdl/tests/test_table
timeout 120 $TT --device cuda --quick > $R/table_quick.txt 2>&1; el "table quick rc $?"; tail -n 1 $R/table_quick.txt
SH="4096,768,768 8192,1024,1024 8192,768,3072 8192,4096,4096 8192,4096,12288 16384,768,768"
for r in 1 2; do for v in old new; do
  timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$v-nopdl/liblnlinear.so --dtypes bf16 --iters 20 --shapes $SH > $R/profile_${v}_$r.txt 2>&1; el "profile $v $r rc $?"
done; done
for f in $R/profile_*.txt; do echo "== $(basename $f)"; awk '/^bf16 M,K,N/{s=$4" "$5" "$6} /lnlinear auto/{print s" total "$3} /ln_fwd_|ln_bwd_(reg|ring)_kernel|reduce_partials_kernel|colsum_partials/{n=$5; sub(/<.*/,"",n); sub(/.*lnl::/,"",n); print s" "$1" "$2" "n}' $f; done
BS="--device cuda --dtype bf16"
for s in 16,8,16 4096,768,768 8192,768,3072 8192,1024,1024 8192,4096,4096 8192,4096,12288 16384,8192,1024 32768,4096,256; do BS="$BS --shape $s"; done
for r in 1 2; do for v in old new; do
  [ $(( $(date +%s) - T0 )) -lt 400 ] || break 2
  timeout 90 build-$v-pdl/bench/lnl-bench $BS > $R/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
done; done
for f in $R/bench_*.txt; do echo "== $(basename $f)"; grep -E "auto|fused " $f | awk "{print \$3,\$4,\$5,\$6,\$9,\$11,\$13}"; done
# test_table takes one --shape: a process per row and tool
for sh in 2048,16,1088 129,64,272 12800,200,136 129,768,257; do
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 $TT --device cuda --shape $sh > $R/memcheck_$sh.txt 2>&1 &
  for dt in bf16 f32; do
    timeout 150 tests/gpu/racecheck_ours.sh $TT --device cuda --shape $sh --dtype $dt > $R/racecheck_${dt}_$sh.txt 2>&1 &
  done
done
wait
el sanitizers done
for f in $R/memcheck_* $R/racecheck_*; do echo "$(basename $f): $(grep -E "ERROR SUMMARY|racecheck:" $f | tail -n 1) | $(grep -E "passed, " $f | tail -n 1)"; done
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
