#!/usr/bin/env bash
# Session 40, call 1: the dx epilogue (dx_epilogue_sm90.cu) in the library, first run.
# One build; LNL_CUDA_DX_EPILOGUE=0 runs the same library the old way (GEMM + LayerNorm
# backward), so old and new alternate in one process image. lnl-bench checks every output
# against float64 on its check rows and y/dx again on the timed run's first rows.
. tests/gpu/ab.sh && ab_init call1
ab_build new . "" lnl-bench || { ab_pack; exit 1; }
ab_el built
mkdir -p build-old/bench && ln -sf "$PWD/build-new/bench/lnl-bench" build-old/bench/lnl-bench-real
cat > build-old/bench/lnl-bench <<'SH'
#!/usr/bin/env bash
LNL_CUDA_DX_EPILOGUE=0 exec "$(dirname "$0")/lnl-bench-real" "$@"
SH
chmod +x build-old/bench/lnl-bench
# ragged (M % 128, K % 256, N % 64 all non-zero), then the bench shapes the path serves
ab_smoke new 60 "--dtype bf16 --strategy fused" 1000,1032,200 4224,2056,72 32768,4096,256 || { ab_pack; exit 1; }
ab_smoke old 60 "--dtype bf16 --strategy fused" 1000,1032,200 || true
ab_el smoked
AB_BENCH_LIMIT=150 ab_bench 3 "old new" "--dtype bf16 --strategy auto" 32768,4096,256 16384,8192,1024 8192,4096,1024 65536,1024,256
ab_el benched
AB_BENCH_LIMIT=150 ab_bench 1 "old new" "--dtype bf16 --strategy fused" 8192,4096,4096 8192,1024,1024
ab_el done
ab_pack
