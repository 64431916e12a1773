#!/usr/bin/env bash
# Session 40, call 7: three more rounds of call 6 (main at c2cd64f), for medians of six, on
# the same warm machine (build-gpu is run.sh's build): #7's bf16 figures with the dx epilogue, lnl-bench three
# rounds back to back (f16 takes no new path: session 39's medians stand).
mkdir -p "$OUT/call7"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF >/dev/null 2>&1
cmake --build build-gpu -j 16 --target lnl-bench >/dev/null 2>&1; echo "build rc $?"
for r in 4 5 6; do
    timeout 90 build-gpu/bench/lnl-bench --device cuda --dtype bf16 \
        --json "$OUT/call7/bench_r$r.json" >"$OUT/call7/bench_r$r.log" 2>&1
    echo "lnl-bench round $r rc $?: $(tail -1 "$OUT/call7/bench_r$r.log")"
done
