"""Host time of one training step (forward + .backward) through lnlinear against
F.layer_norm + F.linear, at a size where the arithmetic is negligible, and where it goes.

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so python3 bench/python_step_profile.py [--profile]

Prints the median microseconds per step over 7 batches of 3000 steps (after warm-up), for
both, and for a no_grad forward of ours; --profile adds cProfile's top 25 functions of
3000 of our steps by their own time. CPU float32 at M=16, K=8, N=16.
"""
import cProfile
import pstats
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import lnlinear


def median_us(fn, n=3000, batches=7):
    for _ in range(300):
        fn()
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def main():
    torch.manual_seed(0)
    M, K, N = 16, 8, 16
    x, lnw, lnb = (torch.randn(*s, requires_grad=True) for s in ((M, K), (K,), (K,)))
    w, b = torch.randn(N, K, requires_grad=True), torch.randn(N, requires_grad=True)
    dy = torch.randn(M, N)

    def ours():
        lnlinear.layernorm_linear(x, lnw, lnb, w, b).backward(dy)

    def eager():
        F.linear(F.layer_norm(x, (K,), lnw, lnb), w, b).backward(dy)

    def ours_no_grad():
        with torch.no_grad():
            lnlinear.layernorm_linear(x, lnw, lnb, w, b)

    print(f"us per training step: lnlinear {median_us(ours):.1f}, eager {median_us(eager):.1f}; "
          f"lnlinear no_grad forward {median_us(ours_no_grad):.1f}")
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3000):
            ours()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
