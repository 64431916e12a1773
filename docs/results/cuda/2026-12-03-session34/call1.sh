#!/usr/bin/env bash
# Session 34, call 1: the backward's workspace cut to one M x K region (LN(x) written over
# dxhat by the LayerNorm backward's LNOUT kernels; no room reserved for a LN(x) the plan
# never rebuilds). old = 232299f (.snap/old, carried), new = the working tree.
#  1. builds; the new one with the C++ autograd op (for compare.py's timings);
#  2. test-table rows through every LayerNorm-backward kernel that writes LN(x) (register
#     kernel with one and two chunks a thread, Hopper ring, generic with V = 1 and 8),
#     all dtypes, exact workspaces with guard bytes; the quick tables of bf16 and f16;
#     memcheck on f16 rows; the new workspace-size tests;
#  3. bench/cuda/ln_backward_ab.py: gradients' digests (old and new must agree bit for
#     bit) and backward times, old and new in turn, two rounds;
#  4. bench/compare.py against eager, bf16 and f16, new library (time and peak memory).
# device call: `bash docs/results/cuda/2026-12-03-session34/call1.sh` (carry .snap/old)
. tests/gpu/ab.sh && ab_init s34c1 # results in $R ($OUT/s34c1)
AB_JOBS=5 ab_build old .snap/old "" lnlinear &
{
    cmake -S . -B build-new -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
        -DLNL_BUILD_TORCH_OPS=ON >"$R/cfg_new.log" 2>&1 &&
        cmake --build build-new -j 11 --target lnlinear lnlinear_torch test_table lnl-bench \
            >"$R/build_new.log" 2>&1
    echo "build new rc $?"
} &
wait
ab_el built
for v in old new; do [ -f build-$v/liblnlinear.so ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_smoke new 60 "--dtype f16 --strategy auto" 4096,1024,1024 || { ab_pack; exit 1; }
ab_tables new 100 129,768,257 16,768,768 4224,1024,520 1100,3000,300 130,4104,264 700,4104,16 \
    16,4097,257 260,8200,136
ab_quick new 120 bf16 f16
ab_el tables
for s in 4224,1024,520 130,4104,264 16,4097,257 260,8200,136; do
    timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 build-new/tests/test_table \
        --device cuda --dtype f16 --shape $s >"$R/memcheck_f16_$s.txt" 2>&1
    echo "memcheck f16 $s rc $?: $(grep -E 'passed|ERROR SUMMARY' "$R/memcheck_f16_$s.txt" | paste -sd' ' | cut -c1-200)"
done
ab_pytest new 120 "workspace"
ab_el checked
for r in 1 2; do
    for v in old new; do
        LNLINEAR_LIBRARY=$PWD/build-$v/liblnlinear.so LNLINEAR_NO_CPP=1 PYTHONPATH=python:bench/cuda \
            timeout 100 python3 bench/cuda/ln_backward_ab.py --reps 30 >"$R/lnab_${v}_r$r.txt" 2>&1
        echo "ln_backward_ab $v round $r rc $?"
    done
done
paste <(awk -F'|' 'NR>2 {print $1 "|" $2 "|" $3}' "$R/lnab_old_r1.txt") <(awk -F'|' 'NR>2 {print $2 "|" $3}' "$R/lnab_old_r2.txt") \
    <(awk -F'|' 'NR>2 {print $2 "|" $3}' "$R/lnab_new_r1.txt") <(awk -F'|' 'NR>2 {print $2 "|" $3}' "$R/lnab_new_r2.txt")
ab_el ab
LNLINEAR_LIBRARY=$PWD/build-new/liblnlinear.so PYTHONPATH=python PYTHONUNBUFFERED=1 timeout 230 \
    python3 bench/compare.py --device cuda --dtypes bf16 f16 --no-compile \
    --candidates lnl_fused lnl_auto eager floor --out "$R/cmp" --time-limit-s 200 >"$R/compare_log.txt" 2>&1
echo "compare rc $?"
grep -A12 "^## Headline" "$R/cmp/results.md"
grep -E "^\| (lnlinear auto|PyTorch eager)" "$R/cmp/results.md" | awk -F'|' '{print $2, "peak", $10}' | paste -sd'\n'
ab_el done
ab_pack
