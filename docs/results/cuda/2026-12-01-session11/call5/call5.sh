#!/usr/bin/env bash
# session 11 call 5: does the merged f16-overflow change (fold_weight_kernel's grid capped at
#  2048 blocks with block flags read by FORM_FOLD's warp 1) cost FORM_FOLD time at K > 2048?
#  pre/ = 9ff09e9 (before the merge), . = fb9395d (final). lnl-bench FUSED bf16, three rounds in turn.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
R=$OUT/c5; mkdir -p $R
b() { local src=$1 n=$2
  cmake -S "$src" -B "build-$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON > $R/cfg_$n.log 2>&1 \
   && cmake --build build-$n -j 8 --target lnl-bench > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b pre pre & b . fin &
wait; echo "[t=$(( $(date +%s) - T0 )) s] builds done"
B="--device cuda --dtype bf16 --strategy fused --shape 8192,4096,4096 --shape 16384,8192,1024"
for r in 1 2 3; do for v in pre fin; do
  [ $(( $(date +%s) - T0 )) -lt 200 ] || break 2
  timeout 60 build-$v/bench/lnl-bench $B > $R/bench_${v}_$r.txt 2>&1; echo "== $v $r: $(grep '^cuda' $R/bench_${v}_$r.txt | grep -E 'fused|GEMM' | awk '{print $3, $4, $5}' | paste -sd' ') [t=$(( $(date +%s) - T0 ))]"
done; done
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
