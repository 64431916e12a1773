#!/usr/bin/env bash
# Session 23, call 2: where does the ping-pong form pay at K <= 1024? Call 1 found every
# big forward at the 700 W cap, the ping-pong form's SM clock 2-8% below the cooperative
# form's at the same power, and the ping-pong form 2% slower at 8192,1024,1024 when the
# calls run back to back (it was 4% faster in session 22's short timings). So: the
# shapes where it is taken now, cooperative vs ping-pong vs cuBLAS, (a) back to back at
# the cap, (b) in 0.15 s bursts after 0.5 s idle, as lnl-bench times.
# Device call: `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session23/call2.sh`
# with carry [".snap"] (a `git archive` of the commit that holds this script).
R=${OUT:-.}/c2
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
pack() { (cd "${OUT:-.}" && tar czf c2.tgz c2); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target lnlinear >"$R/build.log" 2>&1
el "build rc $?"
export PYTHONPATH=python
AB=(--variant coop:LNL_CUDA_PINGPONG_MAX_K=0 --variant pp:LNL_CUDA_PINGPONG_MAX_K=65536 --cublas)
SH=(--shape 4096,768,768 --shape 8192,768,3072 --shape 8192,1024,1024 --shape 8192,512,2048
    --shape 16384,1024,4096)
timeout 200 python3 bench/cuda/clocks_ab.py --lib build-gpu/liblnlinear.so "${SH[@]}" "${AB[@]}" \
    --seconds 1.5 --rounds 3 2>&1 | tee "$R/sustained.txt"
el "sustained rc ${PIPESTATUS[0]}"
pack
timeout 150 python3 bench/cuda/clocks_ab.py --lib build-gpu/liblnlinear.so "${SH[@]}" "${AB[@]}" \
    --seconds 0.15 --idle 0.5 --rounds 3 2>&1 | tee "$R/burst.txt"
el "burst rc ${PIPESTATUS[0]}"
pack
rm -rf "$R"
el "all done"
