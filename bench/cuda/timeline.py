"""The kernels of one lnlinear call laid out in time: each kernel's start, duration and the
gap since the previous kernel ended, on the CUDA profiler's clock.

    python3 bench/cuda/timeline.py [--lib build-gpu/liblnlinear.so]
        [--shapes 4096,768,768 8192,1024,1024] [--dtypes bf16] [--strategies fused]
        [--phase fwd|bwd|fwd_bwd] [--iters 5]

profile_cuda.py sums kernel times; this shows what they leave out: the idle time
between kernels (launch latency, a programmatic dependent waiting for its primary) and
kernels that do no work but still take their slot (the fused forward's second form).
Each pass is printed as one line a kernel; the medians over the ITERS passes close it.
"""
import argparse
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_cuda import Case, load  # noqa: E402


def passes(fn, iters):
    """Kernel events (name, start us, end us) of each of ITERS passes of fn."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(iters):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        ks = [(ev.name, ev.time_range.start, ev.time_range.end) for ev in prof.events()
              if ev.device_type == torch.autograd.DeviceType.CUDA and ev.time_range.end > 0]
        out.append(sorted(ks, key=lambda k: k[1]))
    return out


def show(label, runs):
    print(f"  {label}")
    rows = {}  # kernel index -> (name, [durations], [gaps])
    spans = []
    for ks in runs:
        t0, prev_end = ks[0][1], ks[0][1]
        for i, (name, s, e) in enumerate(ks):
            r = rows.setdefault(i, (name, [], []))
            r[1].append(e - s)
            r[2].append(s - prev_end)
            prev_end = max(prev_end, e)
        spans.append(prev_end - t0)
    print(f"    {'median us':>9} {'gap before':>10}  kernel (first to last kernel end: "
          f"{statistics.median(spans):.1f} us median of {len(runs)})")
    for i in sorted(rows):
        name, d, g = rows[i]
        print(f"    {statistics.median(d):9.2f} {statistics.median(g):10.2f}  {name[:100]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build-gpu/liblnlinear.so")
    ap.add_argument("--shapes", nargs="*", default=["4096,768,768", "8192,1024,1024"])
    ap.add_argument("--dtypes", nargs="*", default=["bf16"])
    ap.add_argument("--strategies", nargs="*", default=["fused"])
    ap.add_argument("--phase", default="fwd", choices=["fwd", "bwd", "fwd_bwd"])
    ap.add_argument("--iters", type=int, default=5)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    lib = load(a.lib)
    for dt in a.dtypes:
        for s in a.shapes:
            M, K, N = (int(v) for v in s.split(","))
            print(f"\n{dt} M,K,N = {M},{K},{N} ({a.phase})", flush=True)
            for strat in a.strategies:
                c = Case(lib, M, K, N, dt, strat)
                if a.phase == "bwd":
                    c.fwd()
                show(f"lnlinear {strat}", passes(getattr(c, a.phase), a.iters))
                del c
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
