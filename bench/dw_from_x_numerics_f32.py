#!/usr/bin/env python3
"""How accurate is dW taken from the raw x (src/cuda/dw_from_x.cu) in float32?

    python3 bench/dw_from_x_numerics_f32.py [--device cuda]

The float32 backward without ln_out can form the weight gradient as bf16's does:

    dW = dy^T LN(x) = gamma * (dy'^T x - u) + beta * v,
    dy' = rstd * dy (float32), u = dy'^T mean, v = dy^T 1,

one true-fp32 GEMM of the raw x (cuBLAS) instead of LN(x) written out for it. The GEMM's
sum over the rows carries each row's mean, which u takes off again, so float32's rounding
of that sum grows with |mean| * rstd, as in the forward's epilogue form
(bench/epilogue_form_numerics_f32.py: y's error 2.6e-7 |mean| rstd). This script measures
dW's error against a float64 reference for rows of spread 2 and growing mean, next to the
way it replaces (LN(x) in float32 from shifted sums, then dy^T LN(x)). The GEMMs are
torch's float32 matmul (on CUDA with TF32 off: true fp32, as cuBLAS runs it for us). The
library takes the formula for rows of |mean| * rstd <= 16 (F32_FOLD_MAX_MEAN_RSTD) and
hands other calls to its SIMT dW kernel; this is the evidence for using that limit here.
"""
import torch

from epilogue_form_numerics_f32 import library_stats, run  # the forward's twin


def errors(M, K, N, offset, device, spread=2.0, seed=3):
    g = torch.Generator().manual_seed(seed)
    x64 = offset + spread * torch.randn(M, K, generator=g, dtype=torch.float64)
    dy64 = torch.randn(M, N, generator=g, dtype=torch.float64)
    gamma64 = 1.0 + 0.5 * torch.randn(K, generator=g, dtype=torch.float64)
    beta64 = 0.5 * torch.randn(K, generator=g, dtype=torch.float64)
    # float32 operands; the reference is float64 on the same (rounded) values
    x, dy, gamma, beta = (t.float().to(device) for t in (x64, dy64, gamma64, beta64))
    xd, dyd, gd, bd = (t.double() for t in (x, dy, gamma, beta))
    mean_d = xd.mean(1, keepdim=True)
    rstd_d = (xd.var(1, unbiased=False, keepdim=True) + 1e-5).rsqrt()
    ref = dyd.T @ ((xd - mean_d) * rstd_d * gd + bd)
    rel = lambda got: ((got.double() - ref).norm() / ref.norm()).item()  # noqa: E731
    x0, dm, r32, m32 = library_stats(x)
    rebuild = dy.T @ (((x - x0) - dm) * r32 * gamma + beta)
    dyp = r32 * dy
    u = (dyp * m32).sum(0)
    v = dy.sum(0)
    from_x = gamma * (dyp.T @ x - u[:, None]) + beta * v[:, None]
    return rel(rebuild), rel(from_x), offset / spread


def main():
    run("dW", ("rebuild", "from x"), ((4096, 768, 768), (8192, 1024, 256), (16384, 256, 64)), errors)


if __name__ == "__main__":
    main()
