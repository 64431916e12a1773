#!/usr/bin/env bash
# Session 35, call 1: dW from the raw x's prep (one wave of resident blocks, the next rows'
# loads in flight, the flag tested on the statistics it loads anyway) and finish (the
# chunks' sums loaded together); the LayerNorm backward's ring kernel where two register
# blocks fit an SM (LNL_CUDA_LN_BWD_RING_PER_SM=2, an override of the new build).
# old = 835e15c (.snap/old, carried), new = the working tree.
#  1. builds; smoke; the quick bf16 table and dW-from-x rows (every dtype); memcheck and
#     synccheck on one; the Python tests of dW from the raw x;
#  2. bench/cuda/ln_backward_ab.py: old, new, new with the ring at two blocks an SM
#     (digests: the ring must equal new bit for bit; new differs from old only where dW
#     comes from the raw x, whose partial rows changed with the grid);
#  3. lnl-bench AUTO backward, old / new / ring in turn, three rounds (bf16), two (f16);
#  4. torch.profiler timeline of the bf16 backward at 32768,4096,256 and 16384,8192,1024,
#     old and new (each kernel's duration).
# device call: `bash docs/results/cuda/2026-12-03-session35/call1.sh` (carry .snap/old)
. tests/gpu/ab.sh && ab_init s35c1 # results in $R ($OUT/s35c1)
AB_JOBS=7 ab_build old .snap/old "" lnlinear lnl-bench &
AB_JOBS=8 ab_build new . "" lnlinear lnl-bench test_table &
wait
ab_el built
for v in old new; do [ -x build-$v/bench/lnl-bench ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_smoke new 60 "--dtype bf16 --strategy auto" 32768,4096,256 || { ab_pack; exit 1; }
ab_smoke new 60 "--dtype f32 --strategy auto" 8192,4096,1024 || { ab_pack; exit 1; }
ab_tables new 100 4224,1024,520 1100,3000,300 700,4104,16 260,8200,136 130,4104,264
ab_quick new 120 bf16
ab_el tables
for s in 4224,1024,520; do
    for tool in memcheck synccheck; do
        timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 build-new/tests/test_table \
            --device cuda --dtype bf16 --shape $s >"$R/${tool}_bf16_$s.txt" 2>&1
        echo "$tool bf16 $s rc $?: $(grep -E 'passed|ERROR SUMMARY' "$R/${tool}_bf16_$s.txt" | paste -sd' ' | cut -c1-200)"
    done
done
ab_pytest new 150 "dw_from_x or auto_small_n or workspace"
ab_el checked
run_ab() { # NAME BUILD [ENV=VALUE]
    env ${3:-} LNLINEAR_LIBRARY=$PWD/build-$2/liblnlinear.so LNLINEAR_NO_CPP=1 PYTHONPATH=python:bench/cuda \
        timeout 100 python3 bench/cuda/ln_backward_ab.py --reps 20 >"$R/lnab_$1.txt" 2>&1
    echo "ln_backward_ab $1 rc $?"
}
run_ab old old; run_ab new new; run_ab ring new LNL_CUDA_LN_BWD_RING_PER_SM=2
paste -d' ' <(awk -F'|' 'NR>2 {print $1 "|" $2}' "$R/lnab_old.txt") <(awk -F'|' 'NR>2 {print $2}' "$R/lnab_new.txt") \
    <(awk -F'|' 'NR>2 {print $2}' "$R/lnab_ring.txt")
ab_el ab
bench3() { # ROUNDS DTYPE SHAPE...: old, new, ring in turn
    local rounds=$1 dt=$2 r v sh=()
    shift 2
    for s in "$@"; do sh+=(--shape "$s"); done
    for ((r = 1; r <= rounds; r++)); do
        for v in old new ring; do
            local b=$v e=
            [ $v = ring ] && b=new e=LNL_CUDA_LN_BWD_RING_PER_SM=2
            env $e timeout 100 build-$b/bench/lnl-bench --device cuda --dtype $dt --strategy auto "${sh[@]}" \
                >"$R/bench_${dt}_${v}_r$r.txt" 2>&1
            echo "== $dt $v round $r rc $?"
            ab_rows "$R/bench_${dt}_${v}_r$r.txt"
        done
    done
}
bench3 3 bf16 32768,4096,256 16384,8192,1024 8192,4096,4096
ab_el bf16
bench3 2 f16 32768,4096,256 8192,4096,4096
ab_el f16
for v in old new; do
    LNLINEAR_LIBRARY=$PWD/build-$v/liblnlinear.so PYTHONPATH=python timeout 90 python3 bench/cuda/timeline.py \
        --lib build-$v/liblnlinear.so --shapes 32768,4096,256 16384,8192,1024 --dtypes bf16 --strategies auto \
        --phase bwd --iters 5 >"$R/timeline_$v.txt" 2>&1
    echo "timeline $v rc $?"
    grep -E "^ +[0-9.]+ +-?[0-9.]+ +" "$R/timeline_$v.txt" | tail -24 | cut -c1-110
done
ab_el done
ab_pack
