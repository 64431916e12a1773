import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
lib = load("build-n/liblnlinear.so")
f, u = Case(lib, 32768,4096,256, "bf16", "fused"), Case(lib, 32768,4096,256, "bf16", "unfused")
for _ in range(3):
    f.fwd()
    u.fwd()
torch.cuda.synchronize()
