#!/usr/bin/env bash
# Session 39, call 10: is reduce_partials_kernel's 0.196 ms at 16384,8192,1024 (call 2's
# profile) its own time, or its programmatic-dependent launch waiting for the kernel before
# it? The AUTO backward's kernel table from a build without PDL (-DLNL_PDL=0: each kernel
# starts when the one before has ended) beside main's.
# device call: `bash docs/results/cuda/2026-12-04-session39/call10.sh`
. tests/gpu/ab.sh && ab_init s39c10 # results in $R ($OUT/s39c10)
AB_JOBS=16 ab_build p0 . "-DLNL_PDL=0" lnlinear || { tail -5 "$R/build_p0.log"; ab_pack; exit 1; }
AB_JOBS=16 ab_build n . "" lnlinear || { tail -5 "$R/build_n.log"; ab_pack; exit 1; }
ab_el built
for b in p0 n; do
    timeout 100 python3 bench/cuda/profile_cuda.py --lib build-$b/liblnlinear.so --dtypes bf16 \
        --strategies auto --iters 5 --shapes 16384,8192,1024 32768,4096,256 >"$R/profile_$b.txt" 2>&1
    echo "profile $b rc $?"
    grep -v -i "warn" "$R/profile_$b.txt" | grep -A14 "lnlinear auto" | cut -c1-110
done
ab_el done
ab_pack
