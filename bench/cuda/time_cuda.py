"""Times and checks the CUDA backend against the cuBLAS GEMM alone and PyTorch eager.

    python3 bench/cuda/time_cuda.py [--lib build-gpu/liblnlinear.so] [--quick] [--json FILE]

For each shape (M,K,N) and dtype (bf16, f32) and each way of running lnlinear
(fused = recompute, unfused = recompute, unfused keeping ln_out, auto), it
  - checks every output and gradient against a float64 PyTorch reference
    (||out - ref|| / ||ref|| per tensor) and that a repeat run is bitwise equal,
  - times forward and forward+backward (all five gradients) with CUDA events:
    median of REPS runs after warm-up, on the current (legacy default) stream,
and compares with F.linear on a precomputed LayerNorm output (the GEMM alone), the
three GEMMs of a forward+backward, and PyTorch eager (F.layer_norm then F.linear,
backward through autograd). Inputs are not rotated: every shape except the first two
is several times the 60 MB L2. Extra small cases check odd sizes, K = 65536 and
misaligned pointers. Needs torch with CUDA.
"""
import argparse
import ctypes
import json
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F

SHAPES = [(16, 8, 16), (4096, 768, 768), (8192, 768, 3072), (8192, 1024, 1024),
          (8192, 4096, 4096), (8192, 4096, 12288), (16384, 8192, 1024), (32768, 4096, 256)]
DT = {"f32": (0, torch.float32), "bf16": (2, torch.bfloat16), "f16": (3, torch.float16)}
BOUND = {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}
STRAT = {"auto": 0, "fused": 1, "unfused": 2}


class Problem(ctypes.Structure):
    # lnl_problem as the newest library reads it (an older one ignores the trailing
    # ln_float32, left 0 here)
    _fields_ = [("rows", ctypes.c_int64), ("in_features", ctypes.c_int64),
                ("out_features", ctypes.c_int64), ("eps", ctypes.c_double),
                ("dtype", ctypes.c_int), ("device", ctypes.c_int), ("strategy", ctypes.c_int),
                ("threads", ctypes.c_int), ("stream", ctypes.c_void_p), ("ln_float32", ctypes.c_int)]


class BackwardArgs(ctypes.Structure):
    """lnl_backward_args (include/lnlinear.h)."""
    _fields_ = [(n, ctypes.c_void_p) for n in (
        "dy", "x", "ln_weight", "ln_bias", "linear_weight", "mean", "rstd", "ln_out", "dx",
        "dln_weight", "dln_bias", "dlinear_weight", "dlinear_bias", "workspace")] + [
        ("workspace_bytes", ctypes.c_size_t), ("y", ctypes.c_void_p),
        ("linear_bias", ctypes.c_void_p)]


def load(path):
    lib = ctypes.CDLL(path)
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    lib.lnl_forward.argtypes = [ctypes.POINTER(Problem)] + [vp] * 10 + [sz]
    lib.lnl_backward.argtypes = [ctypes.POINTER(Problem)] + [vp] * 14 + [sz]
    lib.lnl_forward_workspace_size.argtypes = [ctypes.POINTER(Problem)]
    lib.lnl_backward_workspace_size.argtypes = [ctypes.POINTER(Problem)]
    lib.lnl_forward_workspace_size.restype = sz
    lib.lnl_backward_workspace_size.restype = sz
    lib.lnl_resolve_strategy.argtypes = [ctypes.POINTER(Problem)]
    lib.lnl_last_error.restype = ctypes.c_char_p
    if hasattr(lib, "lnl_backward_ex"):  # since session 40
        lib.lnl_backward_ex.argtypes = [ctypes.POINTER(Problem), ctypes.POINTER(BackwardArgs)]
    return lib


def P(t):
    return None if t is None else t.data_ptr()


