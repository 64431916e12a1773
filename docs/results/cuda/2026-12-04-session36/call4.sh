#!/usr/bin/env bash
# Session 36, call 4: where the bf16 N = 256 forward's time goes (call 3: our kernel's
# tensor pipe 65% busy against cuBLAS's 92%, 879 vs 617 MB through L2, a third of the
# cycles between issues in long-scoreboard stalls). Two builds of main with -lineinfo:
#   n  = as shipped (the statistics inside the kernel at N <= 256);
#   ns = -DLNL_SM90_STATS_INSIDE=0 (the statistics from the pre-pass, the same GEMM loop
#        without the sums), to split the kernel's gap into the sums' share and the loop's.
# Nsight Compute with SourceCounters on both kernels and cuBLAS's at 32768,4096,256
# (bench/cuda/ncu_sass_summary.py: the samples by execution count and the top
# instructions), then lnl-bench FUSED forward, n and ns in turn, three rounds.
# device call: `bash docs/results/cuda/2026-12-04-session36/call4.sh`
. tests/gpu/ab.sh && ab_init s36c4 # results in $R ($OUT/s36c4)
AB_JOBS=8 ab_build n . "-lineinfo" lnlinear lnl-bench &
AB_JOBS=8 ab_build ns . "-lineinfo -DLNL_SM90_STATS_INSIDE=0" lnlinear lnl-bench &
wait
[ -f build-n/liblnlinear.so ] && [ -f build-ns/liblnlinear.so ] || { tail -5 "$R"/build_*.log; ab_pack; exit 1; }
ab_el built
sh=32768,4096,256
for v in n ns; do
    # launches: our warm-up (epilogue form, idle transform form), our pass (the same),
    # cuBLAS's warm-up and pass: skip 2, take 4 -> ours, the idle one, cuBLAS twice
    timeout 150 ncu --cache-control none --kernel-name regex:'ln_gemm_fwd_sm90|nvjet' \
        --launch-skip 2 --launch-count 4 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
        --section SchedulerStats --section SourceCounters --import-source no -f -o "$R/ncu_$v" \
        python3 bench/cuda/ncu_forward.py --lib "build-$v/liblnlinear.so" --shape $sh \
        --passes 1 >"$R/ncu_$v.log" 2>&1
    ab_el "ncu $v rc $?"
    timeout 40 ncu --import "$R/ncu_$v.ncu-rep" --page details >"$R/details_$v.txt" 2>&1
    timeout 60 ncu --import "$R/ncu_$v.ncu-rep" --page source --csv --print-source sass \
        >"$R/sass_$v.csv" 2>&1
    grep -E "ln_gemm_fwd_sm90|nvjet|  Duration|Issue Slots Busy|Executed Ipc A|No Eligible|Warp Cycles Per Issued" \
        "$R/details_$v.txt" | cut -c1-110 | head -24
    timeout 60 python3 bench/cuda/ncu_sass_summary.py "$R/sass_$v.csv" --list 2>&1 | head -6
    timeout 60 python3 bench/cuda/ncu_sass_summary.py "$R/sass_$v.csv" --kernel 0 --top 14 \
        >"$R/summary_${v}_ours.txt" 2>&1
    head -60 "$R/summary_${v}_ours.txt" | cut -c1-150
    gzip -f "$R/sass_$v.csv"
    rm -f "$R/ncu_$v.ncu-rep"
done
timeout 60 python3 bench/cuda/ncu_sass_summary.py <(zcat "$R/sass_n.csv.gz") --kernel 2 --top 10 \
    >"$R/summary_cublas.txt" 2>&1
head -40 "$R/summary_cublas.txt" | cut -c1-150
ab_el ncu
AB_BENCH_LIMIT=60 ab_bench 3 "n ns" "--dtype bf16 --strategy fused" 32768,4096,256 65536,1024,256 12800,4096,256
ab_el done
ab_pack
