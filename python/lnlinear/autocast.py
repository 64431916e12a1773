"""layernorm_linear under torch.autocast: the fused op in the autocast dtype.

Eager PyTorch under autocast runs ``F.layer_norm`` in float32 and ``F.linear`` in the
autocast dtype D (bfloat16 or float16): LN(x) is computed in float32, rounded to D, and
multiplied by W rounded to D; y comes out in D, and the gradients of float32 leaves in
float32.

On the CPU and on CUDA the library takes that split itself (``ln_float32`` in lnlinear.h;
ops.py's MIXED_LINEAR_DTYPES): a float32 x, ln_weight and ln_bias stay as they are, only
linear_weight and linear_bias go to D, as autocast casts them for ``F.linear``, and dx comes
back in float32. The CPU normalizes the float32 x where its GEMM packs it (rounding LN(x) to
D where the GEMM multiplies 16-bit operands, as eager's cast does): no copy of x, no extra
pass. CUDA runs a float32 LayerNorm pass that writes LN(x) in D for cuBLASLt, as eager's
autocast does without its float32 copy of LN(x) (src/cuda/mixed_backend.cu).

Elsewhere (a 16-bit x beside float32 operands, or a float32 x beside 16-bit LayerNorm
parameters) every operand goes to D before the call, with one difference for x:

x is centred in float32 first, ``(x - mean(x)).to(D)``, and never rounded to D as it is.
A row with a large mean and a small spread (a residual stream's rows often have one) keeps
only 8 (bfloat16) or 11 (float16) bits of ``x`` itself, which may be no bits at all of
``x - mean``: LayerNorm of the rounded row would be wrong where eager's float32 LayerNorm is
right. Centred, the rounding is relative to the row's own spread, as eager's rounding of
LN(x) is. LayerNorm is unchanged by the shift, and its gradient sums to zero along a row, so
the shift's backward is a cast of the op's dx (``_Centred``).

What that costs and saves (docs/design.md, "autocast"): two passes over x in the forward
(its row means; the centred copy in D) and one in the backward (dx to float32), where
eager's autocast writes LN(x) in float32 and then in D. The backward keeps the centred x in
D (2 bytes an element) with mean and rstd, instead of eager's float32 x and LN(x) in D
(6 bytes an element).

A limit eager's autocast does not have, on that path only: in float16, a row whose values
stray more than 65504 from its mean overflows in the centred copy.
"""

import torch

from .ops import mixed_ok

# autocast casts float32 (and other 16-bit) tensors; float64 ones it leaves alone
_CASTABLE = (torch.float32, torch.bfloat16, torch.float16)
_TARGETS = (torch.bfloat16, torch.float16)
# ~0.1 us: what a call outside autocast pays (a torch without it asks per device below)
_any_enabled = getattr(torch._C, "_is_any_autocast_enabled", None) or (lambda: True)


def target_dtype(x, ln_weight, ln_bias, linear_weight, linear_bias):
    """D where the call must run in autocast's dtype D; None where it runs as it is
    (autocast off for x's device type, every operand already in D, an operand autocast
    would not cast, or anything but tensors: the plain path then checks and reports).
    Asked only once _any_enabled() has said some autocast is on (functional.py)."""
    if not isinstance(x, torch.Tensor) or x.dim() < 1:
        return None
    dev = x.device.type
    if not torch.is_autocast_enabled(dev):
        return None
    d = torch.get_autocast_dtype(dev)
    if d not in _TARGETS:
        return None
    ops = [t for t in (x, ln_weight, ln_bias, linear_weight, linear_bias) if t is not None]
    if not all(isinstance(t, torch.Tensor) and t.dtype in _CASTABLE for t in ops):
        return None
    if all(t.dtype == d for t in ops):
        return None
    return d


class _Centred(torch.autograd.Function):
    """(x - mean(x)).to(D) in one pass after the mean's (the subtraction rounds as it
    stores), and a backward that only casts: the gradient reaching it is LayerNorm's, which
    sums to zero along a row, so the shift's own backward (g - mean(g)) would change it by
    rounding noise alone, in three more passes over x."""

    @staticmethod
    def forward(ctx, x, d):
        ctx.x_dtype = x.dtype
        xf = x.float()
        out = torch.empty(x.shape, dtype=d, device=x.device)
        return torch.sub(xf, xf.mean(dim=-1, keepdim=True), out=out)

    @staticmethod
    def backward(ctx, g):
        return g.to(ctx.x_dtype), None


def _centred(x, d):
    if torch.compiler.is_compiling():  # traced: the plain ops, which the compiler fuses
        xf = x.float()
        return (xf - xf.mean(dim=-1, keepdim=True)).to(d)
    return _Centred.apply(x, d)


def _takes_the_mix(x, ln_weight, ln_bias, d):
    """Whether the library takes x and the LayerNorm's parameters in float32 beside a
    linear in D on x's device (ops.mixed_ok): then only the linear's operands are cast."""
    if not mixed_ok(x.dtype, d, x.device.type):
        return False
    return all(t is None or t.dtype == torch.float32 for t in (ln_weight, ln_bias))


def cast_operands(x, ln_weight, ln_bias, linear_weight, linear_bias, d):
    """The five operands for the call under autocast (module docstring): the linear's in D,
    and x and the LayerNorm's parameters as they are where the library takes that mix,
    else in D too, x centred in float32 first."""
    with torch.autocast(x.device.type, enabled=False):
        linear = [None if t is None else t.to(d) for t in (linear_weight, linear_bias)]
        if _takes_the_mix(x, ln_weight, ln_bias, d):
            return [x, ln_weight, ln_bias] + linear
        if x.dtype != d:
            x = _centred(x, d)
        return [x] + [None if t is None else t.to(d) for t in (ln_weight, ln_bias)] + linear
