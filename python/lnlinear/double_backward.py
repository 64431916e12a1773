"""Gradients that can themselves be differentiated (backward with create_graph=True).

The library's backward kernels have no derivative of their own: gradients they return are
constants to autograd. A caller who differentiates a gradient (a gradient penalty, a
Hessian-vector product, second-order meta-learning) would then silently lose every term
through this layer. So when autograd runs the backward with create_graph=True (grad mode is
on inside a backward exactly then), the gradients are formed instead from PyTorch's own
differentiable ops on the saved inputs: LayerNorm and the linear are recomputed and
differentiated by autograd, which records that backward as a graph. This costs an eager
forward and backward; first-order training never comes here.

The same way serves a backward whose grad_output carries a forward-mode tangent
(forward-over-reverse: the tangent of a gradient), which PyTorch's ops propagate and the
library's would drop.

The C++ autograd node (python/csrc/lnlinear_torch.cpp) does the same with the same ops.
"""

import types

import torch
import torch.nn.functional as F
from torch.autograd import forward_ad as _fwad

__all__ = ["differentiable_gradients", "has_tangent"]

# forward_ad's innermost open dual level (-1: none), read on every call (~15 ns); a torch
# without the attribute is asked the slow way on every call.
_fwad_level = _fwad if hasattr(_fwad, "_current_level") else types.SimpleNamespace(_current_level=0)


def has_tangent(*tensors):
    """Whether forward-mode AD is on (a dual_level is open) and a tensor among these carries
    a tangent. The library's calls would drop it: such calls run on PyTorch's ops."""
    if _fwad_level._current_level < 0:
        return False
    return any(isinstance(t, torch.Tensor) and _fwad.unpack_dual(t).tangent is not None
               for t in tensors)


def differentiable_gradients(dy, x, ln_weight, ln_bias, linear_weight, eps, needs):
    """The gradients of y = LayerNorm(x) @ linear_weight^T + b with respect to x, ln_weight,
    ln_bias, linear_weight and the bias (None where needs[i] is false), for grad_output dy,
    as differentiable functions of those inputs and of dy.

    x is [M, K]; dy [M, N]. The LayerNorm runs in x's dtype and its output is cast to
    linear_weight's, as the library's mixed call does (the same cast is a no-op otherwise).
    """
    graph = torch.is_grad_enabled()  # create_graph; else a tangent to carry, no graph to keep
    with torch.enable_grad(), torch.autocast(x.device.type, enabled=False):
        ln = F.layer_norm(x, (x.shape[-1],), ln_weight, ln_bias, eps)
        y = F.linear(ln.to(linear_weight.dtype), linear_weight)
        inputs = (x, ln_weight, ln_bias, linear_weight)
        wrt = [t for t, n in zip(inputs, needs[:4]) if n]
        got = iter(torch.autograd.grad(y, wrt, dy, create_graph=graph, allow_unused=True)
                   if wrt else ())
        grads = []
        for t, n in zip(inputs, needs[:4]):
            g = next(got) if n else None
            # allow_unused: an input y does not depend on (none here, but cheap to be exact)
            grads.append(torch.zeros_like(t) if n and g is None else g)
        grads.append(dy.sum(0) if needs[4] else None)
    return tuple(grads)
