import sys; sys.path.insert(0, "bench/cuda")
import torch
from time_cuda import Case, load
c = Case(load(sys.argv[1]), 32768, 4096, 256, "bf16", "fused")
for _ in range(3):
    c.fwd(); c.bwd()
torch.cuda.synchronize()
