"""Checks, in float64 on the CPU, the identities behind src/cuda/dx_epilogue_sm90.cu (and
session 39's prototype before it): the LayerNorm backward's dx, dgamma and dbeta from the
dy . W GEMM's output without that output (dxhat = dy . W, M x K) ever being stored.

    python3 bench/dx_epilogue_identity.py [--seed S]

With xhat = (x - mean) rstd, g = dxhat * gamma:
    dx     = rstd (g - a - xhat b),  a = mean_k g = (dy . c) / K,  c = W gamma,
             b = mean_k (g xhat) = sum_n dy z / K,  z = xhat (W * gamma)^T
               = y - bias - W beta  (y the forward's output: the library's form);
    dgamma = sum_m dxhat * xhat = sum_n W * P,  P = dy^T xhat  (the dW-from-x GEMM's G - u);
    dbeta  = sum_m dxhat = W^T colsum(dy).
Exits non-zero if any differs from the direct evaluation by more than 1e-12 relative.
"""
import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    worst = 0.0
    for M, K, N in [(16, 64, 24), (33, 100, 7), (8, 256, 512)]:
        x = 3 + 2 * rng.standard_normal((M, K))
        gamma = 1 + 0.3 * rng.standard_normal(K)
        beta = 0.5 * rng.standard_normal(K)
        bias = 0.5 * rng.standard_normal(N)
        W = rng.standard_normal((N, K)) / np.sqrt(K)
        dy = rng.standard_normal((M, N))
        mean = x.mean(1, keepdims=True)
        rstd = 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        xhat = (x - mean) * rstd
        dxhat = dy @ W
        g = dxhat * gamma
        dx_direct = rstd * (g - g.mean(1, keepdims=True) - xhat * (g * xhat).mean(1, keepdims=True))
        a = dy @ (W @ gamma) / K
        z = xhat @ (W * gamma).T
        b = (dy * z).sum(1) / K
        y = (xhat * gamma + beta) @ W.T + bias
        b_lib = (dy * (y - (W @ beta + bias))).sum(1) / K  # row_terms_kernel's b
        r = rstd[:, 0]
        # the prototype's epilogue: r gamma acc + (-r^2 b) x + r (mean r b - a)
        dx = (r[:, None] * gamma[None, :] * dxhat + (-(r * r * b))[:, None] * x
              + (r * (mean[:, 0] * r * b - a))[:, None])
        # the library's: r gamma acc + rb (x - mean) + c0, rb = -r^2 b, c0 = -r a
        dx_lib = (r[:, None] * gamma[None, :] * dxhat + (-(r * r * b_lib))[:, None] * (x - mean)
                  + (-r * a)[:, None])
        P = dy.T @ xhat
        checks = {
            "dx": (dx, dx_direct),
            "dx (library form, from y)": (dx_lib, dx_direct),
            "dgamma": ((W * P).sum(0), (dxhat * xhat).sum(0)),
            "dbeta": (W.T @ dy.sum(0), dxhat.sum(0)),
        }
        for name, (got, want) in checks.items():
            err = np.abs(got - want).max() / np.abs(want).max()
            worst = max(worst, err)
            print(f"M,K,N = {M},{K},{N} {name}: max relative difference {err:.2e}")
    ok = worst < 1e-12
    print("identities hold" if ok else "IDENTITY FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
