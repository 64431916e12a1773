"""One forward+backward of lnlinear at one shape, for ncu to profile (session 9 call 2)."""
import sys
import torch
import lnlinear
M, K, N = map(int, sys.argv[1].split(","))
strategy, recompute = sys.argv[2], sys.argv[3] == "1"
dt = torch.bfloat16
g = torch.Generator(device="cuda").manual_seed(1)
rnd = lambda *s: torch.randn(*s, device="cuda", generator=g)
x = (3 + 2 * rnd(M, K)).to(dt).requires_grad_()
lnw = (1 + 0.3 * rnd(K)).to(dt).requires_grad_()
lnb = (0.5 * rnd(K)).to(dt).requires_grad_()
w = (rnd(N, K) / K ** 0.5).to(dt).requires_grad_()
b = (0.5 * rnd(N)).to(dt).requires_grad_()
dy = rnd(M, N).to(dt)
for _ in range(2):
    y = lnlinear.layernorm_linear(x, lnw, lnb, w, b, recompute=recompute, strategy=strategy)
    torch.autograd.grad(y, (x, lnw, lnb, w, b), dy)
torch.cuda.synchronize()
