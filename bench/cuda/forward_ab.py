"""One library build's forward: a digest of its outputs, their error against float64, and
its time, for A/B runs of two builds that must agree bit for bit (or within a stated ulp).

    python3 bench/cuda/forward_ab.py --lib build-gpu/liblnlinear.so [--reps 50]

For each case (dtype, M, K, N, strategy, data) it draws the inputs of time_cuda.Case (its
seed depends on the shape only, so every build sees the same), optionally made harder:
  - off: every other row at 1e3 + randn (off centre: the fused forward's transform form);
  - ovf: one column of W at 4 and its gamma at 3e4 (f16: W * gamma overflows, the folded
    weight cannot be used and the transform form redoes the call);
runs the forward once and prints the sha256 (first 12 hex digits) of y, of mean and of
rstd, y's largest error relative to max |y| of the float64 reference, and the median of
`reps` CUDA-event-timed forward calls in ms. Two builds whose lines show the same digests
computed the same outputs.
"""
import argparse
import hashlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from event_timing import median_ms  # noqa: E402
from time_cuda import Case, load  # noqa: E402

CASES = [  # dtype, M, K, N, strategy, data
    ("bf16", 4096, 768, 768, "fused", ""),
    ("bf16", 8192, 768, 3072, "fused", ""),
    ("bf16", 8192, 1024, 1024, "fused", ""),
    ("bf16", 8192, 2048, 2048, "fused", ""),
    ("bf16", 8192, 4096, 4096, "fused", ""),
    ("bf16", 16384, 8192, 1024, "fused", ""),
    ("bf16", 1000, 520, 264, "fused", ""),
    ("bf16", 4096, 1024, 1024, "fused", "off"),
    ("f16", 8192, 1024, 1024, "fused", ""),
    ("f16", 4096, 768, 768, "fused", "ovf"),
    ("f16", 2048, 4096, 1024, "fused", "ovf"),
    ("f16", 1000, 520, 264, "fused", "off"),
]


def digest(t):
    raw = t.detach().contiguous().view(torch.uint8).cpu().numpy().tobytes()
    return hashlib.sha256(raw).hexdigest()[:12]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build-gpu/liblnlinear.so")
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    lib = load(a.lib)
    print(f"library {a.lib}")
    print("dtype M,K,N              strategy data | fwd ms  | "
          "y            mean         rstd         | y err")
    for name, M, K, N, strategy, data in CASES:
        c = Case(lib, M, K, N, name, strategy, offset_rows=data == "off")
        if data == "ovf":
            c.W[:, 0] = 4.0
            c.lnw[0] = 3e4
        c.fwd()
        torch.cuda.synchronize()
        d = lambda t: t.double()  # noqa: E731
        ref = F.linear(F.layer_norm(d(c.x), (K,), d(c.lnw), d(c.lnb), c.eps), d(c.W), d(c.b))
        err = ((c.y.double() - ref).abs().max() / ref.abs().max()).item()
        ms = median_ms(c.fwd, a.reps)
        print(f"{name:5} {M},{K},{N:<12} {strategy:8} {data or '-':4} | {ms:7.4f} | "
              f"{digest(c.y)} {digest(c.mean)} {digest(c.rstd)} | {err:.2e}", flush=True)
        del c, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
