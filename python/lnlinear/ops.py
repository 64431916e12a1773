"""The two custom ops, lnlinear::forward and lnlinear::backward, and their autograd.

Both ops take x as a contiguous [M, K] matrix; layernorm_linear (functional.py) does the
flattening and the user-facing argument checks. Torch allocates every output, the
saved statistics and the workspace, so the caching allocator and stream semantics of
PyTorch apply; the C library only ever sees raw pointers.

What the forward keeps for the backward: x, the parameters, mean and rstd (and ln_out with
recompute=False). Where the library's backward would use the forward's output
(lnl_backward_wants_y: the CUDA bf16/f16 FUSED backward on Hopper forms dx in the epilogue of its
dy @ W GEMM from y - linear_bias), and dx and dlinear_weight are both wanted, it also keeps
y (the output tensor itself, no copy) and linear_bias. As with any autograd function that
saves its output, modifying that y in place before the backward then raises autograd's
"modified by an inplace operation" error.
"""

import contextlib
import ctypes
import threading
from typing import List, Optional, Tuple

import torch
from torch import Tensor

from . import _clib, _cpp
from .double_backward import differentiable_gradients, has_tangent

__all__ = ["STRATEGIES", "SUPPORTED_DTYPES", "check_operands", "cpp_autograd_available"]

STRATEGIES = {
    "auto": _clib.STRATEGY_AUTO,
    "fused": _clib.STRATEGY_FUSED,
    "unfused": _clib.STRATEGY_UNFUSED,
    "reference": _clib.STRATEGY_REFERENCE,
}

_LNL_DTYPE = {
    torch.float32: _clib.DTYPE_F32,
    torch.float64: _clib.DTYPE_F64,
    torch.bfloat16: _clib.DTYPE_BF16,
    torch.float16: _clib.DTYPE_F16,
}

# What the issue promises per device. Kept as a plain table (not asked of lnl_check at
# call time) so torch.compile can trace the checks without a graph break. bfloat16 and
# float16 on the CPU are 16-bit storage: the library accumulates in float32 (mean and rstd
# stay float32, _acc_dtype) and returns y and the gradients in the 16-bit dtype.
SUPPORTED_DTYPES = {
    "cpu": (torch.float32, torch.float64, torch.bfloat16, torch.float16),
    "cuda": (torch.float32, torch.bfloat16, torch.float16),
}
# The one mix of dtypes the library takes (ln_float32 in lnlinear.h; CPU and CUDA):
# x, ln_weight and ln_bias in float32 with linear_weight and linear_bias in one of these,
# torch.autocast's split (LayerNorm in float32, the Linear in the 16-bit dtype). y, ln_out
# and dy are then in the linear's dtype, and each gradient in its input's.
MIXED_LINEAR_DTYPES = {"cpu": (torch.bfloat16, torch.float16), "cuda": (torch.bfloat16, torch.float16)}


def mixed_ok(x_dtype, linear_dtype, device_type):
    """Whether x's and linear_weight's dtypes, different, are the mix the library takes."""
    return x_dtype == torch.float32 and linear_dtype in MIXED_LINEAR_DTYPES.get(device_type, ())


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _operands_ok(x, ln_weight, ln_bias, linear_weight, linear_bias):
    """The happy path of check_operands in few attribute reads: it runs on every call,
    twice (functional and op), and dominates the Python overhead at small sizes."""
    if not (isinstance(x, Tensor) and isinstance(linear_weight, Tensor)):
        return False
    dev, dt, xs, ws = x.device, x.dtype, x.shape, linear_weight.shape
    if (len(xs) < 1 or len(ws) != 2 or dt not in SUPPORTED_DTYPES.get(dev.type, ())
            or linear_weight.dtype != dt or linear_weight.device != dev):
        return False
    K, N = xs[-1], ws[0]
    if K < 1 or N < 1 or ws[1] != K:
        return False
    for t, n in ((ln_weight, K), (ln_bias, K), (linear_bias, N)):
        if t is None:
            continue
        # len and [0] rather than t.shape == (n,): torch.Size's == against a tuple goes
        # through symbolic-shape code (~3 us a comparison on a CPU)
        if not isinstance(t, Tensor):
            return False
        ts = t.shape
        if len(ts) != 1 or ts[0] != n or t.dtype != dt or t.device != dev:
            return False
    return True


