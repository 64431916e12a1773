#!/usr/bin/env python3
"""Would LayerNorm folded into the epilogue be accurate enough in float32?

    python3 bench/epilogue_form_numerics_f32.py [--device cuda]

The float32 FUSED forward is a SIMT kernel that normalizes x tiles as it loads them, at
1.45-1.54x cuBLAS's fp32 GEMM on the H200 (#7 asks for 1.05x). The bf16 Hopper forward
already avoids that work with the epilogue form (src/cuda/fold_weight.cu):

    y = LN(x) W^T + b = rstd * (x W'^T - mean * c) + d,
    W' = W * gamma (float32), c = W' 1, d = W beta + b,

whose main loop is a plain GEMM of the raw x: in float32 that GEMM could be cuBLAS's own,
followed by one pass over y for the epilogue. The subtraction cancels the row mean out of
x W'^T, so the error grows with |mean| * rstd. This script measures it against a float64
reference, next to the order of the float32 path today (LN(x) in float32, shifted sums,
then the GEMM), on rows of spread 2 and growing mean. The GEMMs are torch's float32
matmul (on CUDA with TF32 off: true fp32, as cuBLAS runs it for us).
"""
import argparse

import torch

from epilogue_form_numerics import problem  # the same operands and reference as bf16's


def library_stats(x):
    """Row statistics as the library computes them in float32: sums of x - x0 (x0 the row's
    first element). Returns x0, mean - x0, rstd and mean, each [M, 1]."""
    K = x.shape[1]
    x0 = x[:, :1]
    dm = (x - x0).sum(1, keepdim=True) / K
    r32 = (((x - x0) - dm) ** 2).sum(1, keepdim=True).div(K).add(1e-5).rsqrt()
    return x0, dm, r32, x0 + dm


def print_table(what, columns, shapes, errors, device):
    """The error table both float32 scripts print: rows of spread 2 and growing mean."""
    print(f"relative error of {what} against float64 (rows of spread 2)")
    width = max(14, max(len(f"{M},{K},{N}") for M, K, N in shapes))
    print(f"{'M,K,N':>{width}} {'mean':>6} {'|mean|*rstd':>11} {columns[0]:>9} {columns[1]:>9}")
    for (M, K, N) in shapes:
        for offset in (0.0, 3.0, 10.0, 32.0, 64.0, 128.0, 1e3):
            a, b, ratio = errors(M, K, N, offset, device)
            print(f"{f'{M},{K},{N}':>{width}} {offset:>6g} {ratio:>11.1f} {a:>9.2e} {b:>9.2e}")


def errors(M, K, N, offset, device, spread=2.0, seed=1):
    x, gamma, beta, W, b, _, _, rel = problem(M, K, N, offset, device, torch.float32, spread, seed)
    x0, dm, r32, m32 = library_stats(x)
    today = (((x - x0) - dm) * r32 * gamma + beta) @ W.T + b
    Wp = W * gamma
    epi = r32 * (x @ Wp.T - m32 * Wp.sum(1)) + (W @ beta + b)
    return rel(today), rel(epi), (offset / spread)


def run(what, columns, shapes, errors):
    """Both float32 scripts' command line: [--device cpu|cuda], then the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    print_table(what, columns, shapes, errors, args.device)


def main():
    run("y", ("today", "epilogue"), ((512, 768, 768), (512, 4096, 256), (256, 4096, 1024)), errors)


if __name__ == "__main__":
    main()
