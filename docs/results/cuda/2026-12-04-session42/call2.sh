#!/usr/bin/env bash
# Session 42, call 2: two changes behind per-call switches, timed against the old way in
# one build (variants = environments, rounds in turn):
#  - db's column sums launched right behind the LayerNorm backward, running beside it
#    (LNL_CUDA_COLSUM_BESIDE, default on; 0 = before the dxhat GEMM as until now), with
#    LNL_CUDA_LN_BWD_FREE_SLOTS=k leaving k of an SM's LayerNorm blocks to them;
#  - the forward's pre-pass walking W's rows before x's (LNL_CUDA_PREP_W_FIRST=1);
#  - f16's dW-from-x limit at 64 (was 16).
# Checks first: quick tables (all dtypes, and the 16-bit ones with W first), sanitizers on
# quick rows that take both, the dW-from-x and bias Python tests.
. tests/gpu/ab.sh && ab_init s42c2
ab_build new . "" lnl-bench test_table lnlinear || { tail -20 "$R/build_new.log"; ab_pack; exit 1; }
ab_el built
ab_smoke new 60 "--dtype bf16 --strategy auto" 8192,1024,1024 8192,768,3072 || { ab_pack; exit 1; }
ab_quick new 150 bf16 f16 f32 &
p1=$!
(for d in bf16 f16; do
  LNL_CUDA_PREP_W_FIRST=1 timeout 150 build-new/tests/test_table --device cuda --quick --dtype $d >"$R/table_quick_wfirst_$d.txt" 2>&1
  echo "table quick W-first $d rc $?: $(tail -1 "$R/table_quick_wfirst_$d.txt")"
done
for fr in 2; do
  LNL_CUDA_LN_BWD_FREE_SLOTS=$fr timeout 150 build-new/tests/test_table --device cuda --quick --dtype bf16 >"$R/table_quick_free$fr.txt" 2>&1
  echo "table quick free$fr bf16 rc $?: $(tail -1 "$R/table_quick_free$fr.txt")"
done) &
p2=$!
wait $p1 $p2
ab_pytest new 280 "dw_from_x or bias or auto_small_n or offset" &
p3=$!
ab_sanitize new bf16 8448,136,520
f=$R/san_memcheck_wfirst_f16.txt
LNL_CUDA_PREP_W_FIRST=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 \
    build-new/tests/test_table --device cuda --quick --dtype f16 --shape 4224,200,520 >"$f" 2>&1
echo "memcheck W-first f16 rc $?: $(grep -E 'passed|SUMMARY' "$f" | paste -sd' ' | cut -c1-200)"
ab_el sanitized
V0="LNL_CUDA_COLSUM_BESIDE=0 LNL_CUDA_PREP_W_FIRST=0"
V1="LNL_CUDA_COLSUM_BESIDE=1 LNL_CUDA_PREP_W_FIRST=1"
V2="LNL_CUDA_COLSUM_BESIDE=1 LNL_CUDA_PREP_W_FIRST=1 LNL_CUDA_LN_BWD_FREE_SLOTS=2"
wait $p3
ab_el checked
SH="--shape 8192,1024,1024 --shape 4096,768,768 --shape 8192,768,3072 --shape 8192,4096,4096 --shape 8192,2048,2048 --shape 8192,4096,12288"
for r in 1 2 3; do
  for v in 0 1 2; do
    eval "env \$V$v timeout 120 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy auto $SH" >"$R/bench_v${v}_r$r.txt" 2>&1
    echo "== v$v round $r rc $?"; ab_rows "$R/bench_v${v}_r$r.txt"
  done
done
for r in 1 2; do
  for v in 0 1; do
    eval "env \$V$v timeout 120 build-new/bench/lnl-bench --device cuda --dtype bf16 --strategy fused --shape 8192,1024,1024 --shape 8192,768,3072 --shape 16384,2048,1024" >"$R/benchf_v${v}_r$r.txt" 2>&1
    echo "== fused v$v round $r rc $?"; ab_rows "$R/benchf_v${v}_r$r.txt"
    eval "env \$V$v timeout 120 build-new/bench/lnl-bench --device cuda --dtype f16 --strategy auto --shape 8192,1024,1024 --shape 8192,4096,4096" >"$R/bench16_v${v}_r$r.txt" 2>&1
    echo "== f16 v$v round $r rc $?"; ab_rows "$R/bench16_v${v}_r$r.txt"
  done
done
ab_el done
ab_pack