def check_operands(x, ln_weight, ln_bias, linear_weight, linear_bias):
    """Raise TypeError/ValueError naming the argument for anything the C library could
    not be given safely (it trusts shapes: a wrong one would read out of bounds)."""
    if _operands_ok(x, ln_weight, ln_bias, linear_weight, linear_bias):
        return
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if not isinstance(linear_weight, Tensor):
        raise TypeError(f"linear_weight must be a torch.Tensor, got {type(linear_weight).__name__}")
    if x.dim() < 1:
        raise ValueError("x must have at least one dimension (its last one is in_features)")
    dev = x.device
    supported = SUPPORTED_DTYPES.get(dev.type)
    if supported is None:
        raise ValueError(f"x is on device {dev}; lnlinear supports cpu and cuda tensors")
    if x.dtype not in supported:
        names = ", ".join(_dtype_name(d) for d in supported)
        raise TypeError(f"x has dtype {_dtype_name(x.dtype)}, not supported on {dev.type} "
                        f"(supported: {names})")
    K = x.shape[-1]
    if K < 1:
        raise ValueError("x.shape[-1] (in_features) must be >= 1, got 0")
    if linear_weight.dim() != 2:
        raise ValueError(f"linear_weight must be 2-D [out_features, in_features], got shape "
                         f"{list(linear_weight.shape)}")
    N = linear_weight.shape[0]
    if N < 1:
        raise ValueError("linear_weight.shape[0] (out_features) must be >= 1, got 0")
    if linear_weight.shape[1] != K:
        raise ValueError(f"in_features mismatch: x.shape[-1] is {K} but linear_weight has shape "
                         f"{list(linear_weight.shape)} (expected [out_features, {K}])")
    for name, t, n in (("ln_weight", ln_weight, K), ("ln_bias", ln_bias, K),
                       ("linear_weight", linear_weight, None), ("linear_bias", linear_bias, N)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor or None, got {type(t).__name__}")
        if n is not None and (t.dim() != 1 or t.shape[0] != n):
            raise ValueError(f"{name} must have shape [{n}], got {list(t.shape)}")
        if t.device != dev:
            raise ValueError(f"{name} is on {t.device} but x is on {dev}")
    # one dtype for all, or the mix (MIXED_LINEAR_DTYPES): the LayerNorm's side in x's,
    # the linear's side in linear_weight's
    mixed = mixed_ok(x.dtype, linear_weight.dtype, dev.type)
    for name, t in (("ln_weight", ln_weight), ("ln_bias", ln_bias), ("linear_weight", linear_weight),
                    ("linear_bias", linear_bias)):
        if t is None:
            continue
        linear_side = name.startswith("linear")
        if mixed and linear_side:
            if t.dtype != linear_weight.dtype:
                raise TypeError(f"{name} has dtype {_dtype_name(t.dtype)} but linear_weight has "
                                f"dtype {_dtype_name(linear_weight.dtype)}")
        elif t.dtype != x.dtype:
            mix = (" (or, on the CPU, x, ln_weight and ln_bias in float32 with linear_weight "
                   "and linear_bias in bfloat16 or float16)" if linear_side else "")
            raise TypeError(f"{name} has dtype {_dtype_name(t.dtype)} but x has dtype "
                            f"{_dtype_name(x.dtype)}; all tensors must share one dtype{mix}")


def _ptr(t):
    return None if t is None else t.data_ptr()


def _contig(t):
    return None if t is None else t.contiguous()


def _acc_dtype(dtype):
    # mean/rstd are kept in the accumulation type, as F.layer_norm returns them: float32
    # for float32, bfloat16 and float16 on either device, float64 for float64.
    return torch.float64 if dtype == torch.float64 else torch.float32


# The current stream's handle: torch.cuda.current_stream() builds a Stream object
# (about 5 us of host time on the H200's host); the raw getter returns the handle
# alone (0.1 us). Older torch builds without it take the slow way.
_raw_stream_getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _raw_stream(index):
    if _raw_stream_getter is not None:
        return _raw_stream_getter(index)
    return torch.cuda.current_stream(index).cuda_stream


class _Call:
    """What every call of one problem needs from the library, built once: the lnl_problem,
    the two workspace sizes and lnl_backward_wants_y (queried when first needed). The C
    library only reads the struct, so one object serves any number of calls, from any
    thread."""

    __slots__ = ("p", "ws_bytes", "wants_y")

    def __init__(self, p):
        self.p = p
        self.ws_bytes = [None, None]  # forward, backward
        self.wants_y = None  # lnl_backward_wants_y, asked when first needed


# Keyed by everything lnl_problem holds. Building the ctypes struct and asking the
# library for the workspace size took ~8 us a call under cProfile (CPU, 16x8x16), and a
# training loop repeats the same few problems. What it saves on a whole step was below
# the noise of the machines measured (bench/python_step_profile.py, 2026-12-01). Cleared
# when it grows past _CALLS_MAX (a workload of ever-changing shapes then rebuilds).
_CALLS_MAX = 512
_calls = {}


def _call_for(x, N, eps, strategy, gd=None):
    """gd: the linear's dtype where it is not x's (the mix, MIXED_LINEAR_DTYPES)."""
    M, K = x.shape
    dt, dev = x.dtype, x.device
    if dev.type == "cuda":
        # The current stream's handle: the library launches on it.
        key = (M, K, N, eps, dt, strategy, dev.index, _raw_stream(dev.index), gd)
    else:
        # Follow torch's intra-op setting so torch.set_num_threads governs both.
        key = (M, K, N, eps, dt, strategy, -1, torch.get_num_threads(), gd)
    c = _calls.get(key)
    if c is not None:
        return c
    p = _clib.Problem()
    p.rows, p.in_features, p.out_features, p.eps = M, K, N, eps
    p.dtype = _LNL_DTYPE[dt if gd is None else gd]
    p.ln_float32 = gd is not None
    p.strategy = strategy
    if dev.type == "cuda":
        p.device = _clib.DEVICE_CUDA
        p.stream = key[7]
    else:
        p.device = _clib.DEVICE_CPU
        p.threads = key[7]
    if len(_calls) >= _CALLS_MAX:
        _calls.clear()
    c = _calls[key] = _Call(p)
    return c


def _problem(x, N, eps, strategy):
    """The lnl_problem of a call on x [M, K] with N outputs (cached; read-only)."""
    return _call_for(x, N, eps, strategy).p


def _mix(x, linear_weight):
    """linear_weight's dtype where it differs from x's (a mixed call), else None."""
    gd = linear_weight.dtype
    return None if gd == x.dtype else gd


def _keeps_y(x, N, eps, strategy, keep_ln_out, needs_input_grad, gd=None):
    """Whether the forward on x [M, K] keeps its output y (and linear_bias) for the backward:
    only where the library's backward would use it (lnl_backward_wants_y) and the backward
    computes both dx and dlinear_weight without a saved ln_out, which is when the library
    takes the dx epilogue. Elsewhere y stays unsaved and the forward keeps what it always
    kept (mean and rstd, plus ln_out with recompute=False). Symbolic sizes (torch.compile
    with dynamic shapes) answer False rather than specialize the graph on them: y is only
    ever an optimization, the backward is right without it."""
    if keep_ln_out or not (needs_input_grad[0] and needs_input_grad[3]):
        return False
    M, K = x.shape
    if type(M) is not int or type(K) is not int or type(N) is not int:
        return False
    c = _call_for(x, N, eps, strategy, gd)
    w = c.wants_y
    if w is None:
        w = c.wants_y = _clib.lib.lnl_backward_wants_y(ctypes.byref(c.p)) == 1
    return w


class _DeviceGuard:
    """Makes GPU `index` current for the call and restores `prev` after it (the library
    works on the current device). Built only when the two differ (_device_guard)."""

    __slots__ = ("index", "prev")

    def __init__(self, index, prev):
        self.index, self.prev = index, prev

    def __enter__(self):
        torch.cuda.set_device(self.index)

    def __exit__(self, *exc):
        torch.cuda.set_device(self.prev)


_NO_GUARD = contextlib.nullcontext()


def _device_guard(device):
    """A _DeviceGuard when device is a GPU other than the current one, else a shared no-op."""
    if device.type == "cuda":
        cur = torch.cuda.current_device()
        if device.index != cur:
            return _DeviceGuard(device.index, cur)
    return _NO_GUARD


# Workspaces of small CUDA calls are kept per (device, stream) and reused, as PyTorch
# keeps its cuBLAS workspace per handle and stream: every call on one stream is
# ordered after the previous one there, so the next call cannot overwrite a
# workspace that queued work still reads. Allocating it each time cost a caching-
# allocator round trip (~2 us) on every call, a tenth of a small forward's host time.
# Bigger workspaces (they hold M x K activations) go back to the allocator after each
# call, so the cache never pins more than _WS_CACHE_MAX bytes per stream. Not while a
# CUDA graph is being captured: a replay may run beside later eager calls on that
# stream, so a captured call allocates its own.
_WS_CACHE_MAX = 64 << 20
_ws_cache = {}
# CPU workspaces are kept per calling thread (a thread runs one library call at a time,
# and the library reads nothing from a workspace that an earlier call wrote). The CPU
# allocator hands large blocks back to the system, so a fresh workspace is fresh pages,
# each faulted in when first written: a bf16 1024x4096x4096 training step wrote ~84 MB
# of float partial sums to new pages, 331 ms a step against 282 ms with the workspace
# kept (bench/cpu_step_faults.py, 2026-12-05). Up to _CPU_WS_CACHE_MAX a thread.
_CPU_WS_CACHE_MAX = 256 << 20
_cpu_ws = threading.local()


def _workspace(c, which, device):
    """The workspace of call c's forward (which=0) or backward (1): (tensor or None, bytes)."""
    nbytes = c.ws_bytes[which]
    if nbytes is None:
        size_fn = (_clib.lib.lnl_forward_workspace_size, _clib.lib.lnl_backward_workspace_size)[which]
        nbytes = c.ws_bytes[which] = size_fn(ctypes.byref(c.p))
    if nbytes == 0:
        return None, 0
    if device.type == "cpu" and nbytes <= _CPU_WS_CACHE_MAX:
        ws = getattr(_cpu_ws, "t", None)
        if ws is None or ws.numel() < nbytes:
            ws = _cpu_ws.t = torch.empty(nbytes, dtype=torch.uint8, device=device)
        return ws, nbytes
    if device.type != "cuda" or nbytes > _WS_CACHE_MAX or torch.cuda.is_current_stream_capturing():
        return torch.empty(nbytes, dtype=torch.uint8, device=device), nbytes
    key = (device.index, c.p.stream or 0)  # ctypes reads a NULL handle back as None
    ws = _ws_cache.get(key)
    if ws is None or ws.numel() < nbytes:
        ws = _ws_cache[key] = torch.empty(nbytes, dtype=torch.uint8, device=device)
    return ws, nbytes


def forward_body(x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out, strategy,
                 check=True, lean=False, stats=True):
    """The forward op's work, shared by the custom op and the eager fast path (which has
    checked the operands already and passes check=False). lean=True (the fast path; a
    custom op must return a tensor) returns ln_out as None when it is not kept.
    stats=False (a forward nothing will differentiate) asks the library for y alone:
    mean and rstd come back as None, and two allocations are saved."""
    if check:
        if x.dim() != 2:
            raise ValueError(f"lnlinear::forward takes x as [M, K], got shape {list(x.shape)}")
        check_operands(x, ln_weight, ln_bias, linear_weight, linear_bias)
    x, ln_weight, ln_bias = x.contiguous(), _contig(ln_weight), _contig(ln_bias)
    linear_weight, linear_bias = linear_weight.contiguous(), _contig(linear_bias)
    M, K = x.shape
    N = linear_weight.shape[0]
    dev, gd = x.device, _mix(x, linear_weight)
    dt = linear_weight.dtype  # y's and ln_out's (x's but in a mixed call)
    acc = _acc_dtype(dt)
    # Sizes as separate arguments: torch.empty parses them ~1 us faster than a tuple.
    y = torch.empty(M, N, dtype=dt, device=dev)
    if stats:
        mean = torch.empty(M, dtype=acc, device=dev)
        rstd = torch.empty(M, dtype=acc, device=dev)
    else:
        mean = rstd = None
    if lean and not keep_ln_out:
        ln_out = None
    else:
        ln_out = (torch.empty(M, K, dtype=dt, device=dev) if keep_ln_out
                  else torch.empty(0, dtype=dt, device=dev))
    if M == 0:
        return y, mean, rstd, ln_out
    c = _call_for(x, N, eps, strategy, gd)
    with _device_guard(dev):
        ws, ws_bytes = _workspace(c, 0, dev)
        status = _clib.lib.lnl_forward(
            ctypes.byref(c.p), x.data_ptr(), _ptr(ln_weight), _ptr(ln_bias),
            linear_weight.data_ptr(), _ptr(linear_bias), y.data_ptr(), _ptr(mean),
            _ptr(rstd), ln_out.data_ptr() if keep_ln_out else None, _ptr(ws), ws_bytes)
    _clib.check(status, "lnl_forward")
    return y, mean, rstd, ln_out


@torch.library.custom_op("lnlinear::forward", mutates_args=())
def _forward(x: Tensor, ln_weight: Optional[Tensor], ln_bias: Optional[Tensor],
             linear_weight: Tensor, linear_bias: Optional[Tensor], eps: float,
             keep_ln_out: bool, strategy: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """y [M,N], mean [M], rstd [M], ln_out ([M,K] when keep_ln_out, else [0])."""
    if has_tangent(x, ln_weight, ln_bias, linear_weight, linear_bias):
        raise NotImplementedError(
            "lnlinear::forward has no forward-mode derivative: call lnlinear.layernorm_linear, "
            "which runs a call with dual operands in PyTorch's ops")
    return forward_body(x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out,
                        strategy)


@_forward.register_fake
def _forward_fake(x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out, strategy):
    M, K = x.shape
    N = linear_weight.shape[0]
    gd = linear_weight.dtype  # y's and ln_out's
    acc = _acc_dtype(gd)
    return (x.new_empty((M, N), dtype=gd), x.new_empty((M,), dtype=acc),
            x.new_empty((M,), dtype=acc), x.new_empty((M, K) if keep_ln_out else (0,), dtype=gd))


def _check_backward_operands(dy, x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out,
                             needs, y=None, linear_bias=None):
    if len(needs) != 5:
        raise ValueError(f"needs must hold 5 flags, got {len(needs)}")
    if x.dim() != 2:
        raise ValueError(f"lnlinear::backward takes x as [M, K], got shape {list(x.shape)}")
    check_operands(x, ln_weight, ln_bias, linear_weight, None)
    M, K = x.shape
    N = linear_weight.shape[0]
    gd = linear_weight.dtype  # dy's, ln_out's, y's (x's but in a mixed call)
    if tuple(dy.shape) != (M, N) or dy.dtype != gd or dy.device != x.device:
        raise ValueError(f"dy must be [{M}, {N}] {_dtype_name(gd)} on {x.device}, got "
                         f"{list(dy.shape)} {_dtype_name(dy.dtype)} on {dy.device}")
    if (mean is None) != (rstd is None):
        raise ValueError("mean and rstd are given together or not at all")
    acc = _acc_dtype(gd)
    for name, t, shape, dt in (("mean", mean, (M,), acc), ("rstd", rstd, (M,), acc),
                               ("ln_out", ln_out, (M, K), gd), ("y", y, (M, N), gd),
                               ("linear_bias", linear_bias, (N,), gd)):
        if t is not None and (tuple(t.shape) != shape or t.dtype != dt or t.device != x.device):
            raise ValueError(f"{name} must be {list(shape)} {_dtype_name(dt)} on {x.device}, "
                             f"got {list(t.shape)} {_dtype_name(t.dtype)} on {t.device}")
    for name, flag, param in (("ln_weight", needs[1], ln_weight), ("ln_bias", needs[2], ln_bias)):
        if flag and param is None:
            raise ValueError(f"gradient of {name} asked for, but {name} is None")


def backward_body(dy, x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out, eps, strategy,
                  needs, y=None, linear_bias=None, check=True):
    """The backward op's work, shared by the custom op and the eager fast path, which
    passes check=False: its operands are its own forward's, already checked. y and
    linear_bias (the forward's output and bias, or None) go to lnl_backward_ex, which uses
    them only where lnl_backward_wants_y says so (_keeps_y)."""
    if check:
        _check_backward_operands(dy, x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out,
                                 needs, y, linear_bias)
    M, K = x.shape
    N = linear_weight.shape[0]
    dy, x, ln_weight, ln_bias = dy.contiguous(), x.contiguous(), _contig(ln_weight), _contig(ln_bias)
    linear_weight, mean, rstd, ln_out = (linear_weight.contiguous(), _contig(mean),
                                         _contig(rstd), _contig(ln_out))
    y, linear_bias = _contig(y), _contig(linear_bias)

    # each gradient in its input's dtype: x's side and the linear's (the same but in a
    # mixed call)
    dt, gd, dev = x.dtype, linear_weight.dtype, x.device

    def out(flag, dtype, *shape):
        return (torch.empty(*shape, dtype=dtype, device=dev) if flag
                else torch.empty(0, dtype=dtype, device=dev))

    dx = out(needs[0], dt, M, K)
    dlnw = out(needs[1], dt, K)
    dlnb = out(needs[2], dt, K)
    dw = out(needs[3], gd, N, K)
    db = out(needs[4], gd, N)
    if M == 0:
        # Nothing flowed in: the parameter gradients of an empty batch are zero.
        for t in (dlnw, dlnb, dw, db):
            t.zero_()
        return dx, dlnw, dlnb, dw, db
    c = _call_for(x, N, eps, strategy, _mix(x, linear_weight))
    with _device_guard(dev):
        ws, ws_bytes = _workspace(c, 1, dev)
        args = _clib.BackwardArgs(
            dy.data_ptr(), x.data_ptr(), _ptr(ln_weight), _ptr(ln_bias),
            linear_weight.data_ptr(), _ptr(mean), _ptr(rstd), _ptr(ln_out),
            dx.data_ptr() if needs[0] else None, dlnw.data_ptr() if needs[1] else None,
            dlnb.data_ptr() if needs[2] else None, dw.data_ptr() if needs[3] else None,
            db.data_ptr() if needs[4] else None, _ptr(ws), ws_bytes, _ptr(y),
            _ptr(linear_bias))
        status = _clib.lib.lnl_backward_ex(ctypes.byref(c.p), ctypes.byref(args))
    _clib.check(status, "lnl_backward_ex")
    return dx, dlnw, dlnb, dw, db


@torch.library.custom_op("lnlinear::backward", mutates_args=())
def _backward(dy: Tensor, x: Tensor, ln_weight: Optional[Tensor], ln_bias: Optional[Tensor],
              linear_weight: Tensor, mean: Optional[Tensor], rstd: Optional[Tensor],
              ln_out: Optional[Tensor], eps: float, strategy: int,
              needs: List[bool], y: Optional[Tensor] = None,
              linear_bias: Optional[Tensor] = None) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(dx, dln_weight, dln_bias, dlinear_weight, dlinear_bias); a gradient not asked
    for in needs (5 flags, same order) comes back as an empty [0] tensor. y and
    linear_bias: the forward's output and bias, where it kept them (_keeps_y)."""
    if has_tangent(dy, x, ln_weight, ln_bias, linear_weight):
        raise NotImplementedError(
            "lnlinear::backward has no forward-mode derivative (the layer's own backward "
            "runs a grad_output with a tangent in PyTorch's ops)")
    return backward_body(dy, x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out, eps,
                         strategy, needs, y, linear_bias)


@_backward.register_fake
def _backward_fake(dy, x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out, eps,
                   strategy, needs, y=None, linear_bias=None):
    M, K = x.shape
    N = linear_weight.shape[0]
    shapes = ((M, K), (K,), (K,), (N, K), (N,))
    dtypes = (x.dtype,) * 3 + (linear_weight.dtype,) * 2
    return tuple(x.new_empty(s if f else (0,), dtype=d) for s, f, d in zip(shapes, needs, dtypes))


def _setup_context(ctx, inputs, output):
    x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out, strategy = inputs
    y, mean, rstd, ln_out = output
    ctx.mark_non_differentiable(mean, rstd, ln_out)
    # recompute=True keeps only x, mean, rstd (the parameters are alive anyway);
    # recompute=False also keeps ln_out so the backward skips rebuilding it. y (the output
    # itself, no copy) and linear_bias only where the backward's dx epilogue will read
    # them (_keeps_y); an in-place change of y before the backward is then autograd's
    # version-counter error, as for any saved output.
    keep_y = _keeps_y(x, linear_weight.shape[0], eps, strategy, keep_ln_out,
                      ctx.needs_input_grad, _mix(x, linear_weight))
    ctx.save_for_backward(x, ln_weight, ln_bias, linear_weight, mean, rstd,
                          ln_out if keep_ln_out else None, y if keep_y else None,
                          linear_bias if keep_y else None)
    ctx.eps = eps
    ctx.strategy = strategy


def _gradients(ctx, dy, backward_fn):
    """The 8 input gradients of forward (None for eps, keep_ln_out, strategy and for
    inputs that need none) from the tensors ctx saved, computed by backward_fn (the
    backward op, or its body on the eager fast path)."""
    needs = [bool(n) for n in ctx.needs_input_grad[:5]]
    if not any(needs):
        return (None,) * 8
    x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out, y, linear_bias = ctx.saved_tensors
    if torch.is_grad_enabled() or has_tangent(dy):
        # backward(create_graph=True), or a grad_output with a forward-mode tangent:
        # gradients autograd can differentiate again (and tangents carried), from PyTorch's
        # own ops (double_backward.py); the library's would be constants to it
        grads = differentiable_gradients(dy, x, ln_weight, ln_bias, linear_weight, ctx.eps, needs)
    else:
        grads = backward_fn(dy.contiguous(), x, ln_weight, ln_bias, linear_weight, mean, rstd,
                            ln_out, ctx.eps, ctx.strategy, needs, y, linear_bias)
    return tuple(g if n else None for g, n in zip(grads, needs)) + (None, None, None)


def _autograd_backward(ctx, dy, _dmean, _drstd, _dln_out):
    return _gradients(ctx, dy, torch.ops.lnlinear.backward)


_forward.register_autograd(_autograd_backward, setup_context=_setup_context)


# ---- the eager fast path ----
# Outside torch.compile, going through the dispatcher costs more than the whole C call
# at small sizes (custom_op's argument normalization, redispatch and its own
# autograd.Function: ~150 us of ~180 us per training forward at M=16, K=8, N=16 on a
# CPU). Plain tensors in plain eager mode therefore take this autograd.Function, which
# runs the same bodies with the same saved tensors; anything else (compiling, export,
# functorch transforms, dispatch modes such as FakeTensorMode, tensor subclasses) takes
# the custom op, which those systems understand. tests/python check both paths agree
# bitwise.
_PLAIN = (Tensor, torch.nn.Parameter)
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", None)
_dispatch_depth = getattr(torch._C, "_len_torch_dispatch_stack", None)


def eager_fast_path_ok(*tensors):
    if _functorch_active is None or _dispatch_depth is None:
        return False
    if torch.compiler.is_compiling() or _functorch_active() or _dispatch_depth():
        return False
    return all(t is None or type(t) in _PLAIN for t in tensors)


def cpp_autograd_available(device="cpu"):
    """Whether plain eager calls on `device` ("cpu" or "cuda") take the C++ autograd node
    (lnlinear_cpp::layernorm_linear, python/csrc) rather than LayerNormLinearFunction below;
    lnlinear._cpp.reason says why not where it did not load, and
    lnlinear._cpp.set_devices switches in one process."""
    return torch.device(device).type in _cpp.serves


class LayerNormLinearFunction(torch.autograd.Function):
    """y = LayerNormLinear(...) on the eager fast path; inputs already checked."""

    @staticmethod
    def forward(ctx, x, ln_weight, ln_bias, linear_weight, linear_bias, eps, keep_ln_out,
                strategy):
        y, mean, rstd, ln_out = forward_body(x, ln_weight, ln_bias, linear_weight, linear_bias,
                                             eps, keep_ln_out, strategy, check=False, lean=True)
        # The same tensors as the custom op's setup_context keeps (y itself, not a copy,
        # where _keeps_y says the backward reads it).
        keep_y = _keeps_y(x, linear_weight.shape[0], eps, strategy, keep_ln_out,
                          ctx.needs_input_grad, _mix(x, linear_weight))
        ctx.save_for_backward(x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out,
                              y if keep_y else None, linear_bias if keep_y else None)
        ctx.eps = eps
        ctx.strategy = strategy
        return y

    @staticmethod
    def backward(ctx, dy):
        return _gradients(ctx, dy, _backward_body_unchecked)


def _backward_body_unchecked(*args):
    return backward_body(*args, check=False)
