#!/usr/bin/env bash
# session 11 call 1 (tree: main, see COMMIT; exp/ = branch s11-exp, br/ = branch s10-f16-fold-overflow):
#  builds: main (PDL), br (PDL: lnlinear, test_table), exp variants without PDL (x0 = main's
#   kernel, a2 = two rows ahead, ob = one barrier a row, st = streaming hints, all = the three);
#  1. the f16 W*gamma overflow test on main's library (expected to fail) and on br's;
#  2. bandwidth ceilings (torch add/copy), profile_cuda.py AUTO bf16 on x0 at three shapes;
#  3. the variants: gradient digests (ln_backward_ab.py) and LayerNorm backward kernel times,
#     two rounds in turn; 4. ncu --clock-control none of the LayerNorm backward and the fused forward;
#  5. br: test_numerics on CUDA, test_table --quick f16, memcheck and racecheck f16 at 700,4104,16.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c1; mkdir -p $R
b() { # src name cuda_flags targets...
  local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 \
   && cmake --build build-$n -j 3 --target "$@" > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b . main "" lnlinear & b br br "" lnlinear test_table &
b exp x0 -DLNL_PDL=0 lnlinear & b exp a2 "-DLNL_PDL=0 -DLNL_X_AHEAD=2 -DLNL_X_MINB=2" lnlinear &
b exp ob "-DLNL_PDL=0 -DLNL_X_ONEBAR=1" lnlinear & b exp st "-DLNL_PDL=0 -DLNL_X_STREAM=1" lnlinear &
b exp all "-DLNL_PDL=0 -DLNL_X_AHEAD=2 -DLNL_X_MINB=2 -DLNL_X_ONEBAR=1 -DLNL_X_STREAM=1" lnlinear &
wait; el builds done
grep -hE " error|error:" $R/build_*.log | head
P="python3 -m pytest -q -p no:cacheprovider br/tests/python/test_numerics.py -k f16_folded_weight_overflow"
LNLINEAR_TEST_DEVICE=cuda PYTHONPATH=br/python LNLINEAR_LIBRARY=$PWD/build-main/liblnlinear.so timeout 60 $P > $R/f16_overflow_main.txt 2>&1; el "f16 overflow on main rc $? (expected 1)"; tail -n 3 $R/f16_overflow_main.txt | cut -c1-200
LNLINEAR_TEST_DEVICE=cuda PYTHONPATH=br/python LNLINEAR_LIBRARY=$PWD/build-br/liblnlinear.so timeout 60 $P > $R/f16_overflow_br.txt 2>&1; el "f16 overflow on br rc $? (expected 0)"; tail -n 1 $R/f16_overflow_br.txt
timeout 30 python3 calib.py > $R/calib.txt 2>&1; el "calib rc $?"; cat $R/calib.txt
timeout 60 python3 bench/cuda/profile_cuda.py --lib build-x0/liblnlinear.so --dtypes bf16 --iters 20 --shapes 32768,4096,256 16384,8192,1024 8192,4096,4096 > $R/profile_x0_full.txt 2>&1; el "profile x0 rc $?"
for v in x0 a2 ob st all; do
  PYTHONPATH=python LNLINEAR_LIBRARY=$PWD/build-$v/liblnlinear.so timeout 60 python3 bench/cuda/ln_backward_ab.py --reps 5 > $R/ab_$v.txt 2>&1; el "ab $v rc $?"
done
for f in $R/ab_*.txt; do echo "== $(basename $f)"; grep -E "^(bf16|f16|f32)" $f | awk '{print $1,$2,$NF}' | paste -sd' '; done
for r in 1 2; do for v in x0 a2 ob st all; do
  timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$v/liblnlinear.so --dtypes bf16 --iters 20 --shapes 32768,4096,256 8192,4096,4096 > $R/profile_${v}_$r.txt 2>&1 || el "profile $v $r failed"
done; el "profile round $r"; done
for f in $R/profile_*_[12].txt; do echo "== $(basename $f) $(awk '/^bf16 M,K,N/{s=$4" "$5" "$6} /lnlinear auto/{t=t" "s" total "$3} /ln_bwd_(reg|ring)_kernel/{t=t" lnbwd "$1} END{print t}' $f)"; done
export PYTHONPATH=python LNLINEAR_LIBRARY=$PWD/build-main/liblnlinear.so
NS="--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
timeout 90 ncu $NS -k regex:ln_bwd -c 1 python3 ncu_target.py 32768,4096,256 auto 1 > $R/ncu_lnbwd_32768.txt 2>&1; el "ncu lnbwd rc $?"
timeout 90 ncu $NS -k regex:ln_gemm_fwd_sm90 -c 1 python3 ncu_target.py 32768,4096,256 auto 1 > $R/ncu_fwd_32768.txt 2>&1; el "ncu fwd 32768 rc $?"
timeout 90 ncu $NS -k regex:ln_gemm_fwd_sm90 -c 1 python3 ncu_target.py 16384,8192,1024 auto 1 > $R/ncu_fwd_16384.txt 2>&1; el "ncu fwd 16384 rc $?"
for f in $R/ncu_*.txt; do echo "== $(basename $f)"; grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued" $f | cut -c1-130 | head -14; done
unset PYTHONPATH LNLINEAR_LIBRARY
TT=build-br/tests/test_table
( LNLINEAR_TEST_DEVICE=cuda PYTHONPATH=br/python LNLINEAR_LIBRARY=$PWD/build-br/liblnlinear.so timeout 200 python3 -m pytest -q -p no:cacheprovider br/tests/python/test_numerics.py > $R/br_numerics.txt 2>&1; echo "numerics rc $?" > $R/rc_numerics ) &
( timeout 150 $TT --device cuda --quick --dtype f16 > $R/br_table_quick_f16.txt 2>&1; echo "table f16 rc $?" > $R/rc_table ) &
( timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 $TT --device cuda --shape 700,4104,16 --dtype f16 > $R/br_memcheck_700_4104.txt 2>&1; echo "memcheck rc $?" > $R/rc_memcheck ) &
( timeout 200 tests/gpu/racecheck_ours.sh $TT --device cuda --shape 700,4104,16 --dtype f16 > $R/br_racecheck_700_4104.txt 2>&1; echo "racecheck rc $?" > $R/rc_racecheck ) &
wait; el "br checks done"
cat $R/rc_*; tail -n 1 $R/br_numerics.txt $R/br_table_quick_f16.txt | cut -c1-200
for f in $R/br_memcheck_* $R/br_racecheck_*; do echo "$(basename $f): $(grep -E "ERROR SUMMARY|racecheck:" $f | tail -n 1) | $(grep -E "passed, " $f | tail -n 1)"; done
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
