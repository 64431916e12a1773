"""A forward's time beside the GPU's SM clock and power draw, for several settings of one
library: is a kernel slower because it does more per clock, or because the clock came down?

    python3 bench/cuda/clocks_ab.py --lib build-gpu/liblnlinear.so --shape 8192,4096,4096 \\
        --variant coop:LNL_CUDA_PINGPONG_MAX_K=0 --variant pp:LNL_CUDA_PINGPONG_MAX_K=65536 \\
        [--cublas] [--seconds 2] [--rounds 3] [--idle 0]

Each variant sets its environment variables (the library reads these overrides on every
call), then runs lnlinear's FUSED forward back to back for --seconds while `nvidia-smi`
samples the SM clock, the power draw and the clock event reasons every 50 ms. --cublas adds
cuBLAS's GEMM on the normalized input, on the problem's random data and on constant data
(which the H200 runs faster: fewer bits toggle, so less power for the same clock). The
variants take turns, --rounds times. One line a run: median ms a call (CUDA events over
batches of ~20 ms), median SM MHz and W over the run, and the event-reason masks seen
(nvidia-smi's clocks_event_reasons: 0x4 is the software power cap, 0x20 / 0x40 thermal
slowdown, 0x1 idle). Session 22 found the ping-pong form 28% slower at 8192,4096,4096 at
full clocks but as fast under ncu's fixed clocks; this tells power from the rest.

--idle S sleeps S seconds before each run: with a short --seconds (0.15, lnl-bench's budget
a median) a run then starts from an idle GPU, below the power cap, as lnl-bench's and
session 22's short timings did; without it the variants run back to back at the cap, as
a training loop does. A form can win one way and lose the other (session 23).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_cuda import Case, load  # noqa: E402

FIELDS = ("clocks.sm", "power.draw")
REASONS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")


def reasons_field():
    """The event-reason field this nvidia-smi knows (renamed in newer drivers)."""
    for f in REASONS:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={f}", "--format=csv,noheader"],
                           capture_output=True, text=True)
        if r.returncode == 0 and "not a valid field" not in r.stdout + r.stderr:
            return f
    return None


class Sampler:
    """nvidia-smi in the background, one line every 50 ms, for the span of a `with`."""

    def __init__(self, device, reasons):
        self.cmd = ["nvidia-smi", "-i", str(device), "--format=csv,noheader,nounits",
                    "-lms", "50", "--query-gpu=" + ",".join(FIELDS + ((reasons,) if reasons else ()))]

    def __enter__(self):
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        time.sleep(0.2)  # its first lines come before the work starts: dropped below
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        out, _ = self.p.communicate()
        self.rows = [[v.strip() for v in line.split(",")] for line in out.splitlines() if line]
        return False

    def summary(self):
        return summarize(self.rows[4:] or self.rows)  # past the 0.2 s before the work began


def summarize(rows):
    """Median SM MHz and W, the reason masks seen, and the count, from nvidia-smi's rows
    (MHz, W[, reasons]); values it could not read ("[N/A]") are left out."""
    def num(i):
        out = []
        for r in rows:
            try:
                out.append(float(r[i]))
            except (IndexError, ValueError):
                pass
        return out
    med = lambda v: statistics.median(v) if v else float("nan")
    reasons = sorted({r[2] for r in rows if len(r) > 2})
    return med(num(0)), med(num(1)), reasons, len(rows)


def timed_run(fn, seconds):
    """Median ms a call over batches of about 20 ms, calling fn for `seconds`."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    per_call = max(time.perf_counter() - t, 1e-6)
    n = max(1, int(0.02 / per_call))
    batches, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        batches.append((s, e))
        if len(batches) % 8 == 0:  # keep the queue short, so the sampler sees this work
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) / n for s, e in batches)


def variants(a, lib, M, K, N):
    """(name, env, callable) for each variant and, with --cublas, cuBLAS's two data."""
    case = Case(lib, M, K, N, a.dtype, "fused")
    out = []
    for v in a.variant:
        name, _, assigns = v.partition(":")
        env = dict(kv.split("=", 1) for kv in assigns.split(",") if kv)
        out.append((name, env, case.fwd))
    if a.cublas:
        ln = F.layer_norm(case.x, (K,), case.lnw, case.lnb, case.eps)
        ones, w1 = torch.ones_like(ln), torch.full_like(case.W, 0.01)
        out.append(("cublas", {}, lambda: F.linear(ln, case.W, case.b)))
        out.append(("cublas-const", {}, lambda: F.linear(ones, w1, case.b)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default="build-gpu/liblnlinear.so")
    ap.add_argument("--shape", action="append", required=True, help="M,K,N; repeatable")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME:VAR=VALUE[,VAR=VALUE...] (environment for the library); repeatable")
    ap.add_argument("--cublas", action="store_true")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=0.0, help="seconds asleep before each run")
    a = ap.parse_args()
    if not a.variant and not a.cublas:
        ap.error("nothing to run: give --variant or --cublas")
    torch.backends.cuda.matmul.allow_tf32 = False
    lib = load(a.lib)
    reasons = reasons_field()
    dev = torch.cuda.current_device()
    print(f"{torch.cuda.get_device_name()}; event reasons from {reasons or 'nowhere'}")
    print("shape            variant          round      ms   SM MHz      W  samples  reasons")
    for shape in a.shape:
        M, K, N = (int(v) for v in shape.split(","))
        runs = variants(a, lib, M, K, N)
        for r in range(1, a.rounds + 1):
            for name, env, fn in runs:
                saved = {k: os.environ.get(k) for k in env}
                os.environ.update(env)
                time.sleep(a.idle)
                try:
                    with Sampler(dev, reasons) as smp:
                        ms = timed_run(fn, a.seconds)
                finally:
                    for k, v in saved.items():
                        if v is None:
                            os.environ.pop(k, None)
                        else:
                            os.environ[k] = v
                mhz, watts, rs, n = smp.summary()
                print(f"{shape:16s} {name:16s} {r:5d} {ms:7.4f} {mhz:8.0f} {watts:6.0f} {n:8d}  "
                      f"{' '.join(rs)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
