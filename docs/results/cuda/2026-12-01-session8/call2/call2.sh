#!/usr/bin/env bash
# session 8 call 2 (tree: b100880 + the LayerNorm backward ring kernel, uncommitted):
#  builds gpu (default, ring depth <= 4), r0 (-DLNL_LN_BWD_RING=0: the register kernel),
#  r2 (depth <= 2), r8 (depth <= 8), cl (branch s8-clusters: 2-CTA clusters, 6db0383's
#  CTA-scope barriers, on main's forward);
#  tests of gpu: test_table cuda bf16/f16/f32 in full, memcheck + synccheck on the quick bf16 table;
#  of cl: test_table bf16 quick;
#  timings: ln_backward_ab.py on gpu/r0/r2/r8 (digests must agree), lnl-bench auto bf16 gpu/r0
#  twice in turn, lnl-bench fused bf16 forward cl/gpu twice, and the cluster occupancy probe.
cd "$(dirname "$0")"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c2; mkdir -p $R
cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON ${3:+-DCMAKE_CUDA_FLAGS=$3} > "$2.cfg.log" 2>&1; }
( cfg . build-gpu && cmake --build build-gpu -j 6 > $R/build_gpu.log 2>&1; echo "gpu rc $?" ) &
( cfg . build-r0 -DLNL_LN_BWD_RING=0 && cmake --build build-r0 -j 3 --target lnlinear lnl-bench > $R/build_r0.log 2>&1; echo "r0 rc $?" ) &
( cfg . build-r2 -DLNL_LN_BWD_RING=2 && cmake --build build-r2 -j 2 --target lnlinear > $R/build_r2.log 2>&1; echo "r2 rc $?" ) &
( cfg . build-r8 -DLNL_LN_BWD_RING=8 && cmake --build build-r8 -j 2 --target lnlinear > $R/build_r8.log 2>&1; echo "r8 rc $?" ) &
( cfg cl build-cl && cmake --build build-cl -j 3 --target lnlinear lnl-bench test_table > $R/build_cl.log 2>&1; echo "cl rc $?" ) &
( nvcc -arch=sm_90a -o cluster_probe cluster_probe.cu > $R/probe_build.log 2>&1 && ./cluster_probe > $R/cluster_probe.txt 2>&1; echo "probe rc $?" ) &
wait
el builds done
grep -E " error|error:" $R/build_*.log | head
cat $R/cluster_probe.txt
T=build-gpu/tests/test_table
( timeout 170 $T --device cuda --dtype bf16 > $R/table_bf16.txt 2>&1; echo "table bf16 rc $?" > $R/rc_table_bf16 ) &
( timeout 170 $T --device cuda --dtype f16 > $R/table_f16.txt 2>&1; echo "table f16 rc $?" > $R/rc_table_f16 ) &
( timeout 170 $T --device cuda --dtype f32 > $R/table_f32.txt 2>&1; echo "table f32 rc $?" > $R/rc_table_f32 ) &
( timeout 170 compute-sanitizer --tool memcheck --error-exitcode 99 $T --device cuda --quick --dtype bf16 > $R/memcheck.txt 2>&1; echo "memcheck rc $?" > $R/rc_memcheck ) &
( timeout 170 compute-sanitizer --tool synccheck --error-exitcode 99 $T --device cuda --quick --dtype bf16 > $R/synccheck.txt 2>&1; echo "synccheck rc $?" > $R/rc_synccheck ) &
( timeout 170 build-cl/tests/test_table --device cuda --quick --dtype bf16 > $R/table_cl_quick.txt 2>&1; echo "table cl rc $?" > $R/rc_table_cl ) &
wait
el tests done
cat $R/rc_*; tail -n 2 $R/table_*.txt $R/memcheck.txt $R/synccheck.txt | cut -c1-300
for v in gpu r0 r2 r8; do
  timeout 60 env PYTHONPATH=python LNLINEAR_LIBRARY=build-$v/liblnlinear.so python3 bench/cuda/ln_backward_ab.py > $R/ab_$v.txt 2>&1; el "ab $v rc $?"; cat $R/ab_$v.txt | grep -v Warn
done
B="--device cuda --dtype bf16 --strategy auto"
for r in 1 2; do for v in gpu r0; do
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_auto_${v}_$r.txt 2>&1; el "bench auto $v $r rc $?"
done; done
F="--device cuda --dtype bf16 --strategy fused --shape 8192,4096,4096 --shape 8192,4096,12288 --shape 8192,768,3072 --shape 16384,8192,1024"
for r in 1 2; do for v in cl gpu; do
  timeout 40 build-$v/bench/lnl-bench $F > $R/bench_fused_${v}_$r.txt 2>&1; el "bench fused $v $r rc $?"
done; done
for f in $R/bench_*.txt; do echo "== $f"; grep "^cuda" $f | awk '{print $3,$4,$5,$6,$7,$10,$11,$12}'; done
cd $OUT && tar czf all.tgz c2 && rm -rf c2
