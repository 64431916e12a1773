#!/usr/bin/env bash
# session 11 call 3: why the FORM_FOLD_STATS fix (see COMMIT, new) runs the fused forward ~10%
#  slower than 2ceb37c (old) at 32768,4096,256 and 12800,4096,256 in call 2; v1/ = new with the
#  consumers' "*stop" check at each tile's first slice kept for FORM_FOLD_STATS too (never set there).
#  lnl-bench FUSED bf16, three rounds in turn (PDL builds); profile_cuda.py FUSED bf16 kernel
#  times, two rounds in turn (builds with -DLNL_PDL=0).
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
el() { echo "[t=$(( $(date +%s) - T0 )) s] $*"; }
R=$OUT/c3; mkdir -p $R
b() { local src=$1 n=$2 fl=$3; shift 3
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 \
   && cmake --build build-$n -j 3 --target "$@" > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
for v in old new v1; do s=$v; [ $v = new ] && s=.; b $s $v "" lnl-bench & b $s $v-nopdl -DLNL_PDL=0 lnlinear & done
wait; el builds done
B="--device cuda --dtype bf16 --strategy fused --shape 32768,4096,256 --shape 12800,4096,256"
for r in 1 2 3; do for v in old new v1; do
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1; echo "== $v $r: $(grep '^cuda' $R/bench_${v}_$r.txt | grep fused | awk '{print $3, $5}' | paste -sd' ')"
done; done
for r in 1 2; do for v in old new v1; do
  timeout 60 python3 bench/cuda/profile_cuda.py --lib build-$v-nopdl/liblnlinear.so --dtypes bf16 --strategies fused --iters 20 --shapes 32768,4096,256 12800,4096,256 > $R/profile_${v}_$r.txt 2>&1
  echo "== $v $r"; grep -E "^bf16 M,K,N|lnlinear fused|ln_gemm_fwd_sm90|fold_weight" $R/profile_${v}_$r.txt | cut -c1-100
done; done
el done
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
