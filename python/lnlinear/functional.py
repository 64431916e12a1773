"""layernorm_linear: the one public function; everything else builds on it."""

import math

import torch
import torch.nn.functional as F

from . import _cpp
from . import autocast as _autocast
from .double_backward import _fwad_level, has_tangent
from .ops import (STRATEGIES, LayerNormLinearFunction, check_operands, eager_fast_path_ok,
                  forward_body)

# Resolved once: torch.ops attribute lookup and overload resolution cost per call.
_forward_op = torch.ops.lnlinear.forward.default
_autocast_on = _autocast._any_enabled


__all__ = ["layernorm_linear"]


def _rows(x, nd):
    """x as a contiguous [M, K] matrix (nd = x.dim() >= 1)."""
    if nd == 2:  # the common case skips two shape ops (~3 us at tiny sizes)
        return x if x.is_contiguous() else x.contiguous()
    x2 = x.reshape(-1, x.shape[-1])
    return x2 if x2.is_contiguous() else x2.contiguous()


def layernorm_linear(x, ln_weight, ln_bias, linear_weight, linear_bias=None, eps=1e-5,
                     recompute=True, *, strategy="auto"):
    """``F.linear(F.layer_norm(x, (K,), ln_weight, ln_bias, eps), linear_weight, linear_bias)``
    computed by liblnlinear, with gradients for exactly the inputs that require them.

    x: [..., K] (any strides; copied to contiguous memory when needed).
    ln_weight, ln_bias: [K] or None (ones / zeros). linear_weight: [N, K] (nn.Linear's
    layout). linear_bias: [N] or None. All tensors share x's device and dtype:
    float32/float64/bfloat16/float16 on CPU (bfloat16 and float16 stored in 16 bits,
    accumulated in float32), float32/bfloat16/float16 on CUDA; y and the gradients come back
    in that dtype (mean and rstd, kept for the backward, in float32 but for float64).
    One mix is taken on the CPU: x, ln_weight and ln_bias in float32 with linear_weight and
    linear_bias in bfloat16 or float16 (LayerNorm in float32, the Linear in 16 bits); y
    then comes back in the linear's dtype and each gradient in its input's.
    Under torch.autocast (bfloat16 or float16) float32 operands go to its dtype, as for
    F.linear (autocast.py): on the CPU the linear's alone (the mix above), on CUDA all of
    them, x centred in float32 first; y comes back in autocast's dtype, the gradients in
    their inputs' dtypes.
    recompute: True saves x, mean and rstd for the backward, which rebuilds the
    normalized activation; False also saves it (ln_out, M x K) and skips that work.
    Where the library's backward reads the forward's output (lnl_backward_wants_y: on CUDA,
    the bf16/f16 FUSED backward on Hopper, when both x and linear_weight need gradients and
    recompute=True), the returned y itself (no copy) is saved too; modifying it in place
    before the backward then raises autograd's "modified by an inplace operation" error,
    as for any function that saves its output. Clone y first to change it in place.
    strategy: "auto" (default), "fused", "unfused" or "reference" (CPU only, any dtype),
    for tests and benchmarks. Returns y of shape [..., N].
    Higher-order and forward-mode derivatives, which the library does not form, come from
    PyTorch's own ops: a backward with create_graph=True (double_backward.py), and a call
    with a forward-mode dual operand (torch.autograd.forward_ad).
    """
    if _autocast_on():
        # under torch.autocast: the operands in autocast's dtype (the linear's alone where
        # the library takes the mix, else all, x centred first; autocast.py); then on as
        # for any call with those dtypes
        d = _autocast.target_dtype(x, ln_weight, ln_bias, linear_weight, linear_bias)
        if d is not None:
            x, ln_weight, ln_bias, linear_weight, linear_bias = _autocast.cast_operands(
                x, ln_weight, ln_bias, linear_weight, linear_bias, d)
    code = STRATEGIES.get(strategy) if isinstance(strategy, str) else None
    dual = _fwad_level._current_level >= 0 and has_tangent(x, ln_weight, ln_bias,
                                                             linear_weight, linear_bias)
    # The fast path: plain tensors in plain eager mode on a device the C++ op serves, every
    # other argument valid. The op checks the tensors itself, in C++, which is cheaper than
    # check_operands here (a training forward at 16,8,16 on a CPU 12.6-12.9 -> 10.1-10.2 us,
    # bench/python_overhead.py --paths, session 43); where it rejects them, check_operands
    # names the argument. Anything else takes the general path below, which checks in
    # Python first, in the order the error messages promise.
    if (_cpp.serves and not dual and code is not None and type(recompute) is bool
            and type(eps) is float
            and 0 < eps < math.inf
            and eager_fast_path_ok(x, ln_weight, ln_bias, linear_weight, linear_bias)
            and x.device.type in _cpp.serves):
        nd = x.dim()
        if nd == 2 or (nd >= 1 and x.shape[-1] >= 1):
            x2 = _rows(x, nd)
            try:
                y = _cpp.call(x2, ln_weight, ln_bias, linear_weight, linear_bias, eps,
                              not recompute, code)
            except _cpp.OperandsRejected:
                check_operands(x, ln_weight, ln_bias, linear_weight, linear_bias)
                raise  # the two checks disagree: a bug, reported with the op's message
            return y if nd == 2 else y.view(tuple(x.shape[:-1]) + (linear_weight.shape[0],))
    check_operands(x, ln_weight, ln_bias, linear_weight, linear_bias)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise TypeError(f"eps must be a float, got {type(eps).__name__}")
    # Comparisons rather than math.isfinite: dynamo traces them (eps may be symbolic).
    if not (0 < eps < math.inf):
        raise ValueError(f"eps must be positive and finite, got {eps}")
    if not isinstance(recompute, bool):
        raise TypeError(f"recompute must be a bool, got {type(recompute).__name__}")
    if code is None:
        raise ValueError(f"strategy must be one of {sorted(STRATEGIES)}, got {strategy!r}")
    x2 = _rows(x, x.dim())
    if dual:
        # forward-mode AD: the same computation in PyTorch's ops, which carry tangents (and
        # reverse-mode gradients); eager's speed and memory (LN(x) is kept)
        ln = F.layer_norm(x2, (x2.shape[-1],), ln_weight, ln_bias, eps)
        y = F.linear(ln.to(linear_weight.dtype), linear_weight, linear_bias)
    elif eager_fast_path_ok(x2, ln_weight, ln_bias, linear_weight, linear_bias):
        # both eager bodies make their operands contiguous themselves
        if x2.device.type in _cpp.serves:
            # One C++ call: it decides itself whether to build the autograd node (whose
            # backward then runs without Python) or to ask the library for y alone.
            y = _cpp.call(x2, ln_weight, ln_bias, linear_weight, linear_bias, float(eps),
                          not recompute, code)
        elif torch.is_grad_enabled() and (
                x2.requires_grad or linear_weight.requires_grad
                or (ln_weight is not None and ln_weight.requires_grad)
                or (ln_bias is not None and ln_bias.requires_grad)
                or (linear_bias is not None and linear_bias.requires_grad)):
            y = LayerNormLinearFunction.apply(x2, ln_weight, ln_bias, linear_weight, linear_bias,
                                              float(eps), not recompute, code)
        else:
            # Nothing to differentiate: no autograd node and nothing saved, so the library
            # is asked for y alone (no mean, rstd or ln_out: two or three allocations
            # fewer, and on CUDA an ln_out would force UNFUSED's order).
            y = forward_body(x2, ln_weight, ln_bias, linear_weight, linear_bias, float(eps),
                             False, code, check=False, lean=True, stats=False)[0]
    else:
        y = _forward_op(x2, ln_weight, ln_bias, linear_weight, linear_bias,
                        float(eps), not recompute, code)[0]
    return y if x.dim() == 2 else y.view(tuple(x.shape[:-1]) + (linear_weight.shape[0],))
