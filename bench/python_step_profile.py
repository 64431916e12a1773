"""Host time of one training step (forward + .backward) through lnlinear against
F.layer_norm + F.linear, and where it goes.

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so python3 bench/python_step_profile.py [--profile]
    PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so python3 bench/python_step_profile.py \
        --device cuda --dtype bf16 --shape 8192,768,3072

CPU (the default; float32 at M=16, K=8, N=16, where the arithmetic is negligible):
prints the median microseconds per step over 7 batches of 3000 steps (after warm-up),
for both, and for a no_grad forward of ours. --profile adds cProfile's top 25 functions
of 3000 of our steps by their own time.

CUDA: tells a host-bound step from a GPU-bound one. For both contenders (twice each, in
turn) it prints medians over 7 batches of 50 steps: the host's time to issue a step
(perf_counter around the batch without synchronizing: the GPU queue absorbs the
launches), the step's time on the GPU alone (CUDA events around one step queued behind
~1 ms of GPU spin, so all its launches are issued before the GPU reaches them), and the
throughput (the batch issued and synchronized). Throughput near the issue time and
above the GPU time means a host-bound step.
"""
import argparse
import cProfile
import pstats
import statistics
import time

import torch
import torch.nn.functional as F

import lnlinear
import python_overhead  # bench/, this script's folder

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}


def median_us(fn):
    """Median us per call over 7 batches of 3000 calls (python_overhead.py's timer)."""
    return python_overhead.median_us(fn, 3000, 7, lambda: None)


def cuda_figures(fn, n=50, batches=7):
    """(host issue us, GPU us of one step, throughput us) per step, medians."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    issue, gpu, thru = [], [], []
    for _ in range(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        issue.append((time.perf_counter() - t0) / n * 1e6)
        torch.cuda.synchronize()
        thru.append((time.perf_counter() - t0) / n * 1e6)
        one = []
        for _ in range(5):
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(2_000_000)  # ~1 ms of GPU spin: the step's launches queue behind it
            a.record()
            fn()
            b.record()
            torch.cuda.synchronize()
            one.append(a.elapsed_time(b) * 1e3)
        gpu.append(min(one))
    return statistics.median(issue), statistics.median(gpu), statistics.median(thru)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--dtype", default="f32", choices=sorted(DT))
    ap.add_argument("--shape", default="16,8,16", help="M,K,N")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    M, K, N = (int(v) for v in args.shape.split(","))
    kw = dict(device=args.device, dtype=DT[args.dtype])
    x = (torch.randn(M, K, **kw) + 3).requires_grad_()
    lnw, lnb = (torch.randn(K, **kw).requires_grad_() for _ in range(2))
    w = (torch.randn(N, K, **kw) / K ** 0.5).requires_grad_()
    b = torch.randn(N, **kw).requires_grad_()
    dy = torch.randn(M, N, **kw)

    def ours():
        lnlinear.layernorm_linear(x, lnw, lnb, w, b).backward(dy)

    def eager():
        F.linear(F.layer_norm(x, (K,), lnw, lnb), w, b).backward(dy)

    def ours_no_grad():
        with torch.no_grad():
            lnlinear.layernorm_linear(x, lnw, lnb, w, b)

    if args.device == "cuda":
        print(f"cuda {args.dtype} {M},{K},{N}, us per training step (medians): "
              "host issue / GPU alone / throughput")
        for name, fn in (("lnlinear", ours), ("eager", eager), ("lnlinear", ours),
                         ("eager", eager)):
            i, g, t = cuda_figures(fn)
            print(f"  {name:9s} {i:9.1f} {g:9.1f} {t:9.1f}")
    else:
        print(f"us per training step: lnlinear {median_us(ours):.1f}, eager {median_us(eager):.1f}; "
              f"lnlinear no_grad forward {median_us(ours_no_grad):.1f}")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3000 if args.device == "cpu" else 300):
            ours()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
