"""Loading the C++ autograd op (python/csrc/lnlinear_torch.cpp) and binding it to the
library _clib loaded, so both paths call one liblnlinear.

Where it is looked for: LNLINEAR_TORCH_OPS (a path; failing to load it is an error),
else liblnlinear_torch.so next to the loaded library (the package directory, or the
build directory LNLINEAR_LIBRARY points into; failing to load it is a warning and the
Python path serves). LNLINEAR_NO_CPP=1 never loads it (for A/B runs).

Which tensors take it: CPU and CUDA ones alike. Its CUDA side (the current stream, the
device guard, the workspace cache, the capture test through the driver) was gated behind a
variable until tests/gpu/run.sh had run the whole suite through it on the H200 (session 13,
docs/results/cuda/2026-12-01-session13/).
"""

import ctypes
import os
import warnings

import torch

from . import _clib

__all__ = ["available", "reason", "path", "layernorm_linear", "call", "serves", "set_enabled",
           "set_devices", "cached_workspaces", "bind", "OperandsRejected"]

_FILE = "liblnlinear_torch.so"

# The library functions the op calls, in the order lnlinear_cpp::bind takes them.
_BOUND = ("lnl_forward", "lnl_backward_ex", "lnl_forward_workspace_size",
          "lnl_backward_workspace_size", "lnl_last_error", "lnl_status_string",
          "lnl_backward_wants_y")

path = None          # the extension loaded, or None
reason = ""          # why it is not in use, when it is not
layernorm_linear = None  # the op's overload, resolved once (attribute lookups cost per call)
_op = None
# The device types whose plain eager calls functional.layernorm_linear sends here (empty:
# the Python path everywhere); a set, so the per-call test is one lookup.
serves = frozenset()
_ALL = frozenset(("cpu", "cuda"))


def _load():
    global path, reason, layernorm_linear, _op, serves
    if os.environ.get("LNLINEAR_NO_CPP", "") not in ("", "0"):
        reason = "LNLINEAR_NO_CPP is set"
        return
    explicit = os.environ.get("LNLINEAR_TORCH_OPS")
    candidate = explicit or os.path.join(os.path.dirname(_clib.library_path), _FILE)
    if not os.path.isfile(candidate):
        if explicit:
            raise ImportError(f"lnlinear: LNLINEAR_TORCH_OPS={explicit!r} is not a file")
        reason = f"{candidate} not found (built when CMake finds torch: LNL_BUILD_TORCH_OPS)"
        return
    try:
        torch.ops.load_library(candidate)
    except (OSError, RuntimeError) as e:
        # Typically built against another torch version (undefined symbols).
        if explicit:
            raise ImportError(f"lnlinear: cannot load {candidate}: {e}") from e
        reason = f"cannot load {candidate}: {e}"
        warnings.warn(f"lnlinear: {reason}; using the Python autograd path", RuntimeWarning)
        return
    _bind_addresses({})
    path = candidate
    layernorm_linear = torch.ops.lnlinear_cpp.layernorm_linear.default
    # The overload's builtin itself: one Python frame (OpOverload.__call__) fewer a call.
    _op = getattr(layernorm_linear, "_op", layernorm_linear)
    serves = _ALL


def _bind_addresses(overrides):
    torch.ops.lnlinear_cpp.bind(
        [overrides.get(name) or ctypes.cast(_clib.lib[name], ctypes.c_void_p).value
         for name in _BOUND])


def bind(overrides=None):
    """Bind the op again to the functions of the library _clib loaded, with overrides
    ({function name: address}) in place of some: for tests (a stand-in for
    lnl_backward_wants_y); bind() restores the library's own. The op forgets the answers
    (workspace sizes, lnl_backward_wants_y) it cached from the previous functions."""
    if not available():
        raise RuntimeError(f"lnlinear: the C++ autograd op is not available: {reason}")
    unknown = set(overrides or ()) - set(_BOUND)
    if unknown:
        raise ValueError(f"lnlinear: not functions the op calls: {sorted(unknown)}")
    _bind_addresses(overrides or {})


def available():
    return _op is not None


def cached_workspaces():
    """{(device index, stream handle): workspace address} of the op's CUDA workspace
    cache (the C++ twin of ops._ws_cache), for tests."""
    flat = torch.ops.lnlinear_cpp.cached_workspaces() if available() else []
    return {(flat[i], flat[i + 1]): flat[i + 2] for i in range(0, len(flat), 3)}


def set_devices(devices):
    """Route plain eager calls on these device types ("cpu", "cuda") through the C++ op
    and the others through the Python autograd.Function, in one process: for A/B tests
    and benchmarks. Returns the previous set, which restores it."""
    global serves
    devices = frozenset(devices)
    if not devices <= _ALL:
        raise ValueError(f"lnlinear: unknown device types {sorted(devices - _ALL)}")
    if devices and not available():
        raise RuntimeError(f"lnlinear: the C++ autograd op is not available: {reason}")
    previous, serves = serves, devices
    return previous


def set_enabled(flag):
    """set_devices of every device type (True) or of none (False). Returns the previous
    set, for set_devices."""
    return set_devices(_ALL if flag else ())


# The package's exception class of a status name, as _clib.check picks it.
_BY_NAME = {_clib.lib.lnl_status_string(s).decode(): exc
            for s, exc in _clib._STATUS_EXCEPTIONS.items()}


def _lnl_error(e):
    """The package's exception for torch's rendering of a failed lnl_forward (same text
    as _clib.check gives), or None when e is something else."""
    msg = str(e)
    start = msg.find("lnl_forward failed (")
    if start < 0:
        return None
    msg = msg[start:].splitlines()[0]
    name = msg[len("lnl_forward failed ("):].split(")", 1)[0]
    return _BY_NAME.get(name, _clib.LnlError)(msg)


class OperandsRejected(ValueError):
    """The op's own operand checks (operands_ok in lnlinear_torch.cpp) said no;
    ops.check_operands names the argument."""


_REJECTED = "lnlinear_cpp: operands rejected"


def call(x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out, strategy):
    """y from lnlinear_cpp::layernorm_linear (x [M, K]; eps, keep_ln_out and strategy
    checked by the caller). Operands the op rejects raise OperandsRejected; a failed
    lnl_forward raises the package's exception, as the Python path does. A failed
    lnl_backward_ex, raised in the autograd engine, keeps torch's class (ValueError for
    INVALID_ARGUMENT, NotImplementedError for UNSUPPORTED, RuntimeError else)."""
    try:
        return _op(x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out, strategy)
    except (RuntimeError, ValueError, NotImplementedError) as e:
        if isinstance(e, ValueError) and _REJECTED in str(e):
            raise OperandsRejected(str(e).splitlines()[0]) from None
        mapped = _lnl_error(e)
        if mapped is None:
            raise
        raise mapped from None


_load()
