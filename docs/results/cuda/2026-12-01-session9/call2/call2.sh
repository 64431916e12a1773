#!/usr/bin/env bash
# session 9 call 2 (tree: see COMMIT): 
#  1. build build-gpu;
#  2. the AUTO forward sweep: lnl-bench bf16 fused vs unfused forward at 22 shapes, two rounds;
#  3. ncu --set full on the LayerNorm backward kernels (register kernel at 8192,4096,4096;
#     ring kernel at 16384,8192,1024), bf16, unfused keeping ln_out (AUTO's backward);
#  4. racecheck float32 of the ring kernel alone: test_table --shape 700,2056,16.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c2; mkdir -p $R
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg.log 2>&1
cmake --build build-gpu -j 16 > $R/build.log 2>&1; el "build rc $?"
grep -E "error" $R/build.log | head
S=""
for s in 4096,1024,1024 4096,2048,1024 4096,4096,1024 4096,4096,256 4096,2048,2048 2048,4096,1024 \
         8192,768,768 8192,768,1024 8192,768,1536 8192,1024,256 8192,1024,768 8192,1024,1024 \
         8192,1024,1536 8192,1024,2048 8192,2048,1024 8192,2048,2048 8192,4096,2048 \
         16384,768,768 16384,768,3072 16384,1024,1024 16384,1024,2048 16384,2048,2048; do S="$S --shape $s"; done
for r in 1 2; do
  timeout 100 build-gpu/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --strategy unfused $S > $R/sweep_$r.txt 2>&1
  el "sweep $r rc $?"
done
for r in 1 2; do echo "== sweep $r"; grep "^cuda" $R/sweep_$r.txt | awk '{print $3,$4,$5,$6}'; done
export PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
timeout 90 ncu -k regex:ln_bwd -c 1 --set full python3 ncu_target.py 8192,4096,4096 unfused 0 > $R/ncu_reg_k4096.txt 2>&1; el "ncu reg rc $?"
timeout 90 ncu -k regex:ln_bwd -c 1 --set full python3 ncu_target.py 16384,8192,1024 unfused 0 > $R/ncu_ring_k8192.txt 2>&1; el "ncu ring rc $?"
grep -E "ln_bwd|DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Dynamic Shared|Waves Per SM|L2 Hit|L1/TEX Hit|Compute \(SM\) Throughput|Stall|Warp Cycles Per Issued|Issued Warp" $R/ncu_*.txt | cut -c1-200 | head -80
timeout 330 tests/gpu/racecheck_ours.sh build-gpu/tests/test_table --device cuda --dtype f32 --shape 700,2056,16 > $R/racecheck_f32_700_2056_16.txt 2>&1
el "racecheck f32 700,2056,16 rc $?"; tail -n 3 $R/racecheck_f32_700_2056_16.txt | cut -c1-300
cd $OUT && tar czf all.tgz c2 && rm -rf c2
