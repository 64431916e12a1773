#!/usr/bin/env bash
# Session 40, call 6 (main at c2cd64f, whose run.sh was call 5, on the same warm machine:
# build-gpu is run.sh's build): #7's bf16 figures with the dx epilogue, lnl-bench three
# rounds back to back (f16 takes no new path: session 39's medians stand).
mkdir -p "$OUT/call6"
cmake --build build-gpu -j 16 --target lnl-bench >/dev/null 2>&1; echo "build rc $?"
for r in 1 2 3; do
    timeout 90 build-gpu/bench/lnl-bench --device cuda --dtype bf16 \
        --json "$OUT/call6/bench_r$r.json" >"$OUT/call6/bench_r$r.log" 2>&1
    echo "lnl-bench round $r rc $?: $(tail -1 "$OUT/call6/bench_r$r.log")"
done
