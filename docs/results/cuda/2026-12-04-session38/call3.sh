#!/usr/bin/env bash
# Session 38, call 3: the LayerNorm backward's register kernel with rows prefetched into
# L2 by the copy engine (cp.async.bulk.prefetch.L2, thread 0, rows row + 2 .. row + P,
# branch s38-l2-prefetch, -DLNL_LN_BWD_L2_AHEAD=P). Today it keeps one row ahead in
# registers (two blocks an SM at K = 4096 bf16: ~32 KB a SM in flight) and runs at ~3.8
# TB/s at 32768,4096,256 where a two-reads-one-write kernel reaches 4.4 (session 31).
# Builds: m (P = 0, SASS identical to main's), p3 (no spill), p6 (8 bytes spilled). The
# arithmetic is unchanged: the gradients' digests must equal m's.
# device call: `bash docs/results/cuda/2026-12-04-session38/call3.sh`
. tests/gpu/ab.sh && ab_init s38c3
AB_JOBS=6 ab_build m . "" lnl-bench lnlinear & AB_JOBS=5 ab_build p3 . "-DLNL_LN_BWD_L2_AHEAD=3" lnl-bench lnlinear &
AB_JOBS=5 ab_build p6 . "-DLNL_LN_BWD_L2_AHEAD=6" lnl-bench lnlinear & wait
ab_el built
for v in m p3 p6; do [ -x build-$v/bench/lnl-bench ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_smoke p6 60 "--dtype bf16 --strategy auto" 32768,4096,256 || { ab_pack; exit 1; }
for v in m p3 p6; do
    PYTHONPATH=python:bench/cuda LNLINEAR_LIBRARY=$PWD/build-$v/liblnlinear.so timeout 150 \
        python3 bench/cuda/ln_backward_ab.py --reps 30 >"$R/lnab_$v.txt" 2>&1
    echo "== ln_backward_ab $v rc $?"; cat "$R/lnab_$v.txt"
done
ab_el digests
AB_BENCH_LIMIT=150 ab_bench 3 "m p3 p6" "--dtype bf16 --strategy auto" 32768,4096,256 8192,4096,4096 \
    8192,4096,12288 65536,1024,256 16384,2048,1024 8192,1024,1024 16384,8192,1024
AB_BENCH_LIMIT=150 ab_bench 2 "m p3 p6" "--dtype f16 --strategy auto" 32768,4096,256 8192,4096,4096 8192,1024,1024
ab_el done
ab_pack
