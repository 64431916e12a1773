#!/usr/bin/env bash
# Session 21, call 2, on main as run.sh proved it in call 1 (3c3f07c; nothing under src/
# changed since). Two jobs in one device call:
#  1. bench/compare.py --device cuda, bf16 and f32, two rounds, Liger beside it: the speed
#     against PyTorch eager (#7: "faster than eager everywhere"), last measured in session 15.
#  2. ncu on our Hopper GEMM kernel beside cuBLAS's at two N >= 1024 shapes, where the
#     kernel itself was 5-14% behind cuBLAS (session 15, call 6): which resource or stall
#     makes the difference (tensor pipe busy, issue, barrier waits, the epilogue).
# The build has -lineinfo (no change to the machine code) so that the source page maps SASS.
# Snapshot: rm -rf .snap && mkdir .snap && git archive HEAD | tar -x -C .snap && mkdir
# .snap/.whl && cp <liger wheel> .snap/.whl/; device call `cd .snap || exit 3; bash
# docs/results/cuda/2026-12-02-session21/call2-compare-ncu/call2.sh` with carry [".snap"].
export PYTHONUNBUFFERED=1
R=${OUT:-.}/c2
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
pack() { (cd "${OUT:-.}" && tar czf c2.tgz c2); }
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_FLAGS=-lineinfo >"$R/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target lnlinear lnlinear_torch >"$R/build.log" 2>&1
el "build rc $?"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
    .whl/liger_kernel-*.whl >"$R/liger.log" 2>&1
el "liger rc $?"
export PYTHONPATH=python:/tmp/site LNLINEAR_LIBRARY=build-gpu/liblnlinear.so
for r in 1 2; do
    timeout 200 python3 bench/compare.py --device cuda --dtypes bf16 f32 --no-compile \
        --out "$R/run$r" --time-limit-s 180 >"$R/run${r}_log.txt" 2>&1
    el "compare run $r rc $?"
    grep "^| [0-9]" "$R/run$r/results.md" | head -20
    pack
done
for sh in 8192,1024,1024 8192,4096,4096; do
    # matching launches: warm-up (epilogue form, idle transform form), the pass (the same),
    # cuBLAS's warm-up and pass: skip 2, take 4 -> ours, the idle one, cuBLAS twice
    timeout 150 ncu --kernel-name regex:'ln_gemm_fwd_sm90|nvjet' --launch-skip 2 --launch-count 4 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section SchedulerStats --section SourceCounters \
        --section LaunchStats --section Occupancy --import-source no -f -o "$R/ncu_$sh" \
        python3 bench/cuda/ncu_forward.py --lib build-gpu/liblnlinear.so --shape "$sh" \
        --passes 1 >"$R/ncu_$sh.log" 2>&1
    el "ncu $sh rc $?"
    timeout 40 ncu --import "$R/ncu_$sh.ncu-rep" --page details >"$R/details_$sh.txt" 2>&1
    timeout 40 ncu --import "$R/ncu_$sh.ncu-rep" --page raw --csv >"$R/raw_$sh.csv" 2>&1
    timeout 60 ncu --import "$R/ncu_$sh.ncu-rep" --page source --csv --print-source sass \
        >"$R/sass_$sh.csv" 2>&1
    el "pages $sh ($(wc -l <"$R/sass_$sh.csv") source lines)"
    grep -E "ln_gemm_fwd_sm90|nvjet|Duration|Issue Slots Busy|SM Busy|Eligible|No Eligible|Registers Per" \
        "$R/details_$sh.txt" | cut -c1-110 | head -40
    rm -f "$R/ncu_$sh.ncu-rep" # 5-10 MB; the pages above keep what is read
    pack
done
pack
rm -rf "$R"
el "all done"
