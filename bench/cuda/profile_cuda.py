"""Where the time of one forward+backward goes, kernel by kernel: PyTorch eager
against lnlinear (each strategy given), on the CUDA profiler's clock.

    python3 bench/cuda/profile_cuda.py [--lib build-gpu/liblnlinear.so]
        [--shapes 8192,4096,4096 32768,4096,256] [--dtypes bf16 f32] [--iters 5]

For each shape and dtype it runs ITERS forward+backward passes of each contender
after warm-up under torch.profiler and prints every GPU kernel's mean time per pass,
largest first, with the pass total. This is the evidence behind performance changes
(which kernel of the backward loses to eager, and by how much); time_cuda.py and
lnl-bench remain the timings of record, since the profiler adds its own overhead.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_cuda import Case, load  # noqa: E402

DEFAULT_SHAPES = ["4096,768,768", "8192,1024,1024", "8192,4096,4096", "16384,8192,1024",
                  "32768,4096,256"]


def kernel_table(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    rows = {}
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
        name, n = rows.get(ev.name, (0.0, 0))
        rows[ev.name] = (name + us, n + 1)
    out = sorted(((t / iters, n // iters, k) for k, (t, n) in rows.items()), reverse=True)
    return out


def show(label, table):
    total = sum(t for t, _, _ in table)
    print(f"  {label}: {total / 1000:.4f} ms of kernels per pass")
    for t, n, name in table:
        print(f"    {t / 1000:8.4f} ms  x{n:<2d} {name[:110]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build-gpu/liblnlinear.so")
    ap.add_argument("--shapes", nargs="*", default=DEFAULT_SHAPES)
    ap.add_argument("--dtypes", nargs="*", default=["bf16", "f32"])
    ap.add_argument("--strategies", nargs="*", default=["auto"])
    ap.add_argument("--iters", type=int, default=5)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    lib = load(a.lib)
    for dt in a.dtypes:
        for s in a.shapes:
            M, K, N = (int(v) for v in s.split(","))
            print(f"\n{dt} M,K,N = {M},{K},{N}", flush=True)
            first = None
            for strat in a.strategies:
                c = Case(lib, M, K, N, dt, strat)
                if first is None:
                    first = c
                    ps = [t.detach().clone().requires_grad_() for t in (c.x, c.lnw, c.lnb, c.W, c.b)]

                    def eager():
                        y = F.linear(F.layer_norm(ps[0], (K,), ps[1], ps[2], c.eps), ps[3], ps[4])
                        torch.autograd.grad(y, ps, c.dy)
                    show("eager", kernel_table(eager, a.iters))
                    del ps
                show(f"lnlinear {strat}", kernel_table(c.fwd_bwd, a.iters))
                del c
            del first
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
