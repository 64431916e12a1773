#!/usr/bin/env bash
# Session 15, call 6 (the same with -DLNL_PDL=0, bf16 only: under PDL a kernel waiting in
# griddepcontrol.wait for the one before is timed by the profiler from its launch, so call
# 5's idle transform form and ordered reductions read as 0.09 and 0.2 ms): where FUSED's and AUTO's time goes kernel by kernel at #7's shapes
# that miss their targets (bench/cuda/profile_cuda.py: torch.profiler, 5 passes of
# forward+backward, every GPU kernel's mean time a pass, eager beside it), bf16 and f32,
# on the commit tests/gpu/run.sh proved in call 3. Evidence for the next session's plan,
# not timings of record. From the repo root: `C=<commit> bash <this script>`.
export PYTHONUNBUFFERED=1
R=$OUT/prof_nopdl; mkdir -p $R; echo "${C:-unknown}" > $R/COMMIT
cmake -S . -B build-nopdl -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
  -DLNL_BUILD_TESTS=OFF -DLNL_BUILD_BENCH=OFF "-DCMAKE_CUDA_FLAGS=-DLNL_PDL=0" > $R/cfg.log 2>&1 \
  && cmake --build build-nopdl -j16 --target lnlinear > $R/build.log 2>&1; echo "build rc $?"
export PYTHONPATH=python
timeout 200 python3 bench/cuda/profile_cuda.py --lib build-nopdl/liblnlinear.so --dtypes bf16 \
  --shapes 4096,768,768 8192,768,3072 8192,1024,1024 16384,8192,1024 32768,4096,256 8192,4096,4096 \
  --strategies fused auto > $R/bf16.txt 2>&1; echo "bf16 rc $?"
grep -E "^(bf16) M|: [0-9.]+ ms of kernels" $R/bf16.txt
cd $OUT && tar czf prof_nopdl.tgz prof_nopdl && rm -rf prof_nopdl
