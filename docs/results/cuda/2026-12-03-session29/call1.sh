#!/usr/bin/env bash
# Session 29, call 1: narrower tiles for the Hopper forward (pick_bn in
# src/cuda/fused_forward_sm90.cu), 192 or 128 columns where 256-wide ones leave the
# persistent grid's last round mostly empty (4096,768,768 on 132 SMs: 96 tiles of 256,
# 128 of 192; 512,4096,4096: 64 of 256, 128 of 128).
# One build (the working tree); LNL_CUDA_SM90_BN=256 / 192 / 128 forces a width wherever a
# narrower one could be taken, so the A/B runs in one library, the widths in turn.
# Correctness first: the new table rows (F_BN192, F_BN128 and the rule's own choices),
# the quick tables, the sanitizers on the narrow rows; then lnl-bench FUSED bf16.
# device call: `bash docs/results/cuda/2026-12-03-session29/call1.sh`
. tests/gpu/ab.sh && ab_init s29c1
AB_JOBS=16 ab_build new . "" lnl-bench test_table lnlinear || { ab_pack; exit 1; }
ab_el "built"
LNL_CUDA_SM90_BN=192 ab_smoke new 60 "--dtype bf16 --strategy fused" 4096,768,768 || { ab_pack; exit 1; }
LNL_CUDA_SM90_BN=128 ab_smoke new 60 "--dtype bf16 --strategy fused" 512,4096,4096 || { ab_pack; exit 1; }
ab_tables new 200 300,136,776 300,72,580 300,136,904 4096,136,768 384,264,2056 &
ab_quick new 200 bf16 &
ab_quick new 200 f16 &
wait
ab_el "tables"
for sh in 300,136,776 300,72,580 300,136,904 384,264,2056; do
    for tool in memcheck synccheck racecheck; do
        [ $tool != memcheck ] && [ $sh = 384,264,2056 ] && continue
        f=$R/san_${tool}_$sh.txt
        t=(build-new/tests/test_table --device cuda --no-auto --dtype bf16 --shape $sh)
        if [ $tool = racecheck ]; then
            timeout 120 tests/gpu/racecheck_ours.sh "${t[@]}" >"$f" 2>&1
        else
            timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 "${t[@]}" >"$f" 2>&1
        fi
        echo "$tool $sh rc $?: $(grep -E 'passed|SUMMARY|^racecheck:' "$f" | paste -sd' ' | cut -c1-200)"
    done
done
ab_el "sanitizers"
S="4096,768,768 4096,768,2304 8192,768,2304 2048,768,3072 1024,768,3072 512,4096,4096 4096,1024,3072 8192,768,3072 8192,1024,1024"
SH=$(printf -- "--shape %s " $S)
for r in 1 2; do
    for w in 256 192 128; do
        # shellcheck disable=SC2086
        LNL_CUDA_SM90_BN=$w timeout 150 build-new/bench/lnl-bench --device cuda --dtype bf16 \
            --strategy fused $SH >"$R/bench_b${w}_r$r.txt" 2>&1
        echo "== BN $w round $r rc $?"
        ab_rows "$R/bench_b${w}_r$r.txt"
    done
    ab_el "round $r"
done
# the rule's own choice (no override), and f16 at the three widths, once each
# shellcheck disable=SC2086
timeout 150 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --strategy auto \
    $SH >"$R/bench_rule.txt" 2>&1
echo "== rule rc $?"; ab_rows "$R/bench_rule.txt"
for w in 256 192 128; do
    LNL_CUDA_SM90_BN=$w timeout 100 build-new/bench/lnl-bench --device cuda --dtype f16 \
        --strategy fused --shape 4096,768,768 --shape 512,4096,4096 >"$R/bench_f16_b$w.txt" 2>&1
    echo "== f16 BN $w rc $?"; ab_rows "$R/bench_f16_b$w.txt"
done
ab_el "all done"
ab_pack
