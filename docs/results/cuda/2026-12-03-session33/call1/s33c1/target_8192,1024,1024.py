import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
lib = load("build-n/liblnlinear.so")
f, a = Case(lib, 8192,1024,1024, "bf16", "fused"), Case(lib, 8192,1024,1024, "bf16", "auto")
for _ in range(3):
    f.fwd()
    a.fwd_bwd()
torch.cuda.synchronize()
