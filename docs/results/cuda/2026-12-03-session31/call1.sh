#!/usr/bin/env bash
# Session 31, call 1. Branch s31-ln-lanes: session 30's ordered reduction at 32 lanes
# (branch s30-reduce-lanes, rebased) and the LayerNorm backward's row lanes (a block of
# up to 512 threads works on several rows at once and writes one row of dgamma/dbeta
# partials: G 1024 -> 256 at bf16 8192 x 1024). Old = main (.snap/old, carried).
# Correctness first (smoke, the quick tables of every dtype, racecheck/synccheck on rows
# whose blocks have lanes), then lnl-bench's AUTO bf16 rounds in turn, then each
# kernel's own time without PDL: main, the branch, the branch with one lane a block
# (-DLNL_LN_BWD_LANES=1: the reduction alone), the branch with 8 rows of dy in flight in
# the column sums (-DLNL_COLSUM_UNROLL=8).
# device call: `bash docs/results/cuda/2026-12-03-session31/call1.sh`, carry [".snap/old"]
. tests/gpu/ab.sh && ab_init s31c1
AB_JOBS=6 ab_build old .snap/old "" lnl-bench &
AB_JOBS=6 ab_build new . "" lnl-bench test_table &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
# the profile builds (-DLNL_PDL=0) go on in the background while the tables run
prof_build() { # NAME SRC FLAGS
    cmake -S "$2" -B "build-$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
        -DLNL_BUILD_TORCH_OPS=OFF "-DCMAKE_CUDA_FLAGS=-DLNL_PDL=0 $3" >"$R/cfg_$1.log" 2>&1 &&
        cmake --build "build-$1" -j 4 --target lnlinear >"$R/build_$1.log" 2>&1
    echo "build $1 rc $?"
}
(prof_build p_old .snap/old "" & prof_build p_new . "" & prof_build p_l1 . -DLNL_LN_BWD_LANES=1 &
 prof_build p_c8 . -DLNL_COLSUM_UNROLL=8 & wait) >"$R/prof_builds.txt" 2>&1 &
PB=$!
ab_smoke new 60 "--dtype bf16 --strategy auto" 8192,1024,1024 4096,768,768 || { ab_pack; exit 1; }
ab_el tables
ab_quick new 240 bf16 & q1=$!
ab_quick new 240 f16 & q2=$!
ab_quick new 240 f32 & q3=$!
wait $q1 $q2 $q3
ab_el sanitize
AB_SAN_LIMIT=90 ab_sanitize new bf16 4224,520,136
wait $PB
cat "$R/prof_builds.txt"
ab_el bench
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024 8192,768,3072 32768,4096,256
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype f32 --strategy auto" 4096,768,768 8192,1024,1024
ab_el profiles
for n in p_old p_new p_l1 p_c8; do
    timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$n/liblnlinear.so \
        --shapes 4096,768,768 8192,1024,1024 --dtypes bf16 f32 --strategies auto --iters 10 \
        >"$R/profile_$n.txt" 2>&1
    echo "profile $n rc $?"
    grep -E "M,K,N|lnlinear auto|colsum|reduce_partials|ln_bwd" "$R/profile_$n.txt" | cut -c1-120
done
ab_el done
ab_pack
