"""How fast can the backward's memory-bound passes go at the small shapes? PyTorch's own
kernels for the same traffic, each kernel's time on the profiler's clock, torch alone:

    python3 bench/cuda/bandwidth_probe.py

Session 30 (call 5) had lnlinear's memory-bound kernels at 8192,1024,1024 (bf16) at
2.0-2.8 TB/s against the 4.2 TB/s #7's floor counts: the column sums of dy (16 MB) in 7.9
us, the LayerNorm backward (64 MB) in 22.8, the forward's statistics-and-folding pass (18
MB) in 9.3. Whether that is slack or what a kernel of this size can do on the H200 is what
this measures: per shape, the mean kernel time of

  colsum   dy.sum(0)                          reads M x N       (the bias gradient)
  stats    torch.var_mean(x, dim=1)           reads M x K       (the forward's statistics)
  copy     x.clone()                          reads and writes M x K
  add3     torch.add(a, b, out=c)             reads 2, writes 1 M x K (3 M K elements)
  ln_bwd   torch.ops.aten.native_layer_norm_backward, dW/db off: reads dy', x, writes dx

and the bytes each moved divided by that time. bf16 throughout.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_cuda import kernel_table  # noqa: E402

SHAPES = [(4096, 768, 768), (8192, 1024, 1024), (8192, 768, 3072), (32768, 4096, 256)]


def kernel_us(fn, iters=20):
    """Mean GPU time of fn's kernels per call, us (profile_cuda's table, summed)."""
    return sum(t for t, _, _ in kernel_table(fn, iters))


def main():
    dt = torch.bfloat16
    es = 2
    print("op      M,K,N             us     MB   TB/s")
    for M, K, N in SHAPES:
        dy = torch.randn(M, N, device="cuda", dtype=dt)
        x = torch.randn(M, K, device="cuda", dtype=dt) + 3
        a = torch.randn(M, K, device="cuda", dtype=dt)
        c = torch.empty_like(a)
        w = torch.randn(K, device="cuda", dtype=dt)
        mean, rstd = torch.var_mean(x.float(), dim=1, keepdim=True)
        rstd = torch.rsqrt(rstd + 1e-5)
        ops = [
            ("colsum", lambda: dy.sum(0), M * N * es),
            ("stats", lambda: torch.var_mean(x, dim=1), M * K * es),
            ("copy", lambda: x.clone(), 2 * M * K * es),
            ("add3", lambda: torch.add(a, x, out=c), 3 * M * K * es),
            ("ln_bwd", lambda: torch.ops.aten.native_layer_norm_backward(
                a, x, [K], mean, rstd, w, None, [True, False, False]), 3 * M * K * es),
        ]
        for name, fn, nbytes in ops:
            us = kernel_us(fn)
            print(f"{name:7s} {M},{K},{N:<8d} {us:7.1f} {nbytes / 1e6:6.1f} "
                  f"{nbytes / us / 1e6:6.2f}", flush=True)


if __name__ == "__main__":
    main()
