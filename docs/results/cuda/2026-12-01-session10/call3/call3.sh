#!/usr/bin/env bash
# session 10 call 3: does AUTO's forward rule (FUSED from M*K >= 2^23, N <= 1024, tiles
# filling 3/4 of the SMs) still hold now that UNFUSED's LayerNorm runs a warp a row for
# K <= 1024 (b5009cf)? lnl-bench bf16, FUSED vs UNFUSED, the session 9 sweep's shapes with
# K <= 1024 plus larger M and K = 2048 controls, two rounds. Tree: main (see COMMIT).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c3; mkdir -p $R
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg.log 2>&1 && cmake --build build-gpu -j 16 --target lnl-bench > $R/build.log 2>&1; el "build rc $?"
S=""
for s in 4096,1024,1024 8192,768,768 8192,768,1024 8192,768,1536 8192,1024,256 8192,1024,768 8192,1024,1024 \
         8192,1024,1536 16384,768,768 16384,1024,1024 32768,768,768 32768,1024,1024 8192,2048,1024 \
         16384,2048,1024; do S="$S --shape $s"; done
for r in 1 2; do
  timeout 120 build-gpu/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --strategy unfused $S > $R/sweep_$r.txt 2>&1
  el "sweep $r rc $?"
done
for r in 1 2; do echo "== sweep $r"; grep "^cuda" $R/sweep_$r.txt | awk '{print $3,$4,$5,$6}'; done
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
