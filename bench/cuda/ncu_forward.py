"""A target for Nsight Compute: lnlinear's forward of one problem, then cuBLAS's GEMM of
the same problem on the already-normalized input (torch.nn.functional.linear), each a few
times after warm-up, so that ncu can profile our GEMM kernel beside cuBLAS's on the same
data.

    ncu --kernel-name regex:'ln_gemm_fwd_sm90|nvjet' --launch-skip 6 --launch-count 4 \
        --section SpeedOfLight --section WarpStateStats ... \
        python3 bench/cuda/ncu_forward.py --lib build/liblnlinear.so --shape 32768,4096,256

Each pass is marked with an NVTX range ("lnlinear" or "cublas") so that ncu's
--nvtx-include can pick one side. Prints nothing on success but the two times, which
under ncu mean nothing (ncu serializes and replays kernels): lnl-bench times.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_cuda import Case, load  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default="build-gpu/liblnlinear.so")
    ap.add_argument("--shape", default="32768,4096,256")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16", "f32"])
    ap.add_argument("--strategy", default="fused", choices=["fused", "unfused", "auto"])
    ap.add_argument("--passes", type=int, default=4)
    a = ap.parse_args()
    M, K, N = (int(v) for v in a.shape.split(","))
    c = Case(load(a.lib), M, K, N, a.dtype, a.strategy)
    ln = F.layer_norm(c.x, (K,), c.lnw, c.lnb, c.eps)
    for name, fn in (("lnlinear", c.fwd), ("cublas", lambda: F.linear(ln, c.W, c.b))):
        fn()  # warm-up: cuBLASLt's heuristic, the tensor-map encoder
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.nvtx.range_push(name)
        start.record()
        for _ in range(a.passes):
            fn()
        end.record()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        print(f"{name}: {start.elapsed_time(end) / a.passes:.4f} ms a pass ({a.shape} {a.dtype} {a.strategy})")


if __name__ == "__main__":
    main()
