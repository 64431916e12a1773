#!/usr/bin/env bash
# For the next session with a GPU (written in session 22, compiled here, never run): branch
# s22-next, which adds LNL_CUDA_PINGPONG_MAX_K (one build times both forms at any K; its
# device code is main's d574da7, kernel for kernel) and bench/cuda/clocks_ab.py.
# Two questions from session 22:
#  1. Why is the ping-pong form 28% slower at 8192,4096,4096 at full clocks (call 1) when
#     ncu's fixed clocks time it as the cooperative form (call 2)? If the SM clock drops
#     with the power cap (event reason 0x4) under the ping-pong form only, it is power: W'
#     crosses from L2 twice as often. If the clocks match, look at L2 at boost clocks.
#  2. Where between K = 1024 and 4096 does it stop winning? PINGPONG_MAX_K = 1024 is a
#     measured point, not the crossover.
# Snapshot: rm -rf .snap && mkdir .snap && git archive s22-next | tar -x -C .snap; device
# call `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session22/next-clocks.sh`
# with carry [".snap"]. About 3 minutes.
R=${OUT:-.}/clk
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
pack() { (cd "${OUT:-.}" && tar czf clk.tgz clk); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target lnlinear >"$R/build.log" 2>&1
el "build rc $?"
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE >"$R/smi_before.txt" 2>&1
export PYTHONPATH=python
AB=(--variant coop:LNL_CUDA_PINGPONG_MAX_K=0 --variant pp:LNL_CUDA_PINGPONG_MAX_K=65536)
timeout 150 python3 bench/cuda/clocks_ab.py --lib build-gpu/liblnlinear.so \
    --shape 8192,4096,4096 --shape 8192,1024,1024 "${AB[@]}" --cublas --seconds 2 --rounds 3 \
    2>&1 | tee "$R/clocks.txt"
el "clocks rc ${PIPESTATUS[0]}"
pack
timeout 150 python3 bench/cuda/clocks_ab.py --lib build-gpu/liblnlinear.so \
    --shape 8192,1536,4096 --shape 8192,2048,4096 --shape 8192,3072,4096 \
    --shape 8192,4096,12288 "${AB[@]}" --seconds 1.5 --rounds 3 2>&1 | tee "$R/sweep.txt"
el "sweep rc ${PIPESTATUS[0]}"
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE >"$R/smi_after.txt" 2>&1
pack
rm -rf "$R"
el "all done"
