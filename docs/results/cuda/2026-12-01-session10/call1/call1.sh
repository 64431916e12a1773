#!/usr/bin/env bash
# session 10 call 1: the backward's small-shape reductions.
#  Builds: old = main 568abaa (old/), exp = branch s10-exp (2-D column sums, G = ceil(M/R),
#  environment overrides LNL_X_*), each with -DLNL_PDL=0 (per-kernel times) and with PDL
#  (lnl-bench; exp also its test_table for a correctness pass).
#  1. test_table --device cuda --quick on exp (defaults, then two override sets);
#  2. profile_cuda.py, AUTO bf16, old against exp under six override sets, two rounds;
#  3. lnl-bench AUTO bf16, old against exp, alternating, two rounds;
#  4. python_overhead.py --device cuda, plain and --stats-ab (exp's library).
cd "$(dirname "$0")"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c1; mkdir -p $R
b() { # src name cuda_flags targets...
  local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 \
   && cmake --build build-$n -j 4 --target "$@" > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b old old-nopdl -DLNL_PDL=0 lnlinear & b . exp-nopdl -DLNL_PDL=0 lnlinear &
b old old-pdl "" lnl-bench & b . exp-pdl "" lnl-bench test_table &
wait; el builds done
TT=build-exp-pdl/tests/test_table
timeout 90 $TT --device cuda --quick > $R/table_default.txt 2>&1; el "table default rc $?"; tail -2 $R/table_default.txt
LNL_X_CS_TY=1 LNL_X_LNB_MIN_ROWS=8 timeout 90 $TT --device cuda --quick > $R/table_ty1_r8.txt 2>&1; el "table ty1 r8 rc $?"; tail -1 $R/table_ty1_r8.txt
LNL_X_CS_TY=3 LNL_X_CS_TPS=2048 LNL_X_LNB_MIN_ROWS=3 timeout 90 $TT --device cuda --quick > $R/table_ty3.txt 2>&1; el "table ty3 rc $?"; tail -1 $R/table_ty3.txt
SH="4096,768,768 8192,1024,1024 8192,768,3072 8192,4096,4096 8192,4096,12288"
prof() { timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$1/liblnlinear.so --dtypes bf16 --iters 20 --shapes $SH > $R/profile_$2_$3.txt 2>&1; el "profile $2 $3 rc $?"; }
for r in 1 2; do
  prof old-nopdl old $r
  prof exp-nopdl cs $r
  LNL_X_LNB_MIN_ROWS=4 prof exp-nopdl r4 $r
  LNL_X_LNB_MIN_ROWS=8 prof exp-nopdl r8 $r
  LNL_X_LNB_MIN_ROWS=16 prof exp-nopdl r16 $r
  LNL_X_CS_TY=1 prof exp-nopdl ty1 $r
  LNL_X_CS_TPS=2048 prof exp-nopdl tps2k $r
  [ $(( $(date +%s) - T0 )) -lt 330 ] || break
done
for f in $R/profile_*.txt; do echo "== $(basename $f)"; awk '/^bf16 M,K,N/{s=$4" "$5" "$6} /lnlinear auto/{print s" total "$3} /ln_bwd_(reg|ring)_kernel|reduce_partials_kernel|colsum_partials/{n=$5; sub(/<.*/,"",n); sub(/.*lnl::/,"",n); print s" "$1" "n}' $f; done
BS="--device cuda --dtype bf16 --strategy auto --shape 4096,768,768 --shape 8192,1024,1024 --shape 8192,768,3072 --shape 8192,4096,4096"
for r in 1 2; do for v in old exp; do
  [ $(( $(date +%s) - T0 )) -lt 470 ] || break 2
  timeout 60 build-$v-pdl/bench/lnl-bench $BS > $R/bench_${v}_$r.txt 2>&1; el "bench $v $r rc $?"
  grep "^cuda" $R/bench_${v}_$r.txt
done; done
if [ $(( $(date +%s) - T0 )) -lt 520 ]; then
  export PYTHONPATH=python LNLINEAR_LIBRARY=$PWD/build-exp-pdl/liblnlinear.so
  timeout 30 python3 bench/python_overhead.py --device cuda --iters 5000 --repeats 9 > $R/py_overhead.txt 2>&1; el "py overhead rc $?"; tail -5 $R/py_overhead.txt
  timeout 30 python3 bench/python_overhead.py --device cuda --stats-ab --iters 5000 --repeats 9 > $R/py_stats_ab.txt 2>&1; el "py stats-ab rc $?"; tail -5 $R/py_stats_ab.txt
fi
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
