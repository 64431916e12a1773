#!/usr/bin/env python3
"""Same-process A/B timing of two or more builds of liblnlinear on the CPU.

The project's CPU machines are shared and switch between quiet and contended phases
for tens of seconds at a time, so two lnl-bench runs one after the other can differ
by more than the change being measured. Here every build is loaded into one process
(each copy of the .so is a separate dlopen with its own globals) and the builds are
called in turn, call by call, on the same buffers; the figure to read is the median
of the per-round ratios against the first build.

    python3 bench/cpu_ab.py --lib build-old/liblnlinear.so --lib build/liblnlinear.so \
        --shape 2048,768,3072 --pass fb --rounds 15

Libraries with the same path are copied to distinct temporary names first, so one
build can be timed against itself (an A/A run shows the noise floor). --isa gives each
library its own LNL_CPU_ISA (read by each copy at its first call), so one build's
kernels can be timed against each other:

    python3 bench/cpu_ab.py --lib build/liblnlinear.so --isa avx512 \
        --lib build/liblnlinear.so --isa avx512bf16 --dtype bf16 --shape 2048,768,768

--dtype bf16 or f16 stores every tensor in 16 bits (mean and rstd stay float32). Needs
numpy.
"""
import argparse
import ctypes
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

STRATEGIES = {"auto": 0, "fused": 1, "unfused": 2}
DTYPES = {"f32": 0, "bf16": 2, "f16": 3}  # lnl_dtype


class Problem(ctypes.Structure):
    # lnl_problem as the newest library reads it (an older one ignores the trailing
    # ln_float32, left 0 here)
    _fields_ = [("rows", ctypes.c_int64), ("in_features", ctypes.c_int64),
                ("out_features", ctypes.c_int64), ("eps", ctypes.c_double),
                ("dtype", ctypes.c_int), ("device", ctypes.c_int), ("strategy", ctypes.c_int),
                ("threads", ctypes.c_int), ("stream", ctypes.c_void_p), ("ln_float32", ctypes.c_int)]


def ptr(a):
    return None if a is None else a.ctypes.data_as(ctypes.c_void_p)


class Build:
    """One loaded copy of the library with its own workspaces."""

    def __init__(self, path, prob):
        self.path = path
        self.lib = ctypes.CDLL(path)
        for name in ("lnl_forward_workspace_size", "lnl_backward_workspace_size"):
            getattr(self.lib, name).restype = ctypes.c_size_t
            getattr(self.lib, name).argtypes = [ctypes.POINTER(Problem)]
        self.lib.lnl_last_error.restype = ctypes.c_char_p
        self.prob = prob
        self.fws = np.empty(max(1, self.lib.lnl_forward_workspace_size(ctypes.byref(prob))), np.uint8)
        self.bws = np.empty(max(1, self.lib.lnl_backward_workspace_size(ctypes.byref(prob))), np.uint8)

    def _check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{self.path}: {what}: {self.lib.lnl_last_error().decode()}")

    def forward(self, t):
        s = self.lib.lnl_forward(ctypes.byref(self.prob), ptr(t["x"]), ptr(t["g"]), ptr(t["b"]),
                                 ptr(t["W"]), ptr(t["bias"]), ptr(t["y"]), ptr(t["mean"]),
                                 ptr(t["rstd"]), None, ptr(self.fws),
                                 ctypes.c_size_t(self.fws.nbytes))
        self._check(s, "lnl_forward")

    def backward(self, t):
        s = self.lib.lnl_backward(ctypes.byref(self.prob), ptr(t["dy"]), ptr(t["x"]), ptr(t["g"]),
                                  ptr(t["b"]), ptr(t["W"]), ptr(t["mean"]), ptr(t["rstd"]), None,
                                  ptr(t["dx"]), ptr(t["dg"]), ptr(t["db_ln"]), ptr(t["dW"]),
                                  ptr(t["dbias"]), ptr(self.bws), ctypes.c_size_t(self.bws.nbytes))
        self._check(s, "lnl_backward")


def to_storage(a, dtype):
    """float32 values as the library stores them: float32, or 16-bit patterns in uint16."""
    a = np.ascontiguousarray(a, np.float32)
    if dtype == "f16":
        return a.astype(np.float16).view(np.uint16)
    if dtype == "bf16":  # round to nearest even on the upper half
        u = a.view(np.uint32).astype(np.uint64)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return a


