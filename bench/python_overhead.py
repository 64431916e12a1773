"""Python overhead of one lnlinear forward at a tiny size, against F.layer_norm +
F.linear. At M=16, K=8, N=16 the arithmetic is negligible, so the time is the cost of
the call path: argument checks, the custom-op dispatcher, ctypes, allocation.

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so python3 bench/python_overhead.py
    python3 bench/python_overhead.py --device cuda --iters 20000

--paths A/Bs the two eager autograd paths (the C++ node of python/csrc and the Python
autograd.Function) and PyTorch eager, in alternating batches of one process: host time
per training forward and per forward + torch.autograd.grad, at the --shapes given:

    python3 bench/python_overhead.py --paths --shapes 16,8,16 256,256,256
    python3 bench/python_overhead.py --paths --device cuda --dtype bf16 --shapes 16,8,16 4096,768,768
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F


def median_us(fn, iters, repeats, sync):
    """Median over `repeats` batches of the mean time per call, in microseconds."""
    for _ in range(min(iters, 200)):
        fn()
    sync()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(samples)


def operands(device, M, K, N):
    """x, ln_weight, ln_bias, linear_weight, linear_bias: the same random values for every
    measurement of the script; and the device's synchronize."""
    g = torch.Generator().manual_seed(0)
    t = [torch.randn(*s, generator=g).to(device) for s in ((M, K), (K,), (K,), (N, K), (N,))]
    return t, (torch.cuda.synchronize if device == "cuda" else (lambda: None))


def measure(device="cpu", M=16, K=8, N=16, iters=2000, repeats=15, grad=False):
    import lnlinear
    (x, lnw, lnb, w, b), sync = operands(device, M, K, N)
    if grad:
        for t in (x, lnw, lnb, w, b):
            t.requires_grad_()

    def ours():
        return lnlinear.layernorm_linear(x, lnw, lnb, w, b)

    def theirs():
        return F.linear(F.layer_norm(x, (K,), lnw, lnb), w, b)

    ctx = torch.enable_grad() if grad else torch.no_grad()
    with ctx:
        return {"lnlinear_us": median_us(ours, iters, repeats, sync),
                "torch_us": median_us(theirs, iters, repeats, sync)}


def stats_ab(device="cpu", M=16, K=8, N=16, iters=2000, repeats=15):
    """The no_grad forward's body with the statistics asked for (what it did before session
    9) and without (what it does now), in alternating batches of one process: the host
    time two allocations and their pointers cost."""
    from lnlinear.ops import forward_body
    t, sync = operands(device, M, K, N)
    runs = {True: [], False: []}
    for _ in range(repeats):
        for stats in (True, False):
            runs[stats].append(median_us(
                lambda: forward_body(*t, 1e-5, False, 0, check=False, lean=True, stats=stats),
                iters, 1, sync))
    return {"with_stats_us": statistics.median(runs[True]),
            "without_stats_us": statistics.median(runs[False])}


DTYPES = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16,
          "f16": torch.float16}


WHATS = ("forward_no_grad", "forward", "forward_grad")


def paths_ab(device="cpu", M=16, K=8, N=16, dtype=torch.float32, iters=2000, repeats=15):
    """Medians (us per call) of a forward under no_grad, a forward recording autograd,
    and a forward + torch.autograd.grad over all five inputs, for the C++ node ("cpp"),
    the Python autograd.Function ("python") and F.layer_norm + F.linear ("eager"). The
    three run in turn inside each repeat, so drift of the machine hits all alike."""
    import lnlinear
    from lnlinear import _cpp
    t, sync = operands(device, M, K, N)
    ins = [v.to(dtype).requires_grad_() for v in t]
    x, lnw, lnb, w, b = ins
    dy = torch.randn(M, N, generator=torch.Generator().manual_seed(1)).to(device=device,
                                                                          dtype=dtype)

    def ours():
        return lnlinear.layernorm_linear(x, lnw, lnb, w, b)

    def eager():
        return F.linear(F.layer_norm(x, (K,), lnw, lnb), w, b)

    def fwd_grad(f):
        return lambda: torch.autograd.grad(f(), ins, dy)

    def no_grad(f):
        def g():
            with torch.no_grad():
                return f()
        return g

    paths = ["python", "eager"] + (["cpp"] if _cpp.available() else [])
    runs = {(p, what): [] for p in paths for what in WHATS}
    previous = _cpp.serves
    try:
        for _ in range(repeats):
            for p in paths:
                if p != "eager":
                    _cpp.set_enabled(p == "cpp")
                f = eager if p == "eager" else ours
                runs[(p, "forward_no_grad")].append(median_us(no_grad(f), iters, 1, sync))
                runs[(p, "forward")].append(median_us(f, iters, 1, sync))
                runs[(p, "forward_grad")].append(median_us(fwd_grad(f), iters, 1, sync))
    finally:
        _cpp.set_devices(previous)
    return {f"{p}_{what}_us": statistics.median(v) for (p, what), v in runs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--iters", type=int, default=2000, help="calls per timed batch")
    ap.add_argument("--repeats", type=int, default=15, help="timed batches (median taken)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    ap.add_argument("--stats-ab", action="store_true",
                    help="time the no_grad forward's body with and without mean/rstd instead")
    ap.add_argument("--paths", action="store_true",
                    help="A/B the C++ and Python autograd paths and PyTorch eager instead")
    ap.add_argument("--shapes", nargs="+", default=["16,8,16"], help="M,K,N for --paths")
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES), help="for --paths")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.paths:
        from lnlinear import _cpp
        print(f"C++ node: {'loaded from ' + _cpp.path if _cpp.available() else _cpp.reason}")
        for shape in args.shapes:
            M, K, N = (int(v) for v in shape.split(","))
            r = paths_ab(args.device, M, K, N, DTYPES[args.dtype], args.iters, args.repeats)
            for what in WHATS:
                row = "  ".join(f"{p} {r[f'{p}_{what}_us']:8.1f}" for p in ("cpp", "python", "eager")
                                if f"{p}_{what}_us" in r)
                print(f"{args.device} {args.dtype} M={M} K={K} N={N} {what:15s} us/call: {row}")
        return
    if args.stats_ab:
        r = stats_ab(args.device, iters=args.iters, repeats=args.repeats)
        print(f"{args.device} M=16 K=8 N=16 no_grad forward body: with mean/rstd "
              f"{r['with_stats_us']:.2f} us/call, without {r['without_stats_us']:.2f} us/call")
        return
    for grad in (False, True):
        r = measure(args.device, iters=args.iters, repeats=args.repeats, grad=grad)
        mode = "forward, autograd recording" if grad else "forward, no_grad"
        print(f"{args.device} M=16 K=8 N=16 {mode}: lnlinear {r['lnlinear_us']:.1f} us/call, "
              f"F.layer_norm+F.linear {r['torch_us']:.1f} us/call, "
              f"overhead {r['lnlinear_us'] - r['torch_us']:+.1f} us")


if __name__ == "__main__":
    main()
