"""LayerNormLinear: nn.LayerNorm followed by nn.Linear as one module."""

import math

import torch
from torch import nn

from .functional import layernorm_linear

__all__ = ["LayerNormLinear", "linear_weight_of"]


def linear_weight_of(linear):
    """(weight [out, in], bias or None, in_features, out_features) of a Linear-like module:
    nn.Linear, or Hugging Face's Conv1D (GPT-2), which stores its weight as [in, out]."""
    if isinstance(linear, nn.Linear):
        return linear.weight, linear.bias, linear.in_features, linear.out_features
    # Matched by name and layout, not by import, so transformers stays optional.
    if type(linear).__name__ == "Conv1D" and hasattr(linear, "nf"):
        w = linear.weight
        if w.dim() != 2 or w.shape[1] != linear.nf:
            raise ValueError(f"Conv1D weight has shape {list(w.shape)}; expected [in, {linear.nf}]")
        return w.t(), linear.bias, w.shape[0], w.shape[1]
    raise TypeError(f"linear must be an nn.Linear or a Hugging Face Conv1D, got "
                    f"{type(linear).__name__}")


class LayerNormLinear(nn.Module):
    """``Linear(LayerNorm(x))`` in one module, computed by liblnlinear.

    Parameters: ln_weight, ln_bias [in_features] (None when elementwise_affine=False),
    weight [out_features, in_features] and bias [out_features] (None when bias=False),
    initialized as nn.LayerNorm and nn.Linear initialize theirs. recompute: see
    lnlinear.layernorm_linear.
    """

    def __init__(self, in_features, out_features, bias=True, eps=1e-5, elementwise_affine=True,
                 recompute=True, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.out_features = out_features
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self.recompute = recompute
        if elementwise_affine:
            self.ln_weight = nn.Parameter(torch.empty(in_features, **factory))
            self.ln_bias = nn.Parameter(torch.empty(in_features, **factory))
        else:
            self.register_parameter("ln_weight", None)
            self.register_parameter("ln_bias", None)
        self.weight = nn.Parameter(torch.empty(out_features, in_features, **factory))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.ln_weight is not None:
            nn.init.ones_(self.ln_weight)
        if self.ln_bias is not None:
            nn.init.zeros_(self.ln_bias)
        # nn.Linear's documented scheme: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias,
        # the weight's bound expressed through kaiming_uniform_ with a = sqrt(5).
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return layernorm_linear(x, self.ln_weight, self.ln_bias, self.weight, self.bias,
                                self.eps, self.recompute)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, recompute={self.recompute}")

    @classmethod
    def from_modules(cls, layer_norm, linear, recompute=True):
        """A LayerNormLinear holding copies of layer_norm's and linear's parameters (same
        device, dtype and requires_grad). linear: nn.Linear or Hugging Face Conv1D.
        The copies are new Parameters: build optimizers after calling this."""
        if not isinstance(layer_norm, nn.LayerNorm):
            raise TypeError(f"layer_norm must be an nn.LayerNorm, got {type(layer_norm).__name__}")
        if len(layer_norm.normalized_shape) != 1:
            raise ValueError(f"layer_norm normalizes over {tuple(layer_norm.normalized_shape)}; "
                             "only a single last dimension is supported")
        w, b, in_features, out_features = linear_weight_of(linear)
        K = layer_norm.normalized_shape[0]
        if K != in_features:
            raise ValueError(f"layer_norm normalizes {K} features but linear takes "
                             f"{in_features} inputs")
        lnw, lnb = layer_norm.weight, layer_norm.bias
        for name, t in (("layer_norm.weight", lnw), ("layer_norm.bias", lnb),
                        ("linear.bias", b)):
            if t is not None and (t.dtype != w.dtype or t.device != w.device):
                raise TypeError(f"{name} is {t.dtype} on {t.device} but the linear weight is "
                                f"{w.dtype} on {w.device}")
        with torch.device("meta"):
            # Built on meta so the random init is skipped; real tensors are set below.
            m = cls(in_features, out_features, bias=b is not None, eps=layer_norm.eps,
                    elementwise_affine=lnw is not None, recompute=recompute, dtype=w.dtype)

        def copy(t):
            return nn.Parameter(t.detach().clone(memory_format=torch.contiguous_format),
                                requires_grad=t.requires_grad)

        m.weight = copy(w)
        m.bias = None if b is None else copy(b)
        if lnw is not None:
            m.ln_weight = copy(lnw)
            m.ln_bias = None if lnb is None else copy(lnb)
        elif lnb is not None:
            # nn.LayerNorm never has a bias without a weight; refuse rather than guess.
            raise ValueError("layer_norm has a bias but no weight")
        return m
