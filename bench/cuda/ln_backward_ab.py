"""One library build's backward: its time and a digest of its gradients, for A/B runs of
two builds that must agree bit for bit (e.g. -DLNL_LN_BWD_RING=0 against the default).

    PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so \
        python3 bench/cuda/ln_backward_ab.py [--reps 50]

For each case (dtype, M, K, N, strategy, recompute) it draws the same inputs (rows of mean 3
and spread 2, random gamma/beta/bias, random dy; seed fixed), runs forward and backward
once for the digest (sha256 of dx, dln_weight, dln_bias, dlinear_weight, dlinear_bias in
that order, first 12 hex digits), then times torch.autograd.grad alone (the forward's
graph retained): the median of `reps` CUDA-event-timed backward calls after warm-up, in
ms. Two builds whose lines show the same digests computed the same gradients. Needs
torch with CUDA.
"""
import argparse
import hashlib
import statistics
import time

import torch

import lnlinear
from event_timing import median_ms

CASES = [  # dtype, M, K, N, strategy, recompute
    ("bf16", 8192, 4096, 4096, "auto", False),
    ("bf16", 32768, 4096, 256, "auto", True),
    ("bf16", 16384, 8192, 1024, "auto", True),
    ("bf16", 8192, 1024, 1024, "auto", False),
    ("bf16", 4096, 768, 768, "auto", False),
    ("bf16", 8192, 768, 3072, "fused", True),
    ("f16", 8192, 4096, 4096, "auto", False),
    ("f32", 8192, 4096, 4096, "auto", False),
    ("bf16", 1000, 520, 264, "auto", True),
    ("f16", 4096, 768, 768, "auto", True),
    ("f32", 8192, 1024, 1024, "auto", False),
    # LN(x) rebuilt by the LayerNorm backward (16-bit dxhat, no ln_out kept; since
    # session 34 over dxhat): each of its kernels, register (one and two chunks a
    # thread), Hopper ring (K = 8192) and generic (K % 8 != 0; more than 1024 chunks)
    ("f16", 8192, 1024, 1024, "auto", True),
    ("bf16", 8192, 4096, 4096, "auto", True),
    ("f16", 4096, 6144, 6144, "auto", True),
    ("f16", 16384, 8192, 1024, "auto", True),
    ("f16", 2048, 4100, 1024, "auto", True),
    ("f16", 2048, 12288, 1024, "auto", True),
]
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def timed_ms(fn, reps, device):
    if device != "cuda":  # the CPU smoke test: wall time
        return statistics.median(_wall_ms(fn) for _ in range(reps))
    return median_ms(fn, reps)


def _wall_ms(fn):
    t = time.perf_counter()
    fn()
    return 1e3 * (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test of the script (f32 cases, small)")
    args = ap.parse_args()
    cases = CASES if args.device == "cuda" else [("f32", 64, 520, 24, "auto", True)]
    print(f"library {lnlinear.library_path}")
    print("dtype M,K,N              strategy recompute | bwd ms  | gradients' digest")
    for name, M, K, N, strategy, recompute in cases:
        dt = DTYPES[name]
        g = torch.Generator(device=args.device).manual_seed(1234)
        rnd = lambda *s: torch.randn(*s, device=args.device, generator=g)  # noqa: E731
        x = (3 + 2 * rnd(M, K)).to(dt).requires_grad_()
        lnw = (1 + 0.3 * rnd(K)).to(dt).requires_grad_()
        lnb = (0.5 * rnd(K)).to(dt).requires_grad_()
        w = (rnd(N, K) / K ** 0.5).to(dt).requires_grad_()
        b = (0.5 * rnd(N)).to(dt).requires_grad_()
        dy = rnd(M, N).to(dt)
        inputs = (x, lnw, lnb, w, b)
        y = lnlinear.layernorm_linear(x, lnw, lnb, w, b, recompute=recompute, strategy=strategy)
        grads = torch.autograd.grad(y, inputs, dy, retain_graph=True)
        h = hashlib.sha256()
        for t in grads:
            h.update(t.detach().contiguous().view(torch.uint8).cpu().numpy().tobytes())
        ms = timed_ms(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True), args.reps, args.device)
        print(f"{name:5} {M},{K},{N:<12} {strategy:8} {str(recompute):9} | {ms:7.4f} | {h.hexdigest()[:12]}")


if __name__ == "__main__":
    main()
