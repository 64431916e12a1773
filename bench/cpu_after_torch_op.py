"""What a PyTorch op just before it costs lnlinear's CPU forward.

    PYTHONPATH=python LNLINEAR_LIBRARY=build/liblnlinear.so python3 bench/cpu_after_torch_op.py
        [--shape 2048,768,768] [--strategy fused] [--rounds 40]

In a model, LayerNorm+Linear runs between PyTorch ops (a residual add, an activation). A
parallel PyTorch op leaves its OpenMP workers spinning for a while after it returns; a
library with threads of its own then competes with them for the cores. This times
lnlinear.layernorm_linear (no autograd) on CPU f32 right after each of: nothing, a 5 ms
sleep, F.linear on the same sizes (a parallel torch op), a single-threaded 64 MB copy
(evicts the caches without threads), and F.linear then a 5 ms sleep. The cases are
shuffled in every round; it prints each one's median over the rounds, in ms, and the
OpenMP runtimes mapped into the process.
"""
import argparse
import random
import time

import numpy as np
import torch
import torch.nn.functional as F

import lnlinear


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="2048,768,768", help="M,K,N")
    ap.add_argument("--strategy", default="fused")
    ap.add_argument("--rounds", type=int, default=40)
    a = ap.parse_args()
    M, K, N = (int(v) for v in a.shape.split(","))
    torch.manual_seed(0)
    x = torch.randn(M, K) + 3
    w = torch.randn(N, K) / K ** 0.5
    g, b, bias = torch.randn(K), torch.randn(K), torch.randn(N)
    ln = F.layer_norm(x, (K,), g, b)
    big, big_out = np.ones(16 << 20, dtype=np.float32), np.empty(16 << 20, dtype=np.float32)

    def ours():
        with torch.no_grad():
            lnlinear.layernorm_linear(x, g, b, w, bias, strategy=a.strategy)

    before = {
        "nothing": lambda: None,
        "sleep 5 ms": lambda: time.sleep(0.005),
        "F.linear": lambda: F.linear(ln, w, bias),
        "64 MB copy, 1 thread": lambda: np.copyto(big_out, big),
        "F.linear, sleep 5 ms": lambda: (F.linear(ln, w, bias), time.sleep(0.005)),
    }
    times = {k: [] for k in before}
    for _ in range(3):
        ours()
    for _ in range(a.rounds):
        keys = list(before)
        random.shuffle(keys)
        for k in keys:
            before[k]()
            t0 = time.perf_counter()
            ours()
            times[k].append(time.perf_counter() - t0)
    print(f"lnlinear {a.strategy} forward, cpu f32 {M},{K},{N}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads, {a.rounds} rounds")
    for k, v in times.items():
        v.sort()
        print(f"  after {k:22s} median {v[len(v) // 2] * 1e3:8.2f} ms   "
              f"(quartiles {v[len(v) // 4] * 1e3:.2f} - {v[3 * len(v) // 4] * 1e3:.2f})")
    maps = sorted({ln_.split()[-1] for ln_ in open("/proc/self/maps")
                   if any(r in ln_.split()[-1].rsplit("/", 1)[-1]
                          for r in ("libgomp", "libiomp", "libomp"))})
    print("  OpenMP runtimes mapped:", ", ".join(maps) if maps else "none")


if __name__ == "__main__":
    main()