class Case:
    """Inputs, outputs and workspaces of one problem, plus calls into lnlinear."""

    def __init__(self, lib, M, K, N, dt, strategy, keep_ln_out=False, misalign=False,
                 offset_rows=False, eps=1e-5):
        self.lib, self.M, self.K, self.N, self.eps = lib, M, K, N, eps
        code, tdt = DT[dt]
        self.tdt = tdt
        g = torch.Generator(device="cuda").manual_seed(M * 31 + K * 7 + N)

        def rnd(*shape, scale=1.0, shift=0.0):
            n = math.prod(shape)
            extra = 1 if misalign else 0  # element offset: breaks 16-byte alignment
            buf = torch.randn(n + extra, device="cuda", generator=g, dtype=torch.float32)
            return (buf * scale + shift).to(tdt)[extra:].view(*shape)

        self.x = rnd(M, K, scale=2.0, shift=3.0)
        if offset_rows and M > 1:
            self.x[1::2] = (1e3 + torch.randn(self.x[1::2].shape, device="cuda", generator=g)).to(tdt)
        self.lnw = rnd(K, scale=0.5, shift=1.0)
        self.lnb = rnd(K, scale=0.2)
        self.W = rnd(N, K, scale=1.0 / math.sqrt(K))
        self.b = rnd(N, scale=0.2)
        self.dy = rnd(M, N)
        e = lambda *s, d=tdt: torch.full(s, float("nan"), device="cuda", dtype=d)
        off = 1 if misalign else 0
        self.y = e(M * N + off)[off:].view(M, N)
        self.mean, self.rstd = e(M, d=torch.float32), e(M, d=torch.float32)
        self.ln_out = e(M, K) if keep_ln_out else None
        self.dx = e(M * K + off)[off:].view(M, K)
        self.dlnw, self.dlnb, self.dW, self.db = e(K), e(K), e(N * K + off)[off:].view(N, K), e(N)
        self.p = Problem(M, K, N, eps, code, 1, STRAT[strategy], 0,
                         torch.cuda.current_stream().cuda_stream or None)
        self.resolved = lib.lnl_resolve_strategy(ctypes.byref(self.p))
        fw = lib.lnl_forward_workspace_size(ctypes.byref(self.p))
        bw = lib.lnl_backward_workspace_size(ctypes.byref(self.p))
        self.ws_bytes = max(fw, bw)
        self.ws = torch.empty(max(self.ws_bytes, 1), dtype=torch.uint8, device="cuda")

    def fwd(self):
        st = self.lib.lnl_forward(ctypes.byref(self.p), P(self.x), P(self.lnw), P(self.lnb),
                                  P(self.W), P(self.b), P(self.y), P(self.mean), P(self.rstd),
                                  P(self.ln_out), P(self.ws), self.ws_bytes)
        if st:
            raise RuntimeError(f"lnl_forward: {st}: {self.lib.lnl_last_error().decode()}")

    def bwd(self):
        """The backward, given the forward's y (as the PyTorch op and lnl-bench give it:
        FUSED's bf16 backward on Hopper then forms dx in the dy . W GEMM's epilogue)."""
        if not hasattr(self.lib, "lnl_backward_ex"):  # a library from before session 40
            st = self.lib.lnl_backward(ctypes.byref(self.p), P(self.dy), P(self.x), P(self.lnw),
                                       P(self.lnb), P(self.W), P(self.mean), P(self.rstd),
                                       P(self.ln_out), P(self.dx), P(self.dlnw), P(self.dlnb),
                                       P(self.dW), P(self.db), P(self.ws), self.ws_bytes)
        else:
            a = BackwardArgs(P(self.dy), P(self.x), P(self.lnw), P(self.lnb), P(self.W),
                             P(self.mean), P(self.rstd), P(self.ln_out), P(self.dx),
                             P(self.dlnw), P(self.dlnb), P(self.dW), P(self.db), P(self.ws),
                             self.ws_bytes, P(self.y), P(self.b))
            st = self.lib.lnl_backward_ex(ctypes.byref(self.p), ctypes.byref(a))
        if st:
            raise RuntimeError(f"lnl_backward: {st}: {self.lib.lnl_last_error().decode()}")

    def fwd_bwd(self):
        self.fwd()
        self.bwd()

    def outputs(self):
        return {"y": self.y, "mean": self.mean, "rstd": self.rstd, "dx": self.dx,
                "dln_weight": self.dlnw, "dln_bias": self.dlnb, "dlinear_weight": self.dW,
                "dlinear_bias": self.db}


def reference(c):
    d = lambda t: t.detach().double().requires_grad_()
    x, lnw, lnb, W, b = d(c.x), d(c.lnw), d(c.lnb), d(c.W), d(c.b)
    mean = x.mean(-1)
    rstd = 1.0 / torch.sqrt(x.var(-1, unbiased=False) + c.eps)
    y = F.linear(F.layer_norm(x, (c.K,), lnw, lnb, c.eps), W, b)
    gx, gw, gb, gW, gbb = torch.autograd.grad(y, [x, lnw, lnb, W, b], c.dy.double())
    return {"y": y.detach(), "mean": mean.detach(), "rstd": rstd.detach(), "dx": gx,
            "dln_weight": gw, "dln_bias": gb, "dlinear_weight": gW, "dlinear_bias": gbb}


def rel(a, r):
    a = a.double()
    if not torch.isfinite(a).all():
        return float("inf")
    n = r.norm().item()
    return (a - r).norm().item() / (n if n > 0 else 1.0)


def check(c, ref):
    c.fwd_bwd()
    first = {k: v.clone() for k, v in c.outputs().items()}
    c.fwd_bwd()
    same = all(torch.equal(first[k], v) for k, v in c.outputs().items())
    errs = {k: rel(first[k], ref[k]) for k in ref}
    return errs, same


def median_ms(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(reps)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev)


