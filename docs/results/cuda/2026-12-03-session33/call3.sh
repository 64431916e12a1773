#!/usr/bin/env bash
# Session 33, call 3: the statistics-and-folding pass at K <= 1024 under Nsight Compute
# (fixed clocks, so durations compare across builds): old = a590dba (.snap/old, carried),
# a0 = the working tree (B29 without keeping x - x0; B27 reverted), a1 = a0 with the warp
# kernel loading its next row ahead (-DLNL_PREP_WARP_AHEAD=1). Then each build's kernel
# times on the profiler's clock (timeline.py, FUSED forward).
# device call: `bash docs/results/cuda/2026-12-03-session33/call3.sh` (carry .snap/old)
. tests/gpu/ab.sh && ab_init s33c3 # results in $R ($OUT/s33c3)
AB_JOBS=6 ab_build old .snap/old "" lnlinear &
AB_JOBS=6 ab_build a0 . "" lnlinear lnl-bench &
AB_JOBS=4 ab_build a1 . "-DLNL_PREP_WARP_AHEAD=1" lnlinear &
wait
ab_el built
for v in old a0 a1; do [ -f build-$v/liblnlinear.so ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_smoke a0 60 "--dtype bf16 --strategy fused" 8192,1024,1024 || { ab_pack; exit 1; }
for s in 4096,768,768 8192,1024,1024; do
    for v in old a0 a1; do
        target=$R/target_${v}_$s.py
        cat >"$target" <<PY
import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
f = Case(load("build-$v/liblnlinear.so"), $s, "bf16", "fused")
for _ in range(4):
    f.fwd()
torch.cuda.synchronize()
PY
        timeout 100 ncu --kernel-name regex:'fold_prep' --launch-skip 1 --launch-count 3 \
            --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section SchedulerStats --section InstructionStats \
            python3 "$target" >"$R/ncu_${v}_$s.txt" 2>&1
        echo "ncu $v $s rc $?: $(grep -E '^ +Duration' "$R/ncu_${v}_$s.txt" | awk '{print $NF}' | paste -sd' ') us;" \
            "issued/sched $(grep -E 'Issued Warp Per Scheduler' "$R/ncu_${v}_$s.txt" | awk '{print $NF}' | paste -sd' ');" \
            "inst $(grep -E 'Executed Instructions  ' "$R/ncu_${v}_$s.txt" | head -1 | awk '{print $NF}');" \
            "occ $(grep -E 'Achieved Occupancy' "$R/ncu_${v}_$s.txt" | head -1 | awk '{print $NF}');" \
            "regs $(grep -E 'Registers Per Thread' "$R/ncu_${v}_$s.txt" | head -1 | awk '{print $NF}');" \
            "grid $(grep -E 'Grid Size' "$R/ncu_${v}_$s.txt" | head -1 | awk '{print $NF}');" \
            "DRAM% $(grep -E 'DRAM Throughput' "$R/ncu_${v}_$s.txt" | awk '{print $NF}' | paste -sd' ')"
    done
done
ab_el ncu
for v in old a0 a1; do
    timeout 100 python3 bench/cuda/timeline.py --lib build-$v/liblnlinear.so --strategies fused --phase fwd \
        --iters 9 --shapes 4096,768,768 8192,768,3072 8192,1024,1024 8192,2048,2048 >"$R/timeline_$v.txt" 2>&1
    echo "timeline $v rc $?: $(grep -E 'fold_prep' "$R/timeline_$v.txt" | awk '{print $1}' | paste -sd' ') us"
done
ab_el done
ab_pack
