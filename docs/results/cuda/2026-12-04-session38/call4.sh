#!/usr/bin/env bash
# Session 38, call 4: why the split statistics cost the GEMM kernel ~7.5 us at
# 8192,1024,1024 (calls 1-2: FUSED forward 0.0435 ms against 0.0408 with the statistics
# pass, which itself spends ~5 us on them), when the ALU rate of the N = 256 kernel's sums
# (session 37) predicts ~1.5 us, and why moving the shares' merge off the end of the main
# loop (call 2's FORM_FOLD_SPLIT) made it slower, not faster. One build of main with
# -lineinfo; Nsight Compute with SourceCounters on the epilogue-form GEMM kernel with the
# pass's statistics (MIN_K default) and the split form (MIN_K=0), and cuBLAS's, at
# 8192,1024,1024 bf16; bench/cuda/ncu_sass_summary.py on each (samples by execution count:
# a main loop's instructions run once a K slice, the merge's once a tile).
# device call: `bash docs/results/cuda/2026-12-04-session38/call4.sh`
. tests/gpu/ab.sh && ab_init s38c4 # results in $R ($OUT/s38c4)
AB_JOBS=16 ab_build n . "-lineinfo" lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
sh=8192,1024,1024
for v in pre split; do
    k=4096; [ $v = split ] && k=0
    # launches: our warm-up (epilogue form, idle transform form), our pass (the same),
    # cuBLAS's warm-up and pass: skip 2, take 4 -> ours, the idle one, cuBLAS twice
    LNL_CUDA_SPLIT_STATS_MIN_K=$k timeout 150 ncu --cache-control none \
        --kernel-name regex:'ln_gemm_fwd_sm90|nvjet' --launch-skip 2 --launch-count 4 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section SourceCounters \
        --import-source no -f -o "$R/ncu_$v" \
        python3 bench/cuda/ncu_forward.py --lib build-n/liblnlinear.so --shape $sh \
        --passes 1 >"$R/ncu_$v.log" 2>&1
    ab_el "ncu $v rc $?"
    timeout 40 ncu --import "$R/ncu_$v.ncu-rep" --page details >"$R/details_$v.txt" 2>&1
    timeout 60 ncu --import "$R/ncu_$v.ncu-rep" --page source --csv --print-source sass \
        >"$R/sass_$v.csv" 2>&1
    grep -E "ln_gemm_fwd_sm90|nvjet|  Duration|Issue Slots Busy|Executed Ipc A|No Eligible|Warp Cycles Per Issued|L2 Hit|DRAM Throughput|Executed Instructions  " \
        "$R/details_$v.txt" | cut -c1-110 | head -40
    timeout 60 python3 bench/cuda/ncu_sass_summary.py "$R/sass_$v.csv" --list 2>&1 | head -6
    timeout 60 python3 bench/cuda/ncu_sass_summary.py "$R/sass_$v.csv" --kernel 0 --top 16 \
        >"$R/summary_${v}_ours.txt" 2>&1
    head -70 "$R/summary_${v}_ours.txt" | cut -c1-160
    gzip -f "$R/sass_$v.csv"
    rm -f "$R/ncu_$v.ncu-rep"
done
ab_el done
ab_pack
