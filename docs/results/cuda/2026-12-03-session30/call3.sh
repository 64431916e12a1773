#!/usr/bin/env bash
# Session 30, call 3: the host's share of a small call's measured time, and the per-call
# cudaFuncSetAttribute calls cached (branch s30-attr-cache). Old = main (.snap/old,
# carried), new = the branch's working tree. bench/cuda/host_issue.py on both in turn
# (host time of a call, one call between events as lnl-bench times it, 50 queued), then
# lnl-bench rounds, then the quick bf16 table on new.
# device call: `bash docs/results/cuda/2026-12-03-session30/call3.sh`, carry [".snap/old"]
. tests/gpu/ab.sh && ab_init s30c3
AB_JOBS=8 ab_build old .snap/old "" lnlinear lnl-bench &
AB_JOBS=8 ab_build new . "" lnlinear lnl-bench test_table &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_smoke new 60 "--dtype bf16 --strategy fused" 4096,768,768 || { ab_pack; exit 1; }
for r in 1 2; do
    for v in old new; do
        timeout 120 env LNLINEAR_LIBRARY=build-$v/liblnlinear.so python3 bench/cuda/host_issue.py \
            --shapes 16,8,16 4096,768,768 8192,768,3072 8192,1024,1024 >"$R/host_${v}_r$r.txt" 2>&1
        echo "== host_issue $v round $r rc $?"
        cat "$R/host_${v}_r$r.txt"
    done
done
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy fused" 4096,768,768 \
    8192,768,3072 8192,1024,1024
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024
ab_quick new 200 bf16
ab_pack
