#!/usr/bin/env bash
# Session 19, call 1 (branch s19-bwd-streams). Two questions, one build each way:
#  1. The backward's dW chain on a side stream beside the dx chain (side_stream.cu):
#     the same build timed with LNL_CUDA_BWD_STREAMS=0 (one stream, main's order) and =1,
#     rounds in turn; AUTO forward+backward / floor is #7's target.
#  2. fold_weight_kernel (K > 2048) with FOLD_BATCH = 4 chunks' loads in flight a thread,
#     against one at a time (-DLNL_FOLD_BATCH=1, main's loop): the FUSED forward.
# Correctness: the streams' Python tests (bitwise against one stream, two user streams,
# graph capture), the quick bf16 and f32 tables, memcheck on a few rows.
# Snapshot: rm -rf .snap && mkdir .snap && git archive HEAD | tar -x -C .snap &&
#   cp docs/results/cuda/2026-12-02-session19/call1-streams/call1.sh .snap/ && rm -rf .snap/docs/results
# then the device call `cd .snap || exit 3; ./call1.sh` with carry [".snap"].
cd "$(dirname "$0")" || exit 2
. tests/gpu/ab.sh && ab_init c1
R=$PWD/res-c1 && rm -rf "$R" && mkdir -p "$R" # outside $OUT: packed after every step
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/c1.tgz" -C "$PWD" res-c1; }
AB_JOBS=8 ab_build new . "" lnl-bench test_table &
AB_JOBS=8 ab_build fold1 . "-DLNL_FOLD_BATCH=1" lnl-bench &
wait
ab_el builds
ab_smoke new 40 "--dtype bf16 --strategy auto" 32768,4096,256 8192,1024,1024 || { pk; exit 1; }
pk
bench_env() { # ROUNDS "ARGS" SHAPE...: LNL_CUDA_BWD_STREAMS 0 then 1, in turn
    local rounds=$1 args=$2 r v s shapes=()
    shift 2
    for s in "$@"; do shapes+=(--shape "$s"); done
    for ((r = 1; r <= rounds; r++)); do
        for v in 0 1; do
            local tag
            tag=$(echo "$args" | tr -d ' -')
            # shellcheck disable=SC2086
            LNL_CUDA_BWD_STREAMS=$v timeout 150 build-new/bench/lnl-bench --device cuda $args \
                "${shapes[@]}" >"$R/bench_${tag}_s${v}_$r.txt" 2>&1
            echo "== streams=$v $args round $r rc $?"
            ab_rows "$R/bench_${tag}_s${v}_$r.txt"
        done
    done
}
bench_env 3 "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024 8192,4096,4096 \
    8192,1024,1024 8192,768,3072 4096,768,768 8192,4096,12288
ab_el "bench streams bf16"
pk
AB_BENCH_LIMIT=120 ab_bench 3 "fold1 new" "--dtype bf16 --strategy fused" 32768,4096,256 \
    8192,4096,4096 16384,8192,1024 8192,4096,12288
ab_el "bench fold"
pk
timeout 120 env LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY="$PWD/build-new/liblnlinear.so" \
    PYTHONPATH="$PWD/python" python3 -m pytest -q -p no:cacheprovider \
    tests/python/test_cuda_streams.py >"$R/pytest_streams.txt" 2>&1
echo "pytest streams rc $?: $(tail -1 "$R/pytest_streams.txt")"
ab_quick new 150 bf16 f32
ab_el "tables"
pk
bench_env 2 "--dtype f32 --strategy auto" 32768,4096,256 8192,1024,1024 4096,768,768
ab_el "bench streams f32"
pk
AB_SAN_LIMIT=100 ab_sanitize new bf16 4224,520,136
ab_el "all done"
pk
