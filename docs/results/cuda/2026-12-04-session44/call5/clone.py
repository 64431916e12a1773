import torch
x = torch.randn(32768, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(2):
    y = x.clone()
torch.cuda.synchronize()
