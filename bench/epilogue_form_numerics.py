#!/usr/bin/env python3
"""Is LayerNorm folded into the GEMM's epilogue accurate enough in bf16?

    python3 bench/epilogue_form_numerics.py [--device cuda]

The Hopper fused forward (src/cuda/fused_forward_sm90.cu) normalizes every x slice once
per output tile, so its extra work grows with N. The lead for removing it moves the
LayerNorm to the epilogue:

    y = LN(x) W^T + b = rstd * (x W'^T - mean * c) + d,
    W' = bf16(W * gamma) (each column scaled, rounded once), c = W' 1, d = W beta + b,

so that the main loop is a plain GEMM of the raw x. The subtraction cancels the row mean
out of x W'^T; this script measures what that costs in accuracy against a float64
reference, next to today's order (LN(x) in float32, rounded to bf16, then the GEMM), on
rows whose mean is 3, 50 and 1e3 with a spread of 2. It models the GEMM as
exact bf16 products summed in float32; how Hopper's tensor cores really accumulate is
what --device cuda measures: there x W'^T is also run as a bf16 GEMM on the tensor cores
with a float32 result (torch.mm(..., out_dtype=torch.float32), cuBLAS), the last column.
It also shows why c must be summed from the *rounded* W': from W * gamma before rounding,
the rounding error of W' is multiplied by |mean| / std.
"""
import argparse

import torch


def problem(M, K, N, offset, device, dtype, spread=2.0, seed=1):
    """x (rows of mean `offset`, spread `spread`), gamma, beta, W, b in `dtype`; x's float64
    row mean and rstd; and rel(y), y's relative error against the float64 reference."""
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape, scale=1.0, shift=0.0):
        return (shift + scale * torch.randn(*shape, generator=g, dtype=torch.float64)).to(
            device=device, dtype=dtype)

    x = rnd(M, K, scale=spread, shift=offset)
    gamma, beta = rnd(K, scale=0.5, shift=1.0), rnd(K, scale=0.5)
    W, b = rnd(N, K, scale=K ** -0.5), rnd(N)
    xd = x.double()
    mean = xd.mean(1, keepdim=True)
    rstd = (((xd - mean) ** 2).mean(1, keepdim=True) + 1e-5).rsqrt()
    ref = ((xd - mean) * rstd * gamma.double() + beta.double()) @ W.double().T + b.double()

    def rel(y):
        return ((y.double() - ref).norm() / ref.norm()).item()

    return x, gamma, beta, W, b, mean, rstd, rel


def errors(M, K, N, offset, device, spread=2.0, seed=1):
    x, gamma, beta, W, b, mean, rstd, rel = problem(M, K, N, offset, device, torch.bfloat16,
                                                    spread, seed)
    m32, r32 = mean.float(), rstd.float()
    ln = ((x.float() - m32) * r32 * gamma.float() + beta.float()).to(torch.bfloat16)
    today = (ln.float() @ W.float().T + b.float()).to(torch.bfloat16)
    Wp = (W.float() * gamma.float()).to(torch.bfloat16)
    d = W.float() @ beta.float() + b.float()
    acc = x.float() @ Wp.float().T  # exact bf16 products, float32 sums
    epi = (r32 * (acc - m32 * Wp.float().sum(1)) + d).to(torch.bfloat16)
    epi_bad_c = (r32 * (acc - m32 * (W.float() * gamma.float()).sum(1)) + d).to(torch.bfloat16)
    out = [rel(today), rel(epi), rel(epi_bad_c)]
    if device == "cuda":  # the same, x W'^T on the tensor cores (bf16 in, float32 out)
        try:
            acc_tc = torch.mm(x, Wp.T, out_dtype=torch.float32)
        except (TypeError, RuntimeError) as e:  # torch without mm's out_dtype
            print(f"tensor-core GEMM with a float32 result unavailable: {e}")
            out.append(float("nan"))
        else:
            out.append(rel((r32 * (acc_tc - m32 * Wp.float().sum(1)) + d).to(torch.bfloat16)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    dev = ap.parse_args().device
    print(f"relative error of y against float64 (bf16 bound: 1e-2), {dev}")
    print("M,K,N            row mean | today's order | epilogue form | same, c from unrounded W*gamma"
          + (" | epilogue form, tensor-core GEMM" if dev == "cuda" else ""))
    shapes = [(512, 768, 768), (256, 4096, 1024)] + ([(4096, 4096, 4096)] if dev == "cuda" else [])
    for M, K, N in shapes:
        for offset in (3.0, 50.0, 1e3):
            e = errors(M, K, N, offset, dev)
            print(f"{M},{K},{N:<8} {offset:>8g} | {e[0]:13.2e} | {e[1]:13.2e} | {e[2]:30.2e}"
                  + (f" | {e[3]:.2e}" if len(e) > 3 else ""))


if __name__ == "__main__":
    main()
