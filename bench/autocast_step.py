#!/usr/bin/env python3
"""A training step of LayerNorm+Linear with float32 parameters under torch.autocast, three
ways: eager (F.layer_norm, then F.linear: autocast's own rules), lnlinear under autocast
(python/lnlinear/autocast.py: the library's mixed call, float32 x and LayerNorm
parameters beside the linear in autocast's dtype, on the CPU and, since session 52, on
CUDA), and lnlinear in float32 (what a float32 model's fused layers ran before session 48:
the call ignored autocast); with --uncentred also the op on operands all rounded as they
are, with --centred the op on all of them in autocast's dtype, x centred first (the CPU's
rule in session 48, CUDA's until session 52).

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so \\
        python3 bench/autocast_step.py --device cpu --dtype bf16 --shape 2048,768,3072

For each: the median step time (forward and backward; rounds taken in turn, so drift
falls on all three alike), its ratio to eager's, the bytes autograd keeps between the
passes (each storage once; x reaches the layer as a previous layer's output, so a kept
float32 x counts), and the largest error of y and the five gradients against float64
(max |out - ref| / max |ref| per output), on rows with mean 3 and, every other row,
mean 1003 (spread 2).
"""
import argparse
import statistics
import sys
import time


def kept_bytes(run, exclude):
    """Bytes autograd keeps for the backward while run() runs, each storage once, the
    storages of the tensors in exclude (the caller's leaves) left out."""
    import torch
    skip = {t.untyped_storage().data_ptr() for t in exclude}
    seen = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in skip:
            seen[s.data_ptr()] = s.nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        run()
    return sum(seen.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    ap.add_argument("--shape", action="append", help="M,K,N (repeatable)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps a round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave)")
    ap.add_argument("--uncentred", action="store_true",
                    help="one more way: every operand rounded to the dtype, x not centred")
    ap.add_argument("--centred", action="store_true",
                    help="one more way: every operand in the dtype, x centred in float32 first")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    import lnlinear

    if args.threads:
        torch.set_num_threads(args.threads)
    dev = args.device
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    def eager(x, lnw, lnb, w, b):
        return F.linear(F.layer_norm(x, (x.shape[-1],), lnw, lnb, 1e-5), w, b)

    def ours(x, lnw, lnb, w, b):
        return lnlinear.layernorm_linear(x, lnw, lnb, w, b, eps=1e-5)

    def uncentred(x, lnw, lnb, w, b):  # what the rule would do without centring x
        return ours(*(t.to(dt) for t in (x, lnw, lnb, w, b)))

    def centred(x, lnw, lnb, w, b):  # every operand in dt, x centred (autocast.py's _centred)
        from lnlinear.autocast import _centred
        with torch.autocast(dev, enabled=False):
            return ours(_centred(x, dt), *(t.to(dt) for t in (lnw, lnb, w, b)))

    ways = [("eager autocast", eager, True), ("lnlinear autocast", ours, True),
            ("lnlinear float32", ours, False)]
    if args.uncentred:
        ways.append(("x uncentred", uncentred, True))
    if args.centred:
        ways.append(("x centred", centred, True))
    print(f"device {dev}, autocast {args.dtype}, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, {args.rounds} rounds x {args.steps} steps")
    print(f"{'M,K,N':>16} {'way':>18} {'step ms':>9} {'/ eager':>8} {'kept MB':>8} "
          f"{'max err':>9} {'y dtype':>8}")
    for shape in args.shape or ["2048,768,3072"]:
        M, K, N = (int(v) for v in shape.split(","))
        g = torch.Generator().manual_seed(0)

        def rnd(*s, scale=1.0, shift=0.0):
            return shift + scale * torch.randn(*s, generator=g, dtype=torch.float64)
        x64 = rnd(M, K, scale=2.0, shift=3.0)
        x64[1::2] += 1e3
        p64 = [rnd(K, scale=0.5, shift=1.0), rnd(K, scale=0.5), rnd(N, K, scale=K ** -0.5),
               rnd(N, scale=0.5)]
        dy64 = rnd(M, N)
        leaves = [t.to(dev, torch.float32).requires_grad_() for t in [x64] + p64]

        # float64 reference, on the CPU
        ref = [t.clone().requires_grad_() for t in [x64] + p64]
        y_ref = eager(*ref)
        want = [y_ref] + list(torch.autograd.grad(y_ref, ref, dy64))

        dys = {}  # dy on the device in each output dtype, made once (no copy in the timing)

        def step(fn, on, keep=None):
            x = leaves[0] * 1.0  # a previous layer's output: nothing else keeps it
            with torch.autocast(dev, dtype=dt, enabled=on):
                y = fn(x, *leaves[1:])
            dy = dys.get(y.dtype)
            if dy is None:
                dy = dys[y.dtype] = dy64.to(dev, y.dtype)
            grads = torch.autograd.grad(y, leaves, dy)
            if keep is not None:
                keep.extend([y] + list(grads))

        results = {}
        for name, fn, on in ways:
            out = []
            step(fn, on, out)
            err = max(((a.double().cpu() - r).abs().max() / r.abs().max()).item()
                      for a, r in zip(out, want))
            kept = kept_bytes(lambda: step(fn, on), leaves)
            results[name] = dict(err=err, kept=kept / 1e6, dtype=out[0].dtype, times=[])
        for _ in range(args.rounds):
            for name, fn, on in ways:
                step(fn, on)  # warm
                sync()
                for _ in range(args.steps):
                    t0 = time.perf_counter()
                    step(fn, on)
                    sync()
                    results[name]["times"].append((time.perf_counter() - t0) * 1e3)
        base = statistics.median(results["eager autocast"]["times"])
        for name, _, _ in ways:
            r = results[name]
            med = statistics.median(r["times"])
            print(f"{shape:>16} {name:>18} {med:9.3f} {med / base:8.3f} {r['kept']:8.3g} "
                  f"{r['err']:9.2e} {str(r['dtype']).replace('torch.', ''):>8}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
