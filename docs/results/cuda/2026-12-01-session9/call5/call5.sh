#!/usr/bin/env bash
# session 9 call 5: which of the LayerNorm backward trims pays at boost clock, without PDL
# overlap muddying kernel times. Four library builds, each with -DLNL_PDL=0 (every kernel
# launched the ordinary way, so torch.profiler's kernel durations do not include waits):
#   old = main (449b676's library), new = working tree (centred + row_coeffs + float4
#   partial stores), nr = new with row_coeffs as block_sum2 in every warp, nf = new with
#   scalar partial stores. profile_cuda.py, AUTO bf16, 20 passes, 3 shapes, 2 rounds.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c5; mkdir -p $R
b() { cmake -S "$1" -B "build-$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DCMAKE_CUDA_FLAGS=-DLNL_PDL=0 > $R/$2.cfg.log 2>&1 && cmake --build build-$2 -j 4 --target lnlinear > $R/build_$2.log 2>&1; echo "$2 rc $?"; }
b old old & b . new & b nr nr & b nf nf &
wait
el builds done
for r in 1 2; do for v in old new nr nf; do
  timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$v/liblnlinear.so --dtypes bf16 --iters 20 \
     --shapes 32768,4096,256 8192,4096,4096 4096,768,768 > $R/profile_${v}_$r.txt 2>&1
  el "profile $v $r rc $?"
done; done
for f in $R/profile_*.txt; do echo "== $f"; awk '/^bf16 M,K,N/{s=$4" "$5" "$6} /lnlinear auto/{print s" total "$3} /ln_bwd_(reg|ring)_kernel|reduce_partials_kernel/{n=$5; sub(/<.*/,"",n); print s" "$1" "n}' $f; done
cd $OUT && tar czf all.tgz c5 && rm -rf c5
