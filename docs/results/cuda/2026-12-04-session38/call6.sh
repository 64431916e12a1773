#!/usr/bin/env bash
# Session 38, call 6: call 5's plain-sum row merge at the power cap (a training loop's
# state), since lnl-bench's short runs put its gain near the noise. Branch s38-plain-sums;
# builds c (-DLNL_SM90_ROW_MERGE=0, main's SASS) and s (=1); bench/cuda/clocks_ab.py on each
# library in turn, two rounds, FUSED bf16 forward back to back for 0.8 s a shape.
# device call: `bash docs/results/cuda/2026-12-04-session38/call6.sh`
. tests/gpu/ab.sh && ab_init s38c6
AB_JOBS=8 ab_build c . "-DLNL_SM90_ROW_MERGE=0" lnlinear &
AB_JOBS=8 ab_build s . "-DLNL_SM90_ROW_MERGE=1" lnlinear & wait
for v in c s; do [ -f build-$v/liblnlinear.so ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_el built
for r in 1 2; do
    for v in c s; do
        timeout 60 python3 bench/cuda/clocks_ab.py --lib build-$v/liblnlinear.so --shape 32768,4096,256 \
            --shape 65536,1024,256 --shape 12800,4096,256 --shape 16384,8192,1024 --shape 12800,4096,768 \
            --variant $v: --seconds 0.8 --rounds 1 >"$R/clocks_${v}_r$r.txt" 2>&1
        echo "== $v round $r rc $?"; tail -n +3 "$R/clocks_${v}_r$r.txt"
    done
done
ab_el done
ab_pack
