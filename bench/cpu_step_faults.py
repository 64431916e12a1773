#!/usr/bin/env python3
"""A CPU training step through the PyTorch layer: its median time and the minor page
faults it takes, for one shape and dtype.

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so \\
        python3 bench/cpu_step_faults.py --shape 1024,4096,4096 --dtype bf16

--fresh-workspace makes the Python node allocate its workspace on every call, as the
layer did before it kept one per thread (it sets LNLINEAR_NO_CPP=1, so the Python node
runs). Run it with MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ set high to see what
a fresh allocation costs when malloc keeps its pages.
"""
import argparse
import os
import resource
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="1024,4096,4096", help="M,K,N")
    ap.add_argument("--dtype", default="bf16", choices=("f32", "bf16", "f16"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--fresh-workspace", action="store_true")
    args = ap.parse_args()
    if args.fresh_workspace:
        os.environ["LNLINEAR_NO_CPP"] = "1"
    import torch
    import lnlinear
    from lnlinear import ops
    if args.fresh_workspace:
        ops._CPU_WS_CACHE_MAX = 0
    torch.set_num_threads(args.threads)
    M, K, N = (int(v) for v in args.shape.split(","))
    dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    g = torch.Generator().manual_seed(0)

    def rnd(*shape, scale=1.0, shift=0.0):
        return (shift + scale * torch.randn(*shape, generator=g)).to(dt).requires_grad_()
    x, lnw, lnb = rnd(M, K, scale=2.0, shift=3.0), rnd(K, scale=0.1, shift=1.0), rnd(K, scale=0.1)
    w, b = rnd(N, K, scale=K ** -0.5), rnd(N)
    dy = torch.randn(M, N, generator=g).to(dt)

    def step():
        lnlinear.layernorm_linear(x, lnw, lnb, w, b).backward(dy)
        for t in (x, lnw, lnb, w, b):
            t.grad = None
    for _ in range(2):
        step()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    times.sort()
    print(f"{args.dtype} {M},{K},{N} fresh_workspace={int(args.fresh_workspace)} "
          f"MALLOC_MMAP_THRESHOLD_={os.environ.get('MALLOC_MMAP_THRESHOLD_', '-')}: "
          f"median {times[len(times) // 2]:.1f} ms, "
          f"{(r1.ru_minflt - r0.ru_minflt) / args.steps:.0f} minor faults a step")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
