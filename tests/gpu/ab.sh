# tests/gpu/ab.sh: the steps of an A/B device script, to be sourced. Every GPU session since
# the sixth wrote them inline (docs/results/cuda/*/next-*.sh): build two or three variants
# of the library, a smoke run that catches a hang before anything else, test-table rows,
# compute-sanitizer on a few rows, lnl-bench rounds taken in turn across the variants (the
# H200 is shared and drifts: a variant's rounds are never run back to back), and the
# results packed for the device tool. A script sources this file and calls the steps:
#
#   . tests/gpu/ab.sh && ab_init dx                       # results in $OUT/dx
#   ab_build old ../main "" lnl-bench & ab_build new . "" lnl-bench test_table & wait
#   ab_smoke new 30 "--dtype bf16 --strategy fused" 8192,1024,1024 || { ab_pack; exit 1; }
#   ab_tables new 90 4224,520,136 3200,1000,72
#   ab_quick new 120 bf16 f16
#   ab_sanitize new bf16 4224,520,136
#   ab_pytest new 150 "stats_inside or folded_weight_overflow"   # build new with target lnlinear
#   ab_bench 2 "old new" "--dtype bf16 --strategy fused" 8192,1024,1024 32768,4096,256
#   ncu ... python3 "$(ab_target new 8192,1024,1024 bf16 auto)"  # a profiler's target
#   ab_pack
#
# A variant NAME is built in ./build-NAME. Every step runs under `timeout` and prints one
# line a run (its exit status: 124 is a timeout), its full output going to $R. The
# device defaults to cuda; AB_DEVICE=cpu runs the same steps on the CPU backend (how this
# file is tested without a GPU). Nothing here exits: the caller decides what a failure
# stops.

AB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # tests/gpu, for racecheck_ours.sh

ab_init() { # NAME: results in $OUT/NAME (./ab-NAME without $OUT); starts the clock
    AB_NAME=$1
    if [ -n "${OUT:-}" ]; then R=$OUT/$1; else R=./ab-$1; fi
    AB_DEVICE=${AB_DEVICE:-cuda}
    AB_T0=$(date +%s)
    rm -rf "$R" && mkdir -p "$R"
}

ab_el() { echo "[t=$(($(date +%s) - AB_T0)) s] $*"; } # elapsed seconds and a label

ab_build() { # NAME SRC CUDA_FLAGS TARGET...: configure and build build-NAME from SRC
    local n=$1 src=$2 fl=$3
    shift 3
    local cuda=ON
    [ "$AB_DEVICE" = cpu ] && cuda=OFF
    cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=$cuda \
        -DLNL_BUILD_TORCH_OPS=OFF "-DCMAKE_CUDA_FLAGS=$fl" >"$R/cfg_$n.log" 2>&1 &&
        cmake --build "build-$n" -j "${AB_JOBS:-8}" --target "$@" >"$R/build_$n.log" 2>&1
    local rc=$?
    echo "build $n rc $rc"
    return $rc
}

# lnl-bench's result rows (dev dtype M,K,N strategy fwd bwd ... f+b/floor err MB ok|FAIL):
# shape, strategy, fwd and bwd ms, fwd/GEMM, f+b/floor, max error and verdict
ab_rows() { awk '($1 == "cuda" || $1 == "cpu") && ($NF == "ok" || $NF == "FAIL") {
    print $3, $4, "fwd", $5, "bwd", $6, "fwd/GEMM", $9, "f+b/floor", $11, "err", $12, $NF }' "$@"; }

ab_smoke() { # NAME LIMIT "BENCH ARGS" SHAPE...: one lnl-bench run a shape; 1 if any failed
    local n=$1 limit=$2 args=$3 s rc bad=0
    shift 3
    for s in "$@"; do
        # shellcheck disable=SC2086  # the arguments are words on purpose
        timeout "$limit" "build-$n/bench/lnl-bench" --device "$AB_DEVICE" $args --shape "$s" \
            >"$R/smoke_${n}_$s.txt" 2>&1
        rc=$?
        [ $rc = 0 ] || bad=1 # a crash (rc 2) poisons the context as a hang (124) does
        echo "smoke $n $s rc $rc (124: a hang): $(ab_rows "$R/smoke_${n}_$s.txt" | paste -sd';')"
        [ $rc = 0 ] || tail -3 "$R/smoke_${n}_$s.txt"
    done
    return $bad
}

ab_tables() { # NAME LIMIT SHAPE...: the C test table's rows of these shapes
    local n=$1 limit=$2 s
    shift 2
    for s in "$@"; do
        timeout "$limit" "build-$n/tests/test_table" --device "$AB_DEVICE" --shape "$s" \
            >"$R/table_${n}_$s.txt" 2>&1
        echo "table $n $s rc $?: $(tail -1 "$R/table_${n}_$s.txt")"
    done
}

