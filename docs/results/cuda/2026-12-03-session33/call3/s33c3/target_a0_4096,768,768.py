import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
f = Case(load("build-a0/liblnlinear.so"), 4096,768,768, "bf16", "fused")
for _ in range(4):
    f.fwd()
torch.cuda.synchronize()