def from_storage(a, dtype):
    if dtype == "f16":
        return a.view(np.float16).astype(np.float32)
    if dtype == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a


def tensors(m, k, n, seed, dtype="f32"):
    rng = np.random.default_rng(seed)
    t = {"x": rng.standard_normal((m, k)) * 2 + 3, "g": 1 + 0.1 * rng.standard_normal(k),
         "b": 0.1 * rng.standard_normal(k), "W": rng.standard_normal((n, k)) / np.sqrt(k),
         "bias": rng.standard_normal(n), "dy": rng.standard_normal((m, n))}
    t = {name: to_storage(v, dtype) for name, v in t.items()}
    store = np.float32 if dtype == "f32" else np.uint16
    for name, shape in (("y", (m, n)), ("dx", (m, k)), ("dg", (k,)), ("db_ln", (k,)), ("dW", (n, k)),
                        ("dbias", (n,))):
        t[name] = np.empty(shape, store)
    t["mean"], t["rstd"] = np.empty(m, np.float32), np.empty(m, np.float32)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", action="append", required=True, help="a liblnlinear.so; the first is the base")
    ap.add_argument("--shape", action="append", required=True, help="M,K,N (repeatable)")
    ap.add_argument("--strategy", default="fused", choices=sorted(STRATEGIES))
    ap.add_argument("--pass", dest="which", default="fb", choices=("fwd", "bwd", "fb"))
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    ap.add_argument("--isa", action="append",
                    help="LNL_CPU_ISA for the --lib in the same position (give one per --lib)")
    args = ap.parse_args()
    if len(args.lib) < 2:
        ap.error("give at least two --lib")
    if args.isa and len(args.isa) != len(args.lib):
        ap.error("give one --isa per --lib")

    tmp = tempfile.mkdtemp(prefix="lnl_ab_")
    paths = []
    for i, lib in enumerate(args.lib):  # distinct files: each dlopen gets its own copy
        dst = os.path.join(tmp, f"lib{i}_{os.path.basename(lib)}")
        shutil.copy(lib, dst)
        paths.append(dst)

    for shape in args.shape:
        m, k, n = (int(v) for v in shape.split(","))
        prob = Problem(m, k, n, 1e-5, DTYPES[args.dtype], 0, STRATEGIES[args.strategy],
                       args.threads, None)
        builds = []
        for i, p in enumerate(paths):
            if args.isa:  # each copy reads LNL_CPU_ISA once, at its first call (Build's size query)
                os.environ["LNL_CPU_ISA"] = args.isa[i]
            builds.append(Build(p, prob))
        t = tensors(m, k, n, 1234, args.dtype)
        # Both passes run every round (the backward needs the forward's mean/rstd);
        # only the chosen one is timed.
        times = [[] for _ in builds]
        ys = []
        for r in range(args.rounds + 1):  # round 0 warms up and is dropped
            for i, b in enumerate(builds):
                t0 = time.perf_counter()
                b.forward(t)
                t1 = time.perf_counter()
                b.backward(t)
                t2 = time.perf_counter()
                if r == 0:
                    ys.append(float(sum(np.abs(from_storage(t[o], args.dtype)).sum()
                                        for o in ("y", "dx", "dW"))))
                    continue
                dt = {"fwd": t1 - t0, "bwd": t2 - t1, "fb": t2 - t0}[args.which]
                times[i].append(dt * 1e3)
        print(f"{args.strategy} {args.which} {args.dtype} {m},{k},{n} ({args.rounds} rounds, median "
              f"ms; median of per-round ratios to lib0):")
        for i, b in enumerate(args.lib):
            ratios = [a / z for a, z in zip(times[i], times[0])]
            isa = f" [{args.isa[i]}]" if args.isa else ""
            print(f"  lib{i} {b}{isa}: {statistics.median(times[i]):9.3f} ms  ratio {statistics.median(ratios):.3f}"
                  f"  (min {min(ratios):.3f} max {max(ratios):.3f})  checksum {ys[i]:.6g}")
        sys.stdout.flush()
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