ab_quick() { # NAME LIMIT DTYPE...: the quick test table of each dtype
    local n=$1 limit=$2 d
    shift 2
    for d in "$@"; do
        timeout "$limit" "build-$n/tests/test_table" --device "$AB_DEVICE" --quick --dtype "$d" \
            >"$R/table_quick_${n}_$d.txt" 2>&1
        echo "table quick $n $d rc $?: $(tail -1 "$R/table_quick_${n}_$d.txt")"
    done
}

ab_sanitize() { # NAME DTYPE SHAPE...: memcheck, racecheck, synccheck on the quick rows
    local n=$1 d=$2 s tool f
    shift 2
    for s in "$@"; do
        for tool in memcheck racecheck synccheck; do
            f=$R/san_${tool}_${n}_$s.txt
            local table=("build-$n/tests/test_table" --device "$AB_DEVICE" --quick --dtype "$d" --shape "$s")
            if [ $tool = racecheck ]; then # judged on our kernels, not cuBLAS's (nvjet_*)
                timeout "${AB_SAN_LIMIT:-120}" "$AB_DIR/racecheck_ours.sh" "${table[@]}" >"$f" 2>&1
            else
                timeout "${AB_SAN_LIMIT:-120}" compute-sanitizer --tool $tool --error-exitcode 99 \
                    "${table[@]}" >"$f" 2>&1
            fi
            echo "$tool $n $s rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-200)"
            # racecheck's reports by kernel
            grep "Race reported" "$f" | sed 's/+0x.*//;s/.*access at //' | sort | uniq -c | head -5
        done
    done
}

# The quick table's rows are small: session 20's tensor-core row sums passed it (and the
# sanitizers) and then failed three f16 Python tests under run.sh, whose errors grew with K.
# A variant that changes what a kernel computes should run the Python tests of its path too.
ab_pytest() { # NAME LIMIT EXPR: the Python tests matching -k EXPR on build-NAME's library
    local n=$1 limit=$2 expr=$3
    LNLINEAR_LIBRARY=$PWD/build-$n/liblnlinear.so PYTHONPATH=python LNLINEAR_TEST_DEVICE=$AB_DEVICE \
        timeout "$limit" python3 -m pytest -q -p no:cacheprovider tests/python -k "$expr" \
        >"$R/pytest_$n.txt" 2>&1
    echo "pytest $n rc $?: $(tail -1 "$R/pytest_$n.txt")"
}

# Each call's files carry its number (bench_VARIANT_rROUND_cCALL.txt): session 28's scripts
# called it once a dtype, and every call overwrote the one before's rounds.
AB_BENCH_CALLS=0
ab_bench() { # ROUNDS "VARIANT..." "BENCH ARGS" SHAPE...: the variants in turn, ROUNDS times
    local rounds=$1 variants=$2 args=$3 r v s shapes=()
    shift 3
    AB_BENCH_CALLS=$((AB_BENCH_CALLS + 1))
    for s in "$@"; do shapes+=(--shape "$s"); done
    for ((r = 1; r <= rounds; r++)); do
        for v in $variants; do
            # shellcheck disable=SC2086
            timeout "${AB_BENCH_LIMIT:-120}" "build-$v/bench/lnl-bench" --device "$AB_DEVICE" $args \
                "${shapes[@]}" >"$R/bench_${v}_r${r}_c$AB_BENCH_CALLS.txt" 2>&1
            echo "== $v round $r rc $?"
            ab_rows "$R/bench_${v}_r${r}_c$AB_BENCH_CALLS.txt"
        done
    done
}

# A Python target for a profiler (ncu, nsys): three forward+backward calls of one problem
# on build-NAME's library, through bench/cuda/time_cuda.py's Case (random inputs of
# non-zero mean). Writes $R/target_SHAPE.py and prints its path.
ab_target() { # NAME SHAPE DTYPE STRATEGY
    local f=$R/target_$2.py
    cat >"$f" <<PY
import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
c = Case(load("build-$1/liblnlinear.so"), $2, "$3", "$4")
for _ in range(3):
    c.fwd_bwd()
torch.cuda.synchronize()
PY
    echo "$f"
}

ab_pack() { # $R into $OUT/NAME.tgz (the device tool brings files back, not folders)
    [ -n "${OUT:-}" ] || return 0
    (cd "$OUT" && tar czf "$AB_NAME.tgz" "$AB_NAME" && rm -rf "$AB_NAME")
}
