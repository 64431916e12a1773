#!/usr/bin/env python3
"""Compare lnlinear with PyTorch and its peers on LayerNorm + Linear, forward and backward.

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so python3 bench/compare.py [--device cpu]

For each device, shape (M, K, N) and dtype it times every candidate round-robin (one
sample of each candidate in turn, so clock and thermal drift hit them alike), forward
and forward+backward, takes the median of many samples after warm-up, measures the
memory kept between forward and backward and the peak memory of a step, and the
relative error of every output against a float64 reference. It writes results.json,
results.md and PNG plots (bench/compare_plots.py; docs/results/README.md describes them).
A failing candidate is recorded with its error; the run goes on.
"""

import argparse
import datetime
import gc
import json
import math
import os
import platform
import shlex
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)  # compare_plots beside this file

try:
    import lnlinear
    LNL_IMPORT_ERROR = None
except Exception as e:  # kept as the error of every lnlinear candidate
    try:
        # Run from a checkout without PYTHONPATH: the package lives in python/.
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import lnlinear
        LNL_IMPORT_ERROR = None
    except Exception as e2:
        lnlinear = None
        LNL_IMPORT_ERROR = f"import lnlinear failed: {type(e2).__name__}: {e2}"

from tqdm import tqdm

# Logged (not a terminal): redraw the bar rarely, or a device log fills with its frames.
TTY = sys.stderr.isatty()

SHAPES = {
    "cuda": [(16, 8, 16), (4096, 768, 768), (8192, 768, 3072), (8192, 1024, 1024),
             (8192, 4096, 4096), (8192, 4096, 12288), (16384, 8192, 1024), (32768, 4096, 256)],
    "cpu": [(16, 8, 16), (2048, 768, 768), (2048, 768, 3072), (1024, 4096, 4096),
            (4096, 4096, 256)],
}
QUICK_SHAPES = {
    "cuda": [(16, 8, 16), (1024, 512, 768)],
    "cpu": [(16, 8, 16), (96, 64, 80), (256, 192, 128)],
}
# f16 on CUDA since session 28: lnl-bench without it never timed FUSED's f16 backward, which
# had run 1.9-3.8x slower than bf16's. The CPU also takes bf16 and f16 (16-bit storage,
# accumulated in float32) and f64 through --dtypes; its default stays f32.
DTYPES = {"cuda": ["bf16", "f16", "f32"], "cpu": ["f32"]}
DTYPE_OF = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
            "f64": torch.float64}
EPS = 1e-5
GRAD_NAMES = ("dx", "dln_weight", "dln_bias", "dlinear_weight", "dlinear_bias")

# Candidates in table order. "floor" is F.linear (with bias) on an input normalized
# beforehand: what any LayerNorm+Linear must at least spend on its GEMMs.
CANDIDATES = [
    ("lnl_fused", "lnlinear fused (recompute)"),
    ("lnl_unfused", "lnlinear unfused"),
    ("lnl_fused_keep", "lnlinear fused, recompute=False"),
    ("lnl_auto", "lnlinear auto"),
    ("eager", "PyTorch eager"),
    ("compile", "torch.compile"),
    ("liger", "Liger LayerNorm + F.linear"),
    ("floor", "GEMM floor (F.linear + bias)"),
]


def eager_fn(x, lnw, lnb, w, b):
    return F.linear(F.layer_norm(x, (x.shape[-1],), lnw, lnb, EPS), w, b)


def liger_layer_norm():
    """Liger's LayerNorm as a function (x, w, b, eps), or raise with why it is missing."""
    import liger_kernel  # noqa: F401  (the error names the package when it is absent)
    try:
        from liger_kernel.transformers.functional import liger_layer_norm as fn
        return fn
    except Exception:
        # Older/newer layouts: the autograd.Function itself is the stable entry point.
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        return LigerLayerNormFunction.apply


