#!/usr/bin/env bash
# Session 30, call 6: the ordered reduction of the backward's partials (dgamma, dbeta, db)
# with more lanes a column. Call 5's profile (-DLNL_PDL=0) had it at 7.3 us at
# 8192,1024,1024 for ~6.5 MB of partials (1.5 us at 4.2 TB/s): latency-bound, each of 16
# lanes summing G / 16 rows with 8 loads in flight. Variants by build flag (branch
# s30-reduce-lanes): p16 = 16 lanes, unroll 8 (main); p32 = 32 lanes; p32u = 32 lanes,
# unroll 16. Each kernel's own time (torch.profiler, builds with -DLNL_PDL=0), then the
# quick bf16 table on the two new variants.
# device call: `bash docs/results/cuda/2026-12-03-session30/call6.sh`
export PYTHONUNBUFFERED=1
R=${OUT:-.}/s30c6
rm -rf "$R" && mkdir -p "$R"
T0=$(date +%s)
el() { echo "[t=$(($(date +%s) - T0)) s] $*"; }
build() { # NAME FLAGS TARGETS...
    local n=$1 fl=$2
    shift 2
    cmake -S . -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON \
        -DLNL_BUILD_TORCH_OPS=OFF "-DCMAKE_CUDA_FLAGS=-DLNL_PDL=0 $fl" >"$R/cfg_$n.log" 2>&1 &&
        cmake --build "build-$n" -j 5 --target "$@" >"$R/build_$n.log" 2>&1
    el "build $n rc $?"
}
build p16 "" lnlinear &
build p32 "-DLNL_RED_LANES=32" lnlinear test_table &
build p32u "-DLNL_RED_LANES=32 -DLNL_RED_UNROLL=16" lnlinear test_table &
wait
for v in p16 p32 p32u; do
    timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$v/liblnlinear.so \
        --shapes 4096,768,768 8192,1024,1024 32768,4096,256 --dtypes bf16 --strategies auto \
        --iters 10 >"$R/profile_$v.txt" 2>&1
    el "profile $v rc $?"
    grep -E "M,K,N|lnlinear auto|reduce_partials|ln_bwd|colsum" "$R/profile_$v.txt"
done
(cd "${OUT:-.}" && tar czf s30c6.tgz s30c6)
for v in p32 p32u; do
    timeout 100 build-$v/tests/test_table --device cuda --quick --dtype bf16 >"$R/table_quick_$v.txt" 2>&1 &
done
wait
for v in p32 p32u; do el "table $v: $(tail -1 "$R/table_quick_$v.txt")"; done
(cd "${OUT:-.}" && tar czf s30c6.tgz s30c6)
