#!/usr/bin/env bash
# For the next session with a GPU (written in session 16, not run): where the bf16 FUSED
# forward loses to cuBLAS at the shapes #7 still misses, kernel by kernel, on main.
#  1. 32768,4096,256 and 65536,1024,256 (N = 256: FUSED forward 1.44-1.47x the GEMM, the
#     target 1.2x): session 15's profile put our GEMM kernel (FORM_FOLD_STATS, statistics
#     from the x slices in shared memory) at 0.130 ms against cuBLAS's 0.098-0.12. How much
#     of that is the statistics' ~250 instructions a slice a thread (SASS, session 16) and
#     how much the kernel itself? The same kernel without them: a build with
#     -DLNL_SM90_STATS_INSIDE=0 (FORM_FOLD, the statistics from the pre-pass).
#  2. 8192,1024,1024 and 8192,768,1024 with LNL_CUDA_SPLIT_STATS_MIN_K=0 (split statistics)
#     against the default (the pre-pass in the folding's launch): the split lost there
#     (0.061-0.068 vs 0.047 ms, session 16 call 1). Is it the GEMM kernel (waits on partner
#     tiles) or the chain (the counters' memset before the folding)?
#  3. ncu of the forward GEMM kernels against cuBLAS's on the same data at 32768,4096,256
#     (bench/cuda/ncu_forward.py): SpeedOfLight, ComputeWorkloadAnalysis (tensor pipe),
#     WarpStateStats (what the consumer warps wait on), SchedulerStats.
#  4. AUTO's float32 rule at N <= 256: FUSED's forward beat UNFUSED's at 32768,4096,256 in
#     two runs (1.11 vs 1.15x and 1.136 vs 1.175x the GEMM), its forward+backward tied
#     (1.06 vs 1.07x the floor), keeping 0.26 MB instead of 537; AUTO still takes UNFUSED.
#     lnl-bench float32, three rounds, at N <= 256 shapes (default build).
# The profiling builds with -DLNL_PDL=0: under PDL torch.profiler times a dependent kernel
# from its launch (session 15). ~7 minutes. From the repo root: `C=<commit> bash <this script>`.
export PYTHONUNBUFFERED=1 PYTHONPATH=python
R=$OUT/prof16; mkdir -p $R; echo "${C:-unknown}" > $R/COMMIT
b() { local n=$1 fl=$2
  cmake -S . -B build-$n -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
    -DLNL_BUILD_TESTS=OFF -DLNL_BUILD_BENCH=OFF "-DCMAKE_CUDA_FLAGS=$fl" > $R/cfg_$n.log 2>&1 \
    && cmake --build build-$n -j8 --target lnlinear > $R/build_$n.log 2>&1; echo "build $n rc $?"; }
b nopdl "-DLNL_PDL=0" & b nostats "-DLNL_PDL=0 -DLNL_SM90_STATS_INSIDE=0" &
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
  > $R/cfg_bench.log 2>&1 && cmake --build build-bench -j8 --target lnl-bench > $R/build_bench.log 2>&1 &
wait; echo "build bench: $(ls build-bench/bench/lnl-bench 2>/dev/null || echo missing)"
P="python3 bench/cuda/profile_cuda.py --dtypes bf16 --strategies fused"
timeout 120 $P --lib build-nopdl/liblnlinear.so --shapes 32768,4096,256 65536,1024,256 > $R/n256_stats.txt 2>&1
echo "n256 stats rc $?"
timeout 120 $P --lib build-nostats/liblnlinear.so --shapes 32768,4096,256 65536,1024,256 > $R/n256_nostats.txt 2>&1
echo "n256 nostats rc $?"
timeout 120 $P --lib build-nopdl/liblnlinear.so --shapes 8192,1024,1024 8192,768,1024 > $R/k1024_default.txt 2>&1
echo "k1024 default rc $?"
LNL_CUDA_SPLIT_STATS_MIN_K=0 timeout 120 $P --lib build-nopdl/liblnlinear.so --shapes 8192,1024,1024 8192,768,1024 \
  > $R/k1024_split.txt 2>&1; echo "k1024 split rc $?"
for f in n256_stats n256_nostats k1024_default k1024_split; do
  echo "== $f"; grep -E "^bf16 M|lnlinear fused:|ln_gemm_fwd_sm90|nvjet|fold_|ln_fwd|Memset" $R/$f.txt | cut -c1-120
done
for v in nopdl nostats; do
  timeout 240 ncu --kernel-name regex:'ln_gemm_fwd_sm90|nvjet' --launch-skip 3 --launch-count 6 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section LaunchStats \
    python3 bench/cuda/ncu_forward.py --lib build-$v/liblnlinear.so --shape 32768,4096,256 --passes 2 \
    > $R/ncu_$v.txt 2>&1; echo "ncu $v rc $?"
  grep -E "ln_gemm_fwd_sm90|nvjet|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Stall|No Eligible" \
    $R/ncu_$v.txt | cut -c1-120 | head -60
done
B="--device cuda --dtype f32"
for sh in 32768,4096,256 65536,1024,256 16384,2048,128 12800,4096,256 8192,4096,256; do B="$B --shape $sh"; done
for r in 1 2 3; do
  timeout 90 build-bench/bench/lnl-bench $B > $R/f32_n256_$r.txt 2>&1; echo "== f32 N <= 256, round $r rc $?"
  awk '$1 == "cuda" && $4 != "cuBLAS" {print $3, $4, "fwd/GEMM", $9, "f+b/floor", $11, "err", $12, "MB", $13}' $R/f32_n256_$r.txt
done
cd $OUT && tar czf prof16.tgz prof16 && rm -rf prof16
