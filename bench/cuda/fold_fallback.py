"""What an off-centre row costs the Hopper fused forward.

    PYTHONPATH=python LNLINEAR_LIBRARY=build-gpu/liblnlinear.so python3 bench/cuda/fold_fallback.py

The bf16/f16 FUSED forward on Hopper runs in its epilogue form (LN folded into the
weight and the epilogue) unless some row has |mean| * rstd > 64; then the whole call runs
the transform form (fused_forward_sm90.cu). For each shape this times
lnlinear.layernorm_linear(..., strategy="fused") under no_grad (forward only) on rows of
mean 3 and spread 2, on the same rows with one row moved by 1e3, and all rows at 1e3,
with UNFUSED on the centred rows beside them: CUDA-event medians of 50 calls after
warm-up, in ms. Needs torch with CUDA.
"""
import torch

import lnlinear
from event_timing import median_ms

SHAPES = [(8192, 768, 3072), (8192, 4096, 4096), (16384, 8192, 1024), (32768, 4096, 256)]


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    dt = torch.bfloat16
    print("M,K,N              | fused, centred | fused, one row at 1e3 | fused, all rows at 1e3"
          " | unfused, centred   (ms)")
    for M, K, N in SHAPES:
        rnd = lambda *s: torch.randn(*s, device="cuda", generator=g)  # noqa: E731
        x = (3 + 2 * rnd(M, K)).to(dt)
        one = x.clone()
        one[M // 2] += 1e3
        far = (x.float() + 1e3).to(dt)
        lnw, lnb = (1 + 0.3 * rnd(K)).to(dt), (0.5 * rnd(K)).to(dt)
        w, b = (rnd(N, K) / K ** 0.5).to(dt), (0.5 * rnd(N)).to(dt)

        def run(xx, strategy):
            return lambda: lnlinear.layernorm_linear(xx, lnw, lnb, w, b, strategy=strategy)

        with torch.no_grad():
            t = [median_ms(run(x, "fused")), median_ms(run(one, "fused")),
                 median_ms(run(far, "fused")), median_ms(run(x, "unfused"))]
        print(f"{M},{K},{N:<10} | {t[0]:14.4f} | {t[1]:21.4f} | {t[2]:22.4f} | {t[3]:.4f}")


if __name__ == "__main__":
    main()
