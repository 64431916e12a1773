#!/usr/bin/env python3
"""What the library's mixed call costs (ln_float32: float32 x, ln_weight and ln_bias
beside a 16-bit linear) against the same call with x and the LayerNorm parameters in the
16-bit dtype: the lnlinear::forward and lnlinear::backward ops alone (no autograd, no
casts), medians of --steps calls a round, rounds taken in turn. On CUDA each pass is timed
between two CUDA events (GPU time, not the host's issue time).

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so \\
        python3 bench/mixed_call.py --dtype bf16 --shape 1024,4096,4096 [--device cuda]
"""
import argparse
import statistics
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    ap.add_argument("--shape", action="append", help="M,K,N (repeatable)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import torch
    import lnlinear  # noqa: F401  (registers the ops)

    d = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    fwd, bwd = torch.ops.lnlinear.forward, torch.ops.lnlinear.backward
    dev = args.device
    print(f"{dev}, linear in {args.dtype}, torch {torch.__version__}, threads "
          f"{torch.get_num_threads()}, {args.rounds} rounds x {args.steps} calls")
    print(f"{'M,K,N':>16} {'x':>8} {'fwd ms':>9} {'bwd ms':>9}")
    for shape in args.shape or ["2048,768,3072"]:
        M, K, N = (int(v) for v in shape.split(","))
        g = torch.Generator().manual_seed(0)
        x = 3 + 2 * torch.randn(M, K, generator=g)
        lnw, lnb = 1 + 0.5 * torch.randn(K, generator=g), 0.5 * torch.randn(K, generator=g)
        w = (torch.randn(N, K, generator=g) / K ** 0.5).to(d)
        b = (0.5 * torch.randn(N, generator=g)).to(d)
        dy = torch.randn(M, N, generator=g).to(d)
        x, lnw, lnb, w, b, dy = (t.to(dev) for t in (x, lnw, lnb, w, b, dy))
        ways = {"float32": (x, lnw, lnb), args.dtype: (x.to(d), lnw.to(d), lnb.to(d))}
        times = {k: ([], []) for k in ways}
        for _ in range(args.rounds):
            for name, (xx, gg, bb) in ways.items():
                def call():
                    if dev == "cuda":
                        ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
                        ev[0].record()
                        y, mean, rstd, _ = fwd(xx, gg, bb, w, b, 1e-5, False, 0)
                        ev[1].record()
                        bwd(dy, xx, gg, bb, w, mean, rstd, None, 1e-5, 0, [True] * 5)
                        ev[2].record()
                        ev[2].synchronize()
                        return ev[0].elapsed_time(ev[1]) / 1e3, ev[1].elapsed_time(ev[2]) / 1e3
                    t0 = time.perf_counter()
                    y, mean, rstd, _ = fwd(xx, gg, bb, w, b, 1e-5, False, 0)
                    t1 = time.perf_counter()
                    bwd(dy, xx, gg, bb, w, mean, rstd, None, 1e-5, 0, [True] * 5)
                    return t1 - t0, time.perf_counter() - t1
                call()  # warm
                for _ in range(args.steps):
                    tf, tb = call()
                    times[name][0].append(tf * 1e3)
                    times[name][1].append(tb * 1e3)
        for name, (tf, tb) in times.items():
            print(f"{shape:>16} {name:>8} {statistics.median(tf):9.2f} {statistics.median(tb):9.2f}")


if __name__ == "__main__":
    main()
