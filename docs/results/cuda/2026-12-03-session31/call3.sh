#!/usr/bin/env bash
# Session 31, call 3. Branch s31-reduce: the ordered reduction with blocks of 16 columns x
# 64 lanes (twice session 30's 32 x 32 blocks, twice the loads in flight each; the lanes
# added in groups of 8). Calls 1-2 had most of the row lanes' gain from the reduction
# (fewer partial rows), while the LayerNorm backward itself ran 0.4-0.7 us slower with
# lanes: here the reduction alone is made faster instead. Old = main (.snap/old,
# carried), new = the branch; p_* builds without PDL: p_r32 = 32 x 32 (session 30's
# branch), p_new = 16 x 64, p_r8 = 8 x 128.
# device call: `bash docs/results/cuda/2026-12-03-session31/call3.sh`, carry [".snap/old"]
. tests/gpu/ab.sh && ab_init s31c3
AB_JOBS=6 ab_build old .snap/old "" lnl-bench &
AB_JOBS=6 ab_build new . "" lnl-bench test_table &
wait
[ -x build-new/tests/test_table ] && [ -x build-old/bench/lnl-bench ] || { ab_pack; exit 1; }
prof_build() { # NAME SRC FLAGS
    cmake -S "$2" -B "build-$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
        -DLNL_BUILD_TORCH_OPS=OFF "-DCMAKE_CUDA_FLAGS=-DLNL_PDL=0 $3" >"$R/cfg_$1.log" 2>&1 &&
        cmake --build "build-$1" -j 4 --target lnlinear >"$R/build_$1.log" 2>&1
    echo "build $1 rc $?"
}
(prof_build p_old .snap/old "" & prof_build p_new . "" &
 prof_build p_r32 . "-DLNL_RED_COLS=32 -DLNL_RED_LANES=32" &
 prof_build p_r8 . "-DLNL_RED_COLS=8 -DLNL_RED_LANES=128" & wait) >"$R/prof_builds.txt" 2>&1 &
PB=$!
ab_smoke new 60 "--dtype bf16 --strategy auto" 8192,1024,1024 4096,768,768 || { ab_pack; exit 1; }
ab_el tables
ab_quick new 240 bf16 & q1=$!
ab_quick new 240 f16 & q2=$!
ab_quick new 240 f32 & q3=$!
wait $q1 $q2 $q3
ab_el sanitize
AB_SAN_LIMIT=90 ab_sanitize new bf16 4224,1024,520
wait $PB
cat "$R/prof_builds.txt"
ab_el bench
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy auto" 4096,768,768 \
    8192,1024,1024 8192,768,3072 32768,4096,256
AB_BENCH_LIMIT=150 ab_bench 2 "old new" "--dtype f32 --strategy auto" 4096,768,768 8192,1024,1024
ab_el profiles
for n in p_old p_r32 p_new p_r8; do
    timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$n/liblnlinear.so \
        --shapes 4096,768,768 8192,1024,1024 8192,768,3072 32768,4096,256 --dtypes bf16 \
        --strategies auto --iters 10 >"$R/profile_$n.txt" 2>&1
    echo "profile $n rc $?"
    grep -E "M,K,N|lnlinear auto|reduce_partials" "$R/profile_$n.txt" | cut -c1-100
done
ab_el done
ab_pack
