"""How much of a small call's measured GPU time is the host issuing it.

    LNLINEAR_LIBRARY=build-gpu/liblnlinear.so python3 bench/cuda/host_issue.py \
        [--dtype bf16] [--shapes 4096,768,768 8192,1024,1024] [--ways fused auto]

lnl-bench times each call between two CUDA events and waits for it (as event_ms below), so
the GPU sits idle from the first event until the host has issued the call's first kernel,
and between kernels whenever the host is slower than the GPU. This prints, per shape, way
and direction (forward; backward after a forward):
  host_us   the host time of one call through ctypes, the GPU idle when it starts
            (median of 300; ctypes' own cost, a call of lnl_dtype_size, subtracted),
  event_ms  one call between two events, waited for (lnl-bench's figure),
  queued_ms 50 calls back to back between two events, / 50 (the host runs ahead when its
            time a call is under the GPU's),
and the same two times for the cuBLAS GEMM alone through torch (F.linear on the
normalized input). event_ms - queued_ms is what issuing costs a call timed alone.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from event_timing import median_ms  # noqa: E402
from time_cuda import Case, load  # noqa: E402


def host_us(fn, reps=300):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
    return statistics.median(t) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.environ.get("LNLINEAR_LIBRARY", "build-gpu/liblnlinear.so"))
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    ap.add_argument("--shapes", nargs="+",
                    default=["16,8,16", "4096,768,768", "8192,768,3072", "8192,1024,1024"])
    ap.add_argument("--ways", nargs="+", default=["fused", "auto"])
    a = ap.parse_args()
    lib = load(a.lib)
    lib.lnl_dtype_size.argtypes = [ctypes.c_int]
    lib.lnl_dtype_size.restype = ctypes.c_size_t
    ctypes_us = host_us(lambda: lib.lnl_dtype_size(2), reps=2000)
    print(f"ctypes call alone: {ctypes_us:.2f} us (subtracted from host_us)")
    print("shape way dir host_us event_ms queued_ms event-queued_us")
    for s in a.shapes:
        M, K, N = map(int, s.split(","))
        for way in a.ways:
            c = Case(lib, M, K, N, a.dtype, way)
            c.fwd()
            for d, fn in (("fwd", c.fwd), ("bwd", c.bwd)):
                h = host_us(fn) - ctypes_us
                e, q = median_ms(fn, reps=100), median_ms(fn, reps=15, batch=50)
                print(f"{s} {way} {d} {h:.1f} {e:.4f} {q:.4f} {1e3 * (e - q):.1f}", flush=True)
        ln = F.layer_norm(c.x, (K,), c.lnw, c.lnb, 1e-5)
        gemm = lambda: F.linear(ln, c.W, c.b)
        e, q = median_ms(gemm, reps=100), median_ms(gemm, reps=15, batch=50)
        print(f"{s} gemm(torch) fwd - {e:.4f} {q:.4f} {1e3 * (e - q):.1f}", flush=True)


if __name__ == "__main__":
    main()
