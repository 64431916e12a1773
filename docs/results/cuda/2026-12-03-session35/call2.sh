#!/usr/bin/env bash
# Session 35, call 2: dw_finish with its loads issued together (1cc3115) against 3d6ccd8
# (.snap/prev, carried): gradients' digests (must be equal bit for bit), kernel durations;
# the Python tests of dW from the raw x. Then a probe for the next session's design (a
# GEMM dx = epilogue(dy W) with inner dimension N, which reads x in its epilogue): how fast
# our Hopper GEMM kernel runs a problem of that geometry, 32768 x 4096 out of an inner 256
# (the forward at M,K,N = 32768,256,4096), in its cooperative form, 128-wide tiles and the
# ping-pong form, against cuBLAS's GEMM of the same shape.
# device call: `bash docs/results/cuda/2026-12-03-session35/call2.sh` (carry .snap/prev)
. tests/gpu/ab.sh && ab_init s35c2 # results in $R ($OUT/s35c2)
AB_JOBS=7 ab_build prev .snap/prev "" lnlinear lnl-bench &
AB_JOBS=8 ab_build new . "" lnlinear lnl-bench &
wait
ab_el built
for v in prev new; do [ -x build-$v/bench/lnl-bench ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_smoke new 60 "--dtype bf16 --strategy auto" 32768,4096,256 || { ab_pack; exit 1; }
for v in prev new; do
    LNLINEAR_LIBRARY=$PWD/build-$v/liblnlinear.so LNLINEAR_NO_CPP=1 PYTHONPATH=python:bench/cuda \
        timeout 100 python3 bench/cuda/ln_backward_ab.py --reps 20 >"$R/lnab_$v.txt" 2>&1
    echo "ln_backward_ab $v rc $?"
done
paste -d' ' <(awk -F'|' 'NR>2 {print $1 "|" $3}' "$R/lnab_prev.txt") <(awk -F'|' 'NR>2 {print $3}' "$R/lnab_new.txt")
ab_pytest new 150 "dw_from_x or auto_small_n"
ab_el checked
for v in prev new; do
    PYTHONPATH=python timeout 90 python3 bench/cuda/timeline.py --lib build-$v/liblnlinear.so --shapes 32768,4096,256 \
        16384,8192,1024 --dtypes bf16 --strategies auto --phase bwd --iters 5 >"$R/timeline_$v.txt" 2>&1
    echo "timeline $v rc $?"
    grep -E "dw_|nvjet" "$R/timeline_$v.txt" | tail -12 | cut -c1-100
done
ab_el timelines
for r in 1 2; do
    for e in none LNL_CUDA_SM90_BN=128 LNL_CUDA_PINGPONG_MAX_K=256; do
        env $([ $e = none ] || echo $e) timeout 100 build-new/bench/lnl-bench --device cuda --dtype bf16 \
            --strategy fused --strategy unfused --shape 32768,256,4096 --shape 32768,4096,256 >"$R/probe_${e%%=*}_r$r.txt" 2>&1
        echo "== probe $e round $r rc $?"
        grep -E "cuBLAS GEMM" "$R/probe_${e%%=*}_r$r.txt" | cut -c1-80
        ab_rows "$R/probe_${e%%=*}_r$r.txt"
    done
done
for e in none LNL_CUDA_SM90_BN=128 LNL_CUDA_PINGPONG_MAX_K=256; do
    env PYTHONPATH=python $([ $e = none ] || echo $e) timeout 90 python3 bench/cuda/timeline.py --lib build-new/liblnlinear.so \
        --shapes 32768,256,4096 --dtypes bf16 --strategies fused unfused --phase fwd --iters 5 \
        >"$R/timeline_fwd_${e%%=*}.txt" 2>&1
    echo "timeline fwd $e rc $?"
    grep -E "^ +[0-9.]+ +-?[0-9.]+ " "$R/timeline_fwd_${e%%=*}.txt" | tail -8 | cut -c1-100
done
ab_el done
ab_pack
