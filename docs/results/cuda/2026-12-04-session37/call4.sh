#!/usr/bin/env bash
# Session 37, call 4 (run on branch s37-alu-probe at 9b3015e; its LNL_SM90_PROBE is
# call4/probe.patch, `git apply` it on main to rerun): does ALU
# work slow the N = 256 forward only on the warps that issue wgmma? Builds:
#   p0 = main's kernel (the in-kernel statistics);
#   p1 = no statistics work at all (y wrong, no off-centre flag);
#   p2 = p1 + the sums' count of FFMAs on producer warps 1-3, paced slice by slice;
#   p3 = p1 + the sums' count of FFMAs on the consumer threads, where the sums run.
# FUSED bf16 forward, three rounds in turn. p1-p3 print FAIL (their y is wrong); only the times
# count.
# device call: `bash docs/results/cuda/2026-12-04-session37/call4.sh`
. tests/gpu/ab.sh && ab_init s37c4 # results in $R ($OUT/s37c4)
for v in 0 1 2 3; do
    AB_JOBS=4 ab_build p$v . "-DLNL_SM90_PROBE=$v" lnl-bench &
done
wait
for v in 0 1 2 3; do [ -x build-p$v/bench/lnl-bench ] || { tail -5 "$R/build_p$v.log"; ab_pack; exit 1; }; done
ab_el built
for v in 2 3; do # a hang shows as 124
    timeout 30 build-p$v/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --shape 32768,4096,256 \
        >"$R/smoke_p$v.txt" 2>&1
    rc=$?
    echo "smoke p$v rc $rc: $(ab_rows "$R/smoke_p$v.txt")"
    [ $rc = 124 ] && { ab_pack; exit 1; }
done
AB_BENCH_LIMIT=40 ab_bench 3 "p0 p1 p2 p3" "--dtype bf16 --strategy fused" 32768,4096,256 \
    65536,1024,256 12800,4096,256
ab_el done
ab_pack