class Problem:
    """Inputs of one (device, shape, dtype), plus a pool of x / grad_output copies that
    the timing loops rotate through so the activations come from memory rather than
    from a cache warmed by the previous call (weights stay shared, as in a model)."""

    def __init__(self, device, M, K, N, dtype, cache_bytes, seed=0):
        # Drawn on the device itself: host randn of the 32768x4096 inputs takes seconds.
        g = torch.Generator(device=device).manual_seed(seed)

        def rnd(*shape, scale=1.0, shift=0.0):
            t = torch.randn(*shape, generator=g, dtype=torch.float32, device=device)
            return (t * scale + shift).to(dtype)

        self.device, self.M, self.K, self.N, self.dtype = device, M, K, N, dtype
        per_copy = (M * K + M * N) * torch.empty((), dtype=dtype).element_size()
        self.pool = max(1, min(8, math.ceil(2 * cache_bytes / max(per_copy, 1))))
        # Offset and scale so the LayerNorm has real work (non-zero mean, non-unit std).
        self.xs = [rnd(M, K, scale=2.0, shift=0.5).requires_grad_() for _ in range(self.pool)]
        self.dys = [rnd(M, N) for _ in range(self.pool)]
        self.lnw = rnd(K, scale=0.1, shift=1.0).requires_grad_()
        self.lnb = rnd(K, scale=0.1).requires_grad_()
        self.w = rnd(N, K, scale=1.0 / math.sqrt(K)).requires_grad_()
        self.b = rnd(N, scale=0.1).requires_grad_()
        with torch.no_grad():
            self.xns = [F.layer_norm(x, (K,), self.lnw, self.lnb, EPS).requires_grad_()
                        for x in self.xs]

    def input_storages(self):
        ts = self.xs + self.xns + self.dys + [self.lnw, self.lnb, self.w, self.b]
        return {t.untyped_storage().data_ptr() for t in ts}


def make_candidate(name, p):
    """fn(i) -> (y, tensors to differentiate) for pool slot i; raises if unavailable."""
    if name.startswith("lnl_"):
        if lnlinear is None:
            raise RuntimeError(LNL_IMPORT_ERROR)
        strategy, recompute = {"lnl_fused": ("fused", True), "lnl_unfused": ("unfused", True),
                               "lnl_fused_keep": ("fused", False),
                               "lnl_auto": ("auto", True)}[name]

        def fn(i):
            x = p.xs[i]
            return (lnlinear.layernorm_linear(x, p.lnw, p.lnb, p.w, p.b, EPS, recompute,
                                              strategy=strategy),
                    (x, p.lnw, p.lnb, p.w, p.b))
        return fn
    if name in ("eager", "compile"):
        f = eager_fn
        if name == "compile":
            # Reset so each shape gets its own static-shape graph instead of hitting
            # dynamo's recompile limit and silently running eager.
            torch._dynamo.reset()
            f = torch.compile(eager_fn, dynamic=False)

        def fn(i):
            x = p.xs[i]
            return f(x, p.lnw, p.lnb, p.w, p.b), (x, p.lnw, p.lnb, p.w, p.b)
        return fn
    if name == "liger":
        if p.device.type != "cuda":
            raise RuntimeError("skipped: Liger Kernel is Triton (CUDA) only")
        ln = liger_layer_norm()

        def fn(i):
            x = p.xs[i]
            return F.linear(ln(x, p.lnw, p.lnb, EPS), p.w, p.b), (x, p.lnw, p.lnb, p.w, p.b)
        return fn
    if name == "floor":
        def fn(i):
            xn = p.xns[i]
            return F.linear(xn, p.w, p.b), (xn, p.w, p.b)
        return fn
    raise ValueError(name)


def step(fn, p, i, phase):
    y, ins = fn(i)
    if phase == "fwdbwd":
        torch.autograd.grad(y, ins, p.dys[i])


