#!/usr/bin/env python3
"""How accurate is dW taken from the raw x (src/cuda/dw_from_x.cu) in bf16 and f16?

    python3 bench/dw_from_x_numerics.py [--rows 32768] [--device cuda] [--dtype bf16|f16]

A backward without ln_out can form the weight gradient without writing LN(x):

    dW = dy^T LN(x) = gamma * (dy'^T x - u) + beta * v,
    dy' = bf16(rstd * dy) (rows scaled, rounded once), u = dy'^T mean, v = dy^T 1,

so one GEMM of the raw x does the work. The GEMM's sum over the M rows carries each
row's mean (dy'^T x holds mean * sum(dy')), which u takes off again afterwards, so the
float32 rounding of that sum is multiplied by |mean| * rstd. This script measures dW's
error against a float64 reference for rows of mean OFFSET and spread 1
(|mean| * rstd ~ OFFSET), next to the way it replaces (LN(x) in float32, rounded to bf16,
then the GEMM). It models the GEMM as exact bf16 products summed over the rows in float32
one after another, the worst order; with --device cuda the dy'^T x and dy^T ln_out GEMMs
also run on the tensor cores as bf16 GEMMs with a float32 result (cuBLAS), the last two
columns. The library takes the formula for rows with |mean| * rstd <= 64 and hands other
calls to its fused dW kernel; this is the evidence for that limit.

--dtype f16 models f16's way (session 41): dy' = f16(2^e rstd dy), e putting max |rstd dy|
in [2^14, 2^15) (src/cuda/dw_scale.cuh), G and u scaled back by 2^-e, every operand f16;
f16's limit is 64 as bf16's (16 until session 42, when the tensor-core column first ran
for f16), and its error bound 2e-3 (bf16's 1e-2).
"""
import argparse

import numpy as np
import torch


def bf16(t):
    return t.to(torch.bfloat16).to(t.dtype)


def f16(t):
    return t.to(torch.float16).to(t.dtype)


def scale_exp(m):
    """dw_scale_exp_of (src/cuda/dw_scale.cuh): 2^e m in [2^14, 2^15)."""
    if not (m > 0) or not np.isfinite(m):
        return 0
    _, e = np.frexp(np.float32(m))
    return int(max(-100, min(100, 15 - int(e))))


def seq_sum_rows(a, b):
    """sum_m a[m, n] * b[m, k] in float32, adding the rows in order: [N, K]."""
    acc = torch.zeros(a.shape[1], b.shape[1], dtype=torch.float32)
    for m in range(a.shape[0]):
        acc += a[m].float()[:, None] * b[m].float()[None, :]  # exact: bf16 x bf16 fits float32
    return acc


def seq_sum_rows_fast(a, b, chunk=256):
    """The same additions as seq_sum_rows, vectorized: numpy's float32 cumulative sum over
    the rows (torch's CPU cumsum adds float32 in double, which would hide the rounding)."""
    acc = np.zeros((a.shape[1], b.shape[1]), dtype=np.float32)
    an, bn = a.float().numpy(), b.float().numpy()
    for m0 in range(0, a.shape[0], chunk):
        p = an[m0:m0 + chunk, :, None] * bn[m0:m0 + chunk, None, :]
        p[0] += acc
        acc = np.cumsum(p, axis=0, dtype=np.float32)[-1]
    return torch.from_numpy(acc.copy())


def errors(M, K, N, offset, device, seed=0, dtype="bf16", spread=1.0, dy_scale=1.0):
    """dW's relative errors [rebuild, from x (, the same on the tensor cores)] for rows of
    mean `offset` and spread `spread`, dy of scale `dy_scale`."""
    rnd = f16 if dtype == "f16" else bf16
    g = torch.Generator().manual_seed(seed)
    x = rnd(offset + spread * torch.randn(M, K, generator=g, dtype=torch.float64))
    dy = rnd(dy_scale * torch.randn(M, N, generator=g, dtype=torch.float64))
    gamma = rnd(1.0 + 0.5 * torch.randn(K, generator=g, dtype=torch.float64))
    beta = rnd(0.5 * torch.randn(K, generator=g, dtype=torch.float64))
    mean = x.mean(1)
    rstd = (x.var(1, unbiased=False) + 1e-5).rsqrt()
    xhat = (x - mean[:, None]) * rstd[:, None]
    ref = dy.T @ (xhat * gamma + beta)
    rel = lambda got: ((got.double() - ref).norm() / ref.norm()).item()  # noqa: E731

    # the rebuild: LN(x) in float32 rounded to the dtype, then dy^T ln_out
    ln_out = rnd(((x.float() - mean.float()[:, None]) * rstd.float()[:, None] * gamma.float()
                  + beta.float()).double())
    rebuild = seq_sum_rows_fast(dy, ln_out)
    # dW from the raw x, in the library's order (u from the rounded dy', v from dy); f16
    # scales rstd dy by 2^e before rounding and G - u back by 2^-e
    rdy = rstd.float()[:, None] * dy.float()
    e = scale_exp(rdy.abs().max().item()) if dtype == "f16" else 0
    dyp = rnd((rdy * 2.0 ** e).double())
    u = (dyp.float() * mean.float()[:, None]).sum(0, dtype=torch.float32)
    v = dy.float().sum(0)
    finish = lambda G: (gamma.float() * ((G - u[:, None]) * 2.0 ** -e)  # noqa: E731
                        + beta.float() * v[:, None])
    from_x = finish(seq_sum_rows_fast(dyp, x))
    row = [rel(rebuild), rel(from_x)]
    if device == "cuda":
        td = torch.float16 if dtype == "f16" else torch.bfloat16
        mm = lambda a, b: torch.mm(a.T.to("cuda", td).contiguous(),  # noqa: E731
                                   b.to("cuda", td),
                                   out_dtype=torch.float32).cpu()
        row += [rel(mm(dy, ln_out)), rel(finish(mm(dyp, x)))]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=32768)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--outputs", type=int, default=8)
    ap.add_argument("--offsets", type=float, nargs="*", default=[0, 3, 16, 64, 256, 1000])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    a = ap.parse_args()
    head = "| row mean (spread 1) | rebuild LN(x), float32 in order | from x, float32 in order |"
    if a.device == "cuda":
        head += " rebuild, tensor cores | from x, tensor cores |"
    print(f"dW relative error, M = {a.rows}, K = {a.features}, N = {a.outputs}, {a.dtype} operands\n")
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for o in a.offsets:
        r = errors(a.rows, a.features, a.outputs, o, a.device, dtype=a.dtype)
        print(f"| {o:g} | " + " | ".join(f"{e:.2e}" for e in r) + " |")


if __name__ == "__main__":
    main()
