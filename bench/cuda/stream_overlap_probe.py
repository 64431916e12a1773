"""Does a memory-bound row-statistics pass hide behind a true-fp32 cuBLAS GEMM when the two
run at once on two streams? (Session 30: the float32 FUSED forward's statistics pass needs
nothing the GEMM writes, so it could.) torch alone, no lnlinear:

    python3 bench/cuda/stream_overlap_probe.py

Per shape, ms (medians of CUDA-event timings, 5 calls a timing): the GEMM alone
(`torch.mm`, tf32 off), the statistics alone (`torch.var_mean` over rows), both on one
stream, and the statistics forked onto a side stream at normal and at high priority, joined
before the next call. Overlap would show as "fork" below "seq". Session 30's run on the H200
(docs/results/cuda/2026-12-03-session30/call2/probe.txt): none.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from event_timing import median_ms  # noqa: E402

SHAPES = [(32768, 4096, 256), (16384, 8192, 1024), (8192, 4096, 4096), (8192, 1024, 1024),
          (8192, 768, 3072), (4096, 768, 768)]


def timeit(fn):
    return median_ms(fn, reps=30, warmup=3, batch=5)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    sides = {"fork": torch.cuda.Stream(priority=0), "fork_hi": torch.cuda.Stream(priority=-1)}
    for M, K, N in SHAPES:
        x = torch.randn(M, K, device="cuda") + 3
        w = torch.randn(N, K, device="cuda")
        y = torch.empty(M, N, device="cuda")

        def gemm():
            torch.mm(x, w.t(), out=y)

        def stats():
            torch.var_mean(x, dim=1)

        def seq():
            stats()
            gemm()

        def forked(side):
            def f():
                cur = torch.cuda.current_stream()
                side.wait_stream(cur)
                with torch.cuda.stream(side):
                    stats()
                gemm()
                cur.wait_stream(side)
            return f

        g = timeit(gemm)
        line = f"{M},{K},{N} gemm {g:.4f} stats {timeit(stats):.4f}"
        for name, fn in [("seq", seq)] + [(k, forked(s)) for k, s in sides.items()]:
            t = timeit(fn)
            line += f" {name} {t:.4f} ({t / g:.3f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
