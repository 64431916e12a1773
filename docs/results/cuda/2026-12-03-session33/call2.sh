#!/usr/bin/env bash
# Session 33, call 2: the forward's statistics-and-folding pass with fewer instructions
# (variant B29): old = a590dba's library (.snap/old, carried), new = the working tree,
# nk = new without keeping x - x0 between the passes (-DLNL_PREP_KEEP_MAX_CPL=0).
# device call: `bash docs/results/cuda/2026-12-03-session33/call2.sh` (carry .snap/old)
. tests/gpu/ab.sh && ab_init s33c2 # results in $R ($OUT/s33c2)
AB_JOBS=6 ab_build old .snap/old "" lnlinear lnl-bench &
AB_JOBS=6 ab_build new . "" lnlinear lnl-bench test_table &
AB_JOBS=4 ab_build nk . "-DLNL_PREP_KEEP_MAX_CPL=0" lnlinear lnl-bench &
wait
ab_el built
for v in old new nk; do [ -f build-$v/liblnlinear.so ] || { tail -5 "$R/build_$v.log"; ab_pack; exit 1; }; done
ab_smoke new 60 "--dtype bf16 --strategy fused" 8192,1024,1024 || { ab_pack; exit 1; }
for v in old new nk; do
    timeout 150 python3 bench/cuda/forward_ab.py --lib build-$v/liblnlinear.so >"$R/fwd_ab_$v.txt" 2>&1
    echo "forward_ab $v rc $?"; cat "$R/fwd_ab_$v.txt"
done
ab_el forward_ab
for v in old new nk; do
    timeout 120 python3 bench/cuda/timeline.py --lib build-$v/liblnlinear.so --strategies fused --phase fwd \
        --shapes 4096,768,768 8192,768,3072 8192,1024,1024 8192,4096,4096 >"$R/timeline_$v.txt" 2>&1
    echo "timeline $v rc $?"; grep -E "M,K,N|fold_prep|ln_gemm_fwd_sm90<[^,]*, [0-9]+, 1" "$R/timeline_$v.txt" | cut -c1-90
done
ab_el timelines
ab_quick new 150 bf16 f16
ab_pytest new 240 "fused or folded or fold_prep or stats_inside or auto_small"
AB_SAN_LIMIT=150 ab_sanitize new f16 4224,1024,520
ab_el checks
ab_bench 2 "old new nk" "--dtype bf16 --strategy fused" 4096,768,768 8192,768,3072 8192,1024,1024 8192,4096,4096
ab_el done
ab_pack