def baselines(c, reps):
    K, eps = c.K, c.eps
    lnout = F.layer_norm(c.x, (K,), c.lnw, c.lnb, eps)
    r = {}
    r["gemm_fwd"] = median_ms(lambda: F.linear(lnout, c.W, c.b), reps)

    def three():
        F.linear(lnout, c.W, c.b)
        c.dy @ c.W
        c.dy.t() @ lnout
    r["gemm3_fb"] = median_ms(three, reps)
    ps = [t.detach().clone().requires_grad_() for t in (c.x, c.lnw, c.lnb, c.W, c.b)]
    fwd = lambda: F.linear(F.layer_norm(ps[0], (K,), ps[1], ps[2], eps), ps[3], ps[4])
    with torch.no_grad():
        r["eager_fwd"] = median_ms(fwd, reps)
    r["eager_fb"] = median_ms(lambda: torch.autograd.grad(fwd(), ps, c.dy), reps)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build-gpu/liblnlinear.so")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    lib = load(a.lib)
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}", flush=True)
    results, fails = [], []

    # ---- extra correctness cases: odd sizes, long rows, misaligned pointers, offsets ----
    extra = [(1, 1, 1), (3, 67, 5), (129, 1000, 257), (64, 65536, 24), (257, 4097, 129),
             (1000, 768, 768)]
    for (M, K, N) in extra:
        for dt in ("f32", "bf16", "f16"):
            for strat in ("fused", "unfused"):
                for mis in (False, True):
                    try:
                        c = Case(lib, M, K, N, dt, strat, misalign=mis, offset_rows=True)
                        errs, same = check(c, reference(c))
                    except RuntimeError as ex:
                        fails.append(f"extra {M},{K},{N} {dt} {strat} misalign={mis}: {ex}")
                        print(f"extra {M},{K},{N} {dt} {strat} mis={int(mis)} ERROR {ex}", flush=True)
                        continue
                    worst = max(errs.values())
                    ok = worst <= BOUND[dt] and same
                    if not ok:
                        fails.append(f"extra {M},{K},{N} {dt} {strat} misalign={mis}: "
                                     f"{errs} repeat_equal={same}")
                    print(f"extra {M:>6},{K:>6},{N:>6} {dt:>4} {strat:>7} mis={int(mis)} "
                          f"worst={worst:.2e} det={int(same)} {'ok' if ok else 'FAIL'}"
                          + ("" if ok else " " + " ".join(f"{k}={v:.1e}" for k, v in errs.items())),
                          flush=True)
                    del c

    # ---- benchmark shapes: accuracy + timing ----
    variants = [("fused", "fused", False), ("unfused", "unfused", False),
                ("unfused+ln_out", "unfused", True), ("auto", "auto", False)]
    shapes = SHAPES[:3] if a.quick else SHAPES
    for dt in ("bf16", "f32"):
        for (M, K, N) in shapes:
            row = {"M": M, "K": K, "N": N, "dtype": dt}
            ref = None
            for name, strat, keep in variants:
                c = Case(lib, M, K, N, dt, strat, keep_ln_out=keep)
                if ref is None:
                    ref = reference(c)
                    row.update(baselines(c, a.reps))
                errs, same = check(c, ref)
                worst = max(errs.values())
                if worst > BOUND[dt] or not same:
                    fails.append(f"{M},{K},{N} {dt} {name}: {errs} repeat_equal={same}")
                row[name] = {"fwd_ms": median_ms(c.fwd, a.reps),
                             "fb_ms": median_ms(c.fwd_bwd, a.reps),
                             "worst_rel_err": worst, "errs": errs, "bitwise_repeat": same,
                             "resolved": {1: "fused", 2: "unfused"}.get(c.resolved, "?"),
                             "saved_bytes": 2 * M * 4 + (M * K * c.x.element_size() if keep else 0),
                             "workspace_bytes": c.ws_bytes}
                del c
            del ref
            torch.cuda.empty_cache()
            results.append(row)
            g, g3, ef, eb = row["gemm_fwd"], row["gemm3_fb"], row["eager_fwd"], row["eager_fb"]
            print(f"\n{dt} M,K,N={M},{K},{N}: gemm {g:.4f} ms, 3 gemms {g3:.4f} ms, "
                  f"eager fwd {ef:.4f} ms, eager fwd+bwd {eb:.4f} ms", flush=True)
            for name, _, _ in variants:
                v = row[name]
                print(f"  {name:>15} ({v['resolved']:>7}): fwd {v['fwd_ms']:.4f} ms "
                      f"(x{v['fwd_ms']/g:.2f} gemm, x{v['fwd_ms']/ef:.2f} eager)  fwd+bwd "
                      f"{v['fb_ms']:.4f} ms (x{v['fb_ms']/g3:.2f} 3gemm, x{v['fb_ms']/eb:.2f} eager)"
                      f"  err {v['worst_rel_err']:.1e} det {int(v['bitwise_repeat'])}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"results": results, "fails": fails}, f, indent=1)
    print("\nTIME_CUDA SUMMARY:", "all checks passed" if not fails else f"{len(fails)} FAILED")
    for f in fails:
        print("  FAIL", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
