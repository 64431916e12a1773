#!/usr/bin/env bash
# Session 15, call 5: where FUSED's and AUTO's time goes kernel by kernel at #7's shapes
# that miss their targets (bench/cuda/profile_cuda.py: torch.profiler, 5 passes of
# forward+backward, every GPU kernel's mean time a pass, eager beside it), bf16 and f32,
# on the commit tests/gpu/run.sh proved in call 3. Evidence for the next session's plan,
# not timings of record. From the repo root: `C=<commit> bash <this script>`.
export PYTHONUNBUFFERED=1
R=$OUT/prof; mkdir -p $R; echo "${C:-unknown}" > $R/COMMIT
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON -DLNL_BUILD_TORCH_OPS=OFF \
  -DLNL_BUILD_TESTS=OFF -DLNL_BUILD_BENCH=OFF > $R/cfg.log 2>&1 \
  && cmake --build build-gpu -j16 --target lnlinear > $R/build.log 2>&1; echo "build rc $?"
export PYTHONPATH=python
timeout 200 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so --dtypes bf16 \
  --shapes 4096,768,768 8192,768,3072 8192,1024,1024 16384,8192,1024 32768,4096,256 8192,4096,4096 \
  --strategies fused auto > $R/bf16.txt 2>&1; echo "bf16 rc $?"
timeout 120 python3 bench/cuda/profile_cuda.py --lib build-gpu/liblnlinear.so --dtypes f32 \
  --shapes 4096,768,768 8192,1024,1024 32768,4096,256 --strategies fused auto > $R/f32.txt 2>&1; echo "f32 rc $?"
grep -E "^(bf16|f32) M|: [0-9.]+ ms of kernels" $R/bf16.txt $R/f32.txt
cd $OUT && tar czf prof.tgz prof && rm -rf prof
