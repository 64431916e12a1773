#!/usr/bin/env bash
# Session 24, call 4 (a diagnostic for the next session; no code change): where the bf16
# FUSED forward's time goes after the TMA-store epilogue.
# 1. bench/cuda/profile_cuda.py, FUSED forward+backward at the three K <= 1024 shapes:
#    each kernel's time a pass (the weight folding + statistics pre-pass, the GEMM kernel,
#    the idle transform form) on the profiler's clock;
# 2. ncu of our GEMM kernel beside cuBLAS's at 8192,1024,1024 and 8192,4096,4096 as session
#    21 ran it, but at the GPU's own clocks and without cache flushes (--clock-control none
#    --cache-control none), with the source page: the epilogue's share of the warp samples
#    now (24% / 10% in session 21), and the tensor pipe's active share at real clocks.
# Device call: `cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session24/call4.sh`
# with carry [".snap"] (a `git archive` of the commit that holds this script).
R=${OUT:-.}/c4
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
pack() { (cd "${OUT:-.}" && tar czf c4.tgz c4); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target lnlinear >"$R/build.log" 2>&1
el "build rc $?"
export PYTHONPATH=python
timeout 120 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so \
    --shapes 4096,768,768 8192,768,3072 8192,1024,1024 --dtypes bf16 --strategies fused \
    --iters 20 >"$R/profile.txt" 2>&1
el "profile rc $?"
cat "$R/profile.txt" | cut -c1-150 | head -80
pack
for sh in 8192,1024,1024 8192,4096,4096; do
    # launches: our warm-up (epilogue form, idle transform form), the pass (the same),
    # cuBLAS's warm-up and pass: skip 2, take 4 -> ours, the idle one, cuBLAS twice
    timeout 120 ncu --clock-control none --cache-control none \
        --kernel-name regex:'ln_gemm_fwd_sm90|nvjet' --launch-skip 2 --launch-count 4 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
        --section SourceCounters --import-source no -f -o "$R/ncu_$sh" \
        python3 bench/cuda/ncu_forward.py --lib build-gpu/liblnlinear.so --shape "$sh" \
        --passes 1 >"$R/ncu_$sh.log" 2>&1
    el "ncu $sh rc $?"
    timeout 40 ncu --import "$R/ncu_$sh.ncu-rep" --page details >"$R/details_$sh.txt" 2>&1
    timeout 60 ncu --import "$R/ncu_$sh.ncu-rep" --page source --csv --print-source sass \
        2>&1 | gzip >"$R/sass_${sh}_ours_and_cublas.csv.gz"
    grep -E "ln_gemm_fwd_sm90|nvjet|Duration|SM Frequency|Issue Slots Busy|Tensor|Executed Ipc A" \
        "$R/details_$sh.txt" | cut -c1-110 | head -30
    timeout 60 python3 bench/cuda/ncu_sass_summary.py <(zcat "$R/sass_${sh}_ours_and_cublas.csv.gz") \
        --top 12 2>&1 | head -40
    rm -f "$R/ncu_$sh.ncu-rep"
    pack
done
el "all done"
