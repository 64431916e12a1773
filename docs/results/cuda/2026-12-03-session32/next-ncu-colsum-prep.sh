#!/usr/bin/env bash
# For the next session (written in session 32, not run: no device time was left). Nsight
# Compute on the two memory-bound kernels this session left alone, main's library, bf16:
# the bias column sums (colsum_partials_kernel: 21.3 us for 50 MB at 8192 x 3072, 7.8 us
# for 16 MB at 8192 x 1024, 2.0-2.4 TB/s) in AUTO's backward, and the forward's
# statistics-and-folding pass (fold_prep_kernel: 9.3-9.7 us at 8192,1024,1024, 37% of its
# stalls "not selected" in call 1) in AUTO's forward. Adds the instruction mix and the
# scheduler's view to call 1's sections. Caches not flushed (--cache-control none).
# device call: `bash docs/results/cuda/2026-12-03-session32/next-ncu-colsum-prep.sh`
. tests/gpu/ab.sh && ab_init ncu-cp # results in $R ($OUT/ncu-cp)
AB_JOBS=16 ab_build n . "" lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
for s in 8192,768,3072 8192,1024,1024; do
    target=$(ab_target n $s bf16 auto)
    timeout 150 ncu --kernel-name regex:'fold_prep|colsum_partials' --launch-skip 2 --launch-count 2 \
        --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
        --section InstructionStats python3 "$target" >"$R/ncu_$s.txt" 2>&1
    echo "ncu $s rc $?"
    grep -E "fold_prep|colsum_partials|Duration|DRAM Throughput|L2 Hit|Achieved Occupancy|Waves Per SM|Eligible|Issued Warp|No Eligible|Executed Ipc|Stall|Grid Size|Block Size" \
        "$R/ncu_$s.txt" | cut -c1-130 | head -70
done
ab_pack
