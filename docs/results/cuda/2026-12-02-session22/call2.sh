#!/usr/bin/env bash
# Session 22, call 2: why the ping-pong form (s22-pingpong, -DLNL_SM90_PINGPONG=1) loses
# 25% at K = 4096 and gains nothing beyond noise at K <= 1024 (call 1). ncu on main's
# epilogue-form kernel and the ping-pong one, same problems, same machine: the tensor pipe's
# busy and idle time (did the ping-pong hide the epilogue?), L2 and the L2->SM traffic
# (64-row tiles read W' twice as often), the stalls and where the samples fall.
# Snapshot of the branch in .snap (carry [".snap"]):
#   cd .snap || exit 3; bash docs/results/cuda/2026-12-02-session22/call2.sh
R=${OUT:-.}/c2
mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
pack() { (cd "${OUT:-.}" && tar czf c2.tgz c2); }
bld() { # NAME FLAGS
    cmake -S . -B "build-$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
        -DLNL_BUILD_TORCH_OPS=OFF "-DCMAKE_CUDA_FLAGS=-lineinfo $2" >"$R/cfg_$1.log" 2>&1 &&
        cmake --build "build-$1" -j8 --target lnlinear >"$R/build_$1.log" 2>&1
    echo "build $1 rc $?"
}
bld main "" &
bld pp "-DLNL_SM90_PINGPONG=1" &
wait
el builds
export PYTHONPATH=python
for sh in 8192,1024,1024 8192,4096,4096; do
    for v in main pp; do
        # our launches: warm-up (epilogue form, then the idle transform form), the pass
        # (the same): skip 2, take 1 -> the pass's epilogue form
        timeout 120 ncu --kernel-name regex:'ln_gemm_fwd_sm90' --launch-skip 2 --launch-count 1 \
            --section SpeedOfLight --section ComputeWorkloadAnalysis \
            --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
            --section SourceCounters --import-source no -f -o "$R/ncu_${v}_$sh" \
            python3 bench/cuda/ncu_forward.py --lib "build-$v/liblnlinear.so" --shape "$sh" \
            --passes 1 >"$R/ncu_${v}_$sh.log" 2>&1
        el "ncu $v $sh rc $?"
        timeout 40 ncu --import "$R/ncu_${v}_$sh.ncu-rep" --page raw --csv >"$R/raw_${v}_$sh.csv" 2>&1
        timeout 60 ncu --import "$R/ncu_${v}_$sh.ncu-rep" --page source --csv --print-source sass \
            >"$R/sass_${v}_$sh.csv" 2>&1
        python3 - "$R/raw_${v}_$sh.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = [i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r]
if not h:
    print("  no raw page"); sys.exit()
head, unit, data = rows[h[0]], rows[h[0] + 1], rows[h[0] + 2]
want = ["gpu__time_duration.sum",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_cycles_active.min.pct_of_peak_sustained_elapsed",
        "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
        "l1tex__m_xbar2l1tex_read_sectors.avg.pct_of_peak_sustained_elapsed",
        "lts__t_sector_hit_rate.pct", "dram__cycles_active.avg.pct_of_peak_sustained_elapsed",
        "smsp__inst_executed.sum", "sm__inst_executed.avg.per_cycle_active",
        "smsp__issue_active.avg.pct_of_peak_sustained_active"]
for w in want:
    if w in head:
        i = head.index(w)
        print(f"  {w} = {data[i]} {unit[i]}")
    else:
        print(f"  {w}: not in the page")
PY
        rm -f "$R/ncu_${v}_$sh.ncu-rep"
        pack
    done
    for v in main pp; do
        echo "== $v $sh: samples by execution count"
        timeout 60 python3 bench/cuda/ncu_sass_summary.py --top 8 "$R/sass_${v}_$sh.csv" >"$R/summary_${v}_$sh.txt" 2>&1; head -34 "$R/summary_${v}_$sh.txt"
    done
    gzip -f "$R"/sass_*_"$sh".csv "$R"/raw_*_"$sh".csv
    pack
done
el "all done"
pack
rm -rf "$R"
