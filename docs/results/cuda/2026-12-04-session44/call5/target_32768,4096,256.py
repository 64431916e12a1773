import sys
sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
c = Case(load("build-new/liblnlinear.so"), 32768,4096,256, "bf16", "auto")
for _ in range(3):
    c.fwd_bwd()
torch.cuda.synchronize()