class Clock:
    """Times a block of calls: CUDA events on GPU (read after the round's one sync),
    perf_counter on CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def start(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def stop(self, start):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return (start, e)
        return time.perf_counter() - start

    def seconds(self, token):
        return token[0].elapsed_time(token[1]) / 1e3 if self.cuda else token


def short_error(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"


def time_round_robin(cands, p, clock, args, res, bar):
    """Warm up each (candidate, phase), then take samples round-robin. Each sample
    runs `inner` calls so one sample lasts >= args.sample_ms; medians per call."""
    phases = ("fwd", "fwdbwd")
    live, inner, est = [], {}, {}
    for name, fn in cands:
        for ph in phases:
            bar.set_postfix_str(f"warm-up {name} {ph}", refresh=TTY)
            try:
                t0 = time.perf_counter()
                for _ in range(args.warmup):
                    step(fn, p, 0, ph)
                clock.sync()
                first = time.perf_counter() - t0
                if name == "compile" and ph == "fwd":
                    res[name]["compile_and_warmup_s"] = round(first, 2)
                # Fastest of three: one call on a busy machine can be descheduled.
                t = float("inf")
                for i in range(3):
                    t0 = time.perf_counter()
                    step(fn, p, (i + 1) % p.pool, ph)
                    clock.sync()
                    t = min(t, max(time.perf_counter() - t0, 1e-6))
            except Exception as e:
                res[name].setdefault("error", f"{ph}: {short_error(e)}")
                res[name]["traceback"] = traceback.format_exc(limit=6)
                continue
            inner[(name, ph)] = max(1, min(64, math.ceil(args.sample_ms / 1e3 / t)))
            est[(name, ph)] = t * inner[(name, ph)]
            live.append((name, fn, ph))
    if not live:
        return
    per_round = sum(est.values())
    rounds = max(args.min_reps, min(args.reps, int(args.budget_s / per_round)))
    samples = {(n, ph): [] for n, _, ph in live}
    slot = 0
    for r in range(rounds):
        bar.set_postfix_str(f"timing round {r + 1}/{rounds}", refresh=TTY)
        # Rotate the start so no candidate always follows the same neighbour.
        k = r % len(live)
        order = live[k:] + live[:k]
        tokens = []
        for name, fn, ph in order:
            if (name, ph) not in samples:
                continue
            try:
                n = inner[(name, ph)]
                t0 = clock.start()
                for _ in range(n):
                    slot = (slot + 1) % p.pool
                    step(fn, p, slot, ph)
                tokens.append((name, ph, n, clock.stop(t0)))
            except Exception as e:
                res[name].setdefault("error", f"{ph}: {short_error(e)}")
                samples.pop((name, ph), None)
        clock.sync()
        for name, ph, n, tok in tokens:
            if (name, ph) in samples:
                samples[(name, ph)].append(clock.seconds(tok) / n * 1e3)
    for (name, ph), s in samples.items():
        if s:
            res[name][f"{ph}_ms"] = statistics.median(s)
            res[name][f"{ph}_ms_min"] = min(s)
            res[name][f"{ph}_samples"] = len(s)
            res[name][f"{ph}_calls_per_sample"] = inner[(name, ph)]


def reference(p, ref_device):
    """float64 LayerNorm + Linear on the same inputs: y and the five gradients."""
    def d(t):
        return t.detach().to(device=ref_device, dtype=torch.float64).requires_grad_()
    x, lnw, lnb, w, b = d(p.xs[0]), d(p.lnw), d(p.lnb), d(p.w), d(p.b)
    y = eager_fn(x, lnw, lnb, w, b)
    grads = torch.autograd.grad(y, (x, lnw, lnb, w, b), p.dys[0].to(ref_device, torch.float64))
    return {"y": y.detach(), **{n: g for n, g in zip(GRAD_NAMES, grads)}}


def rel_err(a, r):
    """max |a - r| / max |r|: normwise, so entries of r near zero do not blow it up."""
    a = a.detach().to(device=r.device, dtype=torch.float64)
    den = r.abs().max().item()
    return (a - r).abs().max().item() / (den if den > 0 else 1.0)


def check_errors(name, fn, p, ref, res):
    try:
        y, ins = fn(0)
        grads = torch.autograd.grad(y, ins, p.dys[0])
        errs = {"y": rel_err(y, ref["y"])}
        if name != "floor":  # the floor's gradients are w.r.t. its normalized input
            errs.update({n: rel_err(g, ref[n]) for n, g in zip(GRAD_NAMES, grads)})
        res["rel_err"] = errs
        res["max_rel_err"] = max(errs.values())
        if not all(math.isfinite(v) for v in errs.values()):
            res.setdefault("error", "non-finite output")
    except Exception as e:
        res.setdefault("error", f"check: {short_error(e)}")


def measure_memory(fn, p, res):
    """Saved-for-backward bytes via saved_tensors_hooks (all devices), and on CUDA the
    allocator's view: memory held after forward (minus y itself) and a step's peak."""
    inputs = p.input_storages()
    saved = {}

    def pack(t):
        st = t.untyped_storage()
        saved[st.data_ptr()] = st.nbytes()
        return t
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y, ins = fn(0)
        res["saved_bytes_new"] = sum(v for k, v in saved.items() if k not in inputs)
        res["saved_bytes_all"] = sum(saved.values())
        del y, ins
    except Exception as e:
        res["saved_bytes_error"] = short_error(e)
    if p.device.type != "cuda":
        res["kept_bytes"] = res.get("saved_bytes_new")
        return
    try:
        gc.collect()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        y, ins = fn(0)
        torch.cuda.synchronize()
        res["kept_bytes"] = torch.cuda.memory_allocated() - base - y.untyped_storage().nbytes()
        del y, ins
        gc.collect()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(fn, p, 0, "fwdbwd")
        torch.cuda.synchronize()
        res["peak_bytes"] = torch.cuda.max_memory_allocated() - base
    except Exception as e:
        res.setdefault("error", f"memory: {short_error(e)}")


def auto_resolves_to(p):
    """What strategy="auto" picks for this problem, as the library reports it: one name,
    or "forward/backward" where the two differ."""
    try:
        import ctypes
        from lnlinear import _clib
        from lnlinear.ops import _problem
        x = p.xs[0].detach()
        prob = ctypes.byref(_problem(x, p.N, EPS, _clib.STRATEGY_AUTO))
        names = {_clib.STRATEGY_FUSED: "fused", _clib.STRATEGY_UNFUSED: "unfused"}
        fwd, bwd = (names.get(c, str(c)) for c in (_clib.lib.lnl_resolve_strategy(prob),
                                                    _clib.lib.lnl_resolve_backward_strategy(prob)))
        return fwd if fwd == bwd else f"{fwd}/{bwd}"
    except Exception as e:
        return f"unknown ({short_error(e)})"


def run_config(device, M, K, N, dtype_name, args, clock, bar, liger_error):
    dtype = DTYPE_OF[dtype_name]
    entry = {"device": device.type, "M": M, "K": K, "N": N, "dtype": dtype_name,
             "candidates": {}}
    # Last-level cache to outgrow with the input pool; 32 MiB stands in on the CPU.
    cache = (getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 << 20)
             if device.type == "cuda" else 32 << 20)
    try:
        p = Problem(device, M, K, N, dtype, cache, seed=args.seed)
    except Exception as e:
        entry["error"] = f"inputs: {short_error(e)}"
        return entry
    entry["pool_copies"] = p.pool
    res = {}
    cands = []
    for name, _label in CANDIDATES:
        if name not in args.candidates:
            continue
        res[name] = {}
        if name == "liger" and liger_error:
            res[name]["error"] = liger_error
            continue
        try:
            cands.append((name, make_candidate(name, p)))
        except Exception as e:
            res[name]["error"] = short_error(e)
    if lnlinear is not None and "lnl_auto" in res:
        res["lnl_auto"]["resolves_to"] = auto_resolves_to(p)
    time_round_robin(cands, p, clock, args, res, bar)
    bar.set_postfix_str("float64 reference", refresh=TTY)
    ref = None
    ref_dev = device
    try:
        ref = reference(p, ref_dev)
    except Exception as e:
        # Not enough device memory for float64 copies: do it on the host instead.
        if device.type == "cuda":
            try:
                torch.cuda.empty_cache()
                ref_dev = torch.device("cpu")
                ref = reference(p, ref_dev)
            except Exception as e2:
                entry["reference_error"] = short_error(e2)
        else:
            entry["reference_error"] = short_error(e)
    entry["reference_device"] = ref_dev.type
    for name, fn in cands:
        bar.set_postfix_str(f"check + memory {name}", refresh=TTY)
        if ref is not None:
            check_errors(name, fn, p, ref, res[name])
        measure_memory(fn, p, res[name])
    entry["candidates"] = res
    del p, ref, cands
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return entry


def machine_info(device):
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "torch": torch.__version__, "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            # A shared machine's load explains noisy CPU timings.
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except Exception:
        info["cpu"] = platform.processor()
    if device.type == "cuda":
        prop = torch.cuda.get_device_properties(device)
        info.update(gpu=prop.name, gpu_memory_gb=round(prop.total_memory / 2**30, 1),
                    gpu_sms=prop.multi_processor_count, cuda=torch.version.cuda,
                    tf32_matmul=torch.backends.cuda.matmul.allow_tf32)
    if lnlinear is not None:
        info["lnlinear_version"] = ".".join(map(str, lnlinear.library_version()))
        info["lnlinear_library"] = lnlinear.library_path
        # which autograd node plain eager calls on this device took: C++ or Python
        info["lnlinear_eager_node"] = ("C++" if lnlinear.ops.cpp_autograd_available(device.type)
                                       else "Python")
    else:
        info["lnlinear_error"] = LNL_IMPORT_ERROR
    try:
        import importlib.metadata as md
        info["liger_kernel"] = md.version("liger-kernel")
    except Exception:
        info["liger_kernel"] = None
    return info


def command_line():
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}"
                   for k in ("PYTHONPATH", "LNLINEAR_LIBRARY", "OMP_NUM_THREADS",
                             "LNLINEAR_NO_CPP")
                   if k in os.environ)
    cmd = " ".join(shlex.quote(a) for a in ["python3"] + sys.argv)
    return f"{env} {cmd}".strip()


def parse_shape(s):
    parts = s.replace("x", ",").split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"shape {s!r} is not M,K,N")
    return tuple(int(v) for v in parts)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", action="append", choices=["cpu", "cuda"],
                    help="repeatable; default: cuda if available, and cpu")
    ap.add_argument("--quick", action="store_true", help="tiny shapes and few samples (smoke test)")
    ap.add_argument("--shapes", nargs="+", type=parse_shape, metavar="M,K,N",
                    help="override the standard suite")
    ap.add_argument("--dtypes", nargs="+", choices=sorted(DTYPE_OF),
                    help="default: bf16 f16 f32 on cuda, f32 on cpu (which also takes "
                    "bf16 f16 f64)")
    ap.add_argument("--reps", type=int, default=None,
                    help="most timed samples per candidate and phase (default 50, quick 5)")
    ap.add_argument("--min-reps", type=int, default=5, help="fewest samples, whatever the budget")
    ap.add_argument("--warmup", type=int, default=None, help="calls before timing (default 3)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="timing seconds per shape and dtype, all candidates (default 2; cpu 6)")
    ap.add_argument("--sample-ms", type=float, default=None,
                    help="shortest sample; fast calls are repeated within one (default 1; cpu 5)")
    ap.add_argument("--candidates", nargs="+", choices=[c for c, _ in CANDIDATES],
                    default=[c for c, _ in CANDIDATES])
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (CPU runs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit-s", type=float, default=None,
                    help="start no new problem after this many seconds on a device (the rest "
                    "is recorded as skipped; the report is still written)")
    ap.add_argument("--out", help="output folder (default docs/results/<device>-<date>/; with "
                    "several devices, one subfolder per device)")
    args = ap.parse_args(argv)
    if args.no_compile and "compile" in args.candidates:
        args.candidates.remove("compile")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = args.device or (["cuda"] if torch.cuda.is_available() else []) + ["cpu"]
    date = datetime.date.today().isoformat()
    try:
        liger_layer_norm()
        liger_error = None
    except Exception as e:
        liger_error = f"skipped: Liger Kernel unavailable ({short_error(e)})"
    import compare_plots
    for dev_name in devices:
        if dev_name == "cuda" and not torch.cuda.is_available():
            print("compare.py: --device cuda but torch sees no GPU; skipped", file=sys.stderr)
            continue
        device = torch.device(dev_name)
        d = argparse.Namespace(**vars(args))
        cpu = dev_name == "cpu"
        d.reps = args.reps or (5 if args.quick else 50)
        d.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
        d.budget_s = args.budget_s or (0.3 if args.quick else (6.0 if cpu else 2.0))
        d.sample_ms = args.sample_ms or (5.0 if cpu else 1.0)
        d.min_reps = min(args.min_reps, d.reps)
        shapes = args.shapes or (QUICK_SHAPES if args.quick else SHAPES)[dev_name]
        dtypes = args.dtypes or DTYPES[dev_name]
        if args.out:
            out = args.out if len(devices) == 1 else os.path.join(args.out, dev_name)
        else:
            out = os.path.join(ROOT, "docs", "results", f"{dev_name}-{date}")
        os.makedirs(out, exist_ok=True)
        doc = {"date": date, "started": datetime.datetime.now().isoformat(timespec="seconds"),
               "command": command_line(), "machine": machine_info(device),
               "settings": {k: getattr(d, k) for k in ("reps", "min_reps", "warmup", "budget_s",
                                                       "sample_ms", "seed", "quick")},
               "eps": EPS, "candidates": {c: l for c, l in CANDIDATES if c in args.candidates},
               "results": []}
        if liger_error:
            doc["liger_note"] = liger_error
        clock = Clock(device)
        run_start = time.perf_counter()
        configs = [(s, t) for s in shapes for t in dtypes]
        path = os.path.join(out, "results.json")
        with tqdm(configs, desc=dev_name, unit="problem", dynamic_ncols=True,
                  mininterval=0.1 if TTY else 20.0) as bar:
            for (M, K, N), t in bar:
                bar.set_description(f"{dev_name} {M}x{K}x{N} {t}", refresh=TTY)
                t0 = time.perf_counter()
                if args.time_limit_s and t0 - run_start > args.time_limit_s:
                    # Past the caller's limit: record the rest as skipped, still write the report.
                    doc["results"].append({"device": dev_name, "M": M, "K": K, "N": N, "dtype": t,
                                           "error": "skipped: --time-limit-s reached",
                                           "candidates": {}})
                    continue
                try:
                    entry = run_config(device, M, K, N, t, d, clock, bar, liger_error)
                except Exception as e:  # a broken config must not lose the others
                    entry = {"device": dev_name, "M": M, "K": K, "N": N, "dtype": t,
                             "error": short_error(e), "candidates": {}}
                entry["wall_s"] = round(time.perf_counter() - t0, 1)
                doc["results"].append(entry)
                # Written after every problem: a run cut short keeps what it measured.
                with open(path, "w") as f:
                    json.dump(doc, f, indent=1)
        doc["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        compare_plots.write_report(doc, out)
        print(f"compare.py: wrote {out}/results.json, results.md and plots", file=sys.stderr)


if __name__ == "__main__":
    main()
