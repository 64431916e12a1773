#!/usr/bin/env bash
# Session 17 call 2: (a) why B17 (branch s16-dx-epilogue, ln_bwd_sm90) lost: its backward
# kernel by kernel against main's (PDL off), and ncu of ln_bwd_sm90 at 32768,4096,256;
# (b) session 16's next-profile.sh on main (fe31318), its ncu timeouts cut to 150 s.
# Run from a snapshot: main at the root, the branch under br/, both without docs/results.
cd "$(dirname "$0")"
T0=$(date +%s); el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/b17; mkdir -p $R
( cd br && cmake -S . -B build-brpdl -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
    -DLNL_BUILD_TESTS=OFF -DLNL_BUILD_BENCH=OFF -DCMAKE_CUDA_FLAGS=-DLNL_PDL=0 > $R/cfg.log 2>&1 \
  && cmake --build build-brpdl -j8 --target lnlinear > $R/build.log 2>&1; echo "build branch rc $?" )
el branch built
export PYTHONUNBUFFERED=1 PYTHONPATH=python
for s in 32768,4096,256 16384,8192,1024; do
  timeout 90 python3 bench/cuda/profile_cuda.py --lib br/build-brpdl/liblnlinear.so --dtypes bf16 --strategies fused \
    --shapes $s > $R/prof_br_$s.txt 2>&1; echo "== branch $s rc $?"
  grep -vE "^\s*$" $R/prof_br_$s.txt | grep -A14 "lnlinear fused" | cut -c1-110
done
cat > $R/drv.py <<'PY'
import sys; sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
c = Case(load(sys.argv[1]), 32768, 4096, 256, "bf16", "fused")
for _ in range(3):
    c.fwd(); c.bwd()
torch.cuda.synchronize()
PY
timeout 150 ncu --kernel-name regex:'ln_bwd_sm90' --launch-skip 1 --launch-count 1 --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats \
  --section Occupancy python3 $R/drv.py br/build-brpdl/liblnlinear.so > $R/ncu_b17.txt 2>&1
echo "ncu b17 rc $?"; grep -E "Duration|Throughput|Busy|Stall|Eligible|Registers|Bandwidth|Hit" $R/ncu_b17.txt | cut -c1-110 | head -40
el b17 done
C=$(cat COMMIT) bash next-profile.sh
el all done
cd $OUT && tar czf b17.tgz b17 && rm -rf b17
