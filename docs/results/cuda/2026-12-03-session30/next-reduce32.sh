#!/usr/bin/env bash
# For the next session (written in session 30; not run as a whole: no device time was
# left). Branch s30-reduce-lanes: the ordered reduction with 32 lanes a column instead of
# 16 (call 6 measured the kernel alone: 7.2 -> 5.5 us at 8192,1024,1024 without PDL; the
# quick bf16 table passed on that build). Old = main (.snap/old, carried: `git archive
# main | tar -x -C .snap/old && rm -rf .snap/old/docs`), new = the branch's working tree.
# The quick tables of every dtype on new, then lnl-bench's backward in turn; if they pass
# and the backward is not slower, merge and run tests/gpu/run.sh on main.
# device call: `bash docs/results/cuda/2026-12-03-session30/next-reduce32.sh`, carry [".snap/old"]
. tests/gpu/ab.sh && ab_init reduce32
AB_JOBS=8 ab_build old .snap/old "" lnl-bench &
AB_JOBS=8 ab_build new . "" lnl-bench test_table &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
ab_smoke new 60 "--dtype bf16 --strategy auto" 8192,1024,1024 || { ab_pack; exit 1; }
ab_quick new 200 bf16 &
ab_quick new 200 f16 &
ab_quick new 200 f32 &
wait
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024 16384,8192,1024 32768,4096,256
ab_pack
