#!/usr/bin/env bash
# As run in session 19, call 3 (main 3b992ad): the timeouts cut to 150/40 s and the
# .ncu-rep files (5.6 MB each) left out of the tarball. It took 64 s.
# For the next session with a GPU (written in session 18, not run). Run it after
# tests/gpu/run.sh on main, as a second call. ~3 minutes.
#
# Where the N = 256 forward's remaining statistics cost sits, instruction by instruction.
# Session 18 found that the arithmetic costs ~0.021 ms of 0.147 at 32768,4096,256, and the
# shared-memory loads nothing. ncu's warp-state sampling per SASS instruction (SourceCounters)
# of the FORM_FOLD_STATS kernel says which of the slice loop's instructions the warps stall
# on, and why. It settles whether fewer instructions (the leads in README.md) or other
# instructions (dependency chains, register-bank conflicts beside HGMMA) are the next step.
#
# Snapshot from main's checkout:
#   rm -rf .snap && mkdir .snap && git archive HEAD | tar -x -C .snap \
#     && cp docs/results/cuda/2026-12-02-session18/next-ncu-source.sh .snap/ && rm -rf .snap/docs/results
# then the device call `cd .snap || exit 3; ./next-ncu-source.sh` with carry [".snap"].
cd "$(dirname "$0")" || exit 2
R=${OUT:-.}/ncusrc
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
cmake -S . -B build-prof -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
    -DLNL_BUILD_TORCH_OPS=OFF -DCMAKE_CUDA_FLAGS=-lineinfo >"$R/cfg.log" 2>&1 &&
    cmake --build build-prof -j16 --target lnlinear >"$R/build.log" 2>&1
el "build rc $?"
for sh in 32768,4096,256 65536,1024,256; do
    # the driver's lnlinear pass launches the fold, the FORM_FOLD_STATS kernel and the idle
    # transform form; --launch-count 2 of the regex takes both GEMM kernels of one pass
    timeout 150 ncu --kernel-name regex:'ln_gemm_fwd_sm90' --launch-skip 2 --launch-count 2 \
        --section SpeedOfLight --section WarpStateStats --section SourceCounters \
        --section SchedulerStats --import-source no -f -o "$R/stats_$sh" \
        python3 bench/cuda/ncu_forward.py --lib build-prof/liblnlinear.so --shape "$sh" \
        --passes 2 >"$R/ncu_$sh.log" 2>&1
    el "ncu $sh rc $?"
    # per-instruction samples of the long kernel (the idle one has a few hundred SASS lines)
    timeout 40 ncu --import "$R/stats_$sh.ncu-rep" --page source --csv --print-source sass \
        >"$R/sass_$sh.csv" 2>&1
    el "source page $sh rc $? ($(wc -l <"$R/sass_$sh.csv") lines)"
    timeout 40 ncu --import "$R/stats_$sh.ncu-rep" --page details >"$R/details_$sh.txt" 2>&1
    grep -E "ln_gemm_fwd_sm90|Duration|Issue Slots Busy|Stall|Eligible|Active Warps" \
        "$R/details_$sh.txt" | cut -c1-120 | head -40
done
el "all done"
ls -la "$R"; mkdir -p reps && mv "$R"/*.ncu-rep reps/ 2>/dev/null; cd "${OUT:-.}" && tar czf ncusrc.tgz ncusrc && rm -rf ncusrc
