"""lnlinear: LayerNorm followed by Linear, forward and backward, as one PyTorch op.

    import lnlinear
    y = lnlinear.layernorm_linear(x, ln_weight, ln_bias, linear_weight, linear_bias)
    layer = lnlinear.LayerNormLinear(768, 3072)
    lnlinear.fuse_(model, [(block.ln_2, block.mlp.c_fc) for block in model.transformer.h])
"""

import torch  # noqa: F401  (before the library: the custom ops register into torch)

from ._clib import (LnlDeviceError, LnlError, LnlInvalidArgument, LnlOutOfMemory,
                    LnlUnsupported, LnlWorkspaceTooSmall, library_path)
from ._clib import version as library_version
from . import ops  # noqa: F401  (registers torch.ops.lnlinear.forward / .backward)
from .functional import layernorm_linear
from .fuse import FusionError, fuse_
from .module import LayerNormLinear

__version__ = "0.2.0"

__all__ = [
    "layernorm_linear", "LayerNormLinear", "fuse_", "FusionError", "LnlError",
    "LnlInvalidArgument", "LnlUnsupported", "LnlOutOfMemory", "LnlWorkspaceTooSmall",
    "LnlDeviceError", "library_path", "library_version",
]
