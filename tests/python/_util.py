"""Shared test helpers: inputs that can catch bugs, a float64 reference, error metric."""

import contextlib
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

from lnlinear import _cpp

# Below these, a relative error counts as a pass whatever PyTorch's own error is:
# PyTorch's float64 path is the reference itself (error 0), and in ill-conditioned
# tiny cases (K=3: dx is mostly cancellation) rounding the result to float32 alone
# costs ~1.6e-6, above 1.5x PyTorch's luckier 1.4e-6 (measured, CPU). The float32
# floor is the project's float32 bound (1e-5, as in the C tests and the CUDA issue):
# at K=1, dx is exactly zero and PyTorch returns exact zeros, while our CUDA kernel
# leaves one rounding of g - mean(g) amplified by rstd = 1/sqrt(eps) ~ 316, an
# absolute 5e-6..8.5e-6 (H200, commit 056362d) against the old 4e-6 floor.
FLOOR = {torch.float64: 1e-12, torch.float32: 1e-5, torch.bfloat16: 4e-3, torch.float16: 5e-4}
NAMES = ("x", "ln_weight", "ln_bias", "linear_weight", "linear_bias")


def make_inputs(lead, K, N, dtype, device, ln_affine=True, ln_bias=True, linear_bias=True,
                offset=3.0):
    """x with a non-zero row mean, random (never 1/0) parameters, all in dtype."""
    g = torch.Generator().manual_seed(hash((lead, K, N)) & 0xFFFF)

    def rnd(*shape, scale=1.0, shift=0.0):
        t = shift + scale * torch.randn(*shape, generator=g, dtype=torch.float64)
        return t.to(dtype=dtype, device=device)

    x = rnd(*lead, K, scale=2.0, shift=offset)
    lnw = rnd(K, scale=0.5, shift=1.0) if ln_affine else None
    lnb = rnd(K, scale=0.5) if (ln_affine and ln_bias) else None
    w = rnd(N, K, scale=K ** -0.5)
    b = rnd(N, scale=0.5) if linear_bias else None
    dy = rnd(*lead, N)
    return [x, lnw, lnb, w, b], dy


def torch_forward(x, lnw, lnb, w, b, eps=1e-5):
    return F.linear(F.layer_norm(x, (x.shape[-1],), lnw, lnb, eps), w, b)


def run(fn, inputs, dy, grad_mask, upcast=False):
    """fn(*inputs) and the gradients of <fn, dy> for the inputs in grad_mask."""
    ins = []
    for t, m in zip(inputs, grad_mask):
        if t is not None:
            t = t.detach()
            if upcast:
                t = t.double()
            t.requires_grad_(bool(m))
        ins.append(t)
    y = fn(*ins)
    wanted = [t for t in ins if t is not None and t.requires_grad]
    grads = {}
    if wanted:
        dyy = dy.double() if upcast else dy
        gs = torch.autograd.grad(y, wanted, dyy)
        it = iter(gs)
        for name, t in zip(NAMES, ins):
            if t is not None and t.requires_grad:
                grads[name] = next(it)
    return y.detach(), grads, ins


def rel_err(out, ref):
    out, ref = out.double(), ref.double()
    assert torch.isfinite(out).all(), "non-finite values in output"
    # A tensor that is mathematically zero (dx for K=1, where the float64 reference
    # itself holds only rounding noise) is judged on an absolute scale of 1 per element.
    den = ref.norm().item()
    if den < 1e-6 * ref.numel() ** 0.5:
        den = ref.numel() ** 0.5
    diff = (out - ref).norm().item()
    return diff / den if den > 0 else diff


def assert_close_to_ref(ours, torch_own, ref, dtype, what, factor=1.5):
    """ours' error vs the float64 reference <= factor x PyTorch's own error (or floor)."""
    e_ours, e_torch = rel_err(ours, ref), rel_err(torch_own, ref)
    bound = max(factor * e_torch, FLOOR[dtype])
    assert e_ours <= bound, (f"{what}: relative error {e_ours:.3e} > bound {bound:.3e} "
                             f"(PyTorch's own {e_torch:.3e})")
    return e_ours, e_torch


@contextlib.contextmanager
def eager_node(cpp):
    """Inside: plain eager calls take the C++ autograd node (cpp True) or the Python one,
    on every device type; the routing before is restored after."""
    previous = _cpp.set_enabled(cpp)
    try:
        yield
    finally:
        _cpp.set_devices(previous)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bench_stdout(script, *args):
    """What bench/<script> prints, run with this Python and environment (it must exit 0)."""
    return subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), *args],
                          capture_output=True, text=True, check=True, env=os.environ).stdout
