"""ctypes binding of include/lnlinear.h: loading the library, the problem struct,
and turning a failed status into a Python exception that carries lnl_last_error()."""

import ctypes
import glob
import os

__all__ = [
    "LnlError", "LnlInvalidArgument", "LnlUnsupported", "LnlOutOfMemory",
    "LnlWorkspaceTooSmall", "LnlDeviceError", "Problem", "BackwardArgs", "lib", "check",
    "DTYPE_F32", "DTYPE_F64", "DTYPE_BF16", "DTYPE_F16", "DEVICE_CPU", "DEVICE_CUDA",
    "STRATEGY_AUTO", "STRATEGY_FUSED", "STRATEGY_UNFUSED", "STRATEGY_REFERENCE",
    "library_path", "version",
]

# Enum values copied from the header; a mismatch would silently mean another dtype,
# so the test suite checks them against lnl_dtype_size().
DTYPE_F32, DTYPE_F64, DTYPE_BF16, DTYPE_F16 = 0, 1, 2, 3
DEVICE_CPU, DEVICE_CUDA = 0, 1
STRATEGY_AUTO, STRATEGY_FUSED, STRATEGY_UNFUSED, STRATEGY_REFERENCE = 0, 1, 2, 3
STATUS_SUCCESS = 0


class LnlError(RuntimeError):
    """A call into liblnlinear failed; the message is the library's own."""


class LnlInvalidArgument(LnlError, ValueError):
    pass


class LnlUnsupported(LnlError, NotImplementedError):
    pass


class LnlOutOfMemory(LnlError, MemoryError):
    pass


class LnlWorkspaceTooSmall(LnlError):
    pass


class LnlDeviceError(LnlError):
    pass


_STATUS_EXCEPTIONS = {
    1: LnlInvalidArgument,
    2: LnlUnsupported,
    3: LnlOutOfMemory,
    4: LnlWorkspaceTooSmall,
    5: LnlDeviceError,
}


# The library version whose lnl_problem the Problem below mirrors. Before 1.0 a minor
# version may change the struct (0.2 added ln_float32), so major and minor must match.
ABI_VERSION = (0, 2)


class Problem(ctypes.Structure):
    """struct lnl_problem (ABI_VERSION's); C enums are int-sized on every ABI we build for."""

    _fields_ = [
        ("rows", ctypes.c_int64),
        ("in_features", ctypes.c_int64),
        ("out_features", ctypes.c_int64),
        ("eps", ctypes.c_double),
        ("dtype", ctypes.c_int),
        ("device", ctypes.c_int),
        ("strategy", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("stream", ctypes.c_void_p),
        ("ln_float32", ctypes.c_int),
    ]


class BackwardArgs(ctypes.Structure):
    """struct lnl_backward_args (lnl_backward_ex): every pointer a c_void_p, None = NULL."""

    _fields_ = [(name, ctypes.c_void_p) for name in (
        "dy", "x", "ln_weight", "ln_bias", "linear_weight", "mean", "rstd", "ln_out",
        "dx", "dln_weight", "dln_bias", "dlinear_weight", "dlinear_bias", "workspace")] + [
        ("workspace_bytes", ctypes.c_size_t),
        ("y", ctypes.c_void_p),
        ("linear_bias", ctypes.c_void_p),
    ]


def _find_library():
    env = os.environ.get("LNLINEAR_LIBRARY")
    if env:
        if not os.path.isfile(env):
            raise ImportError(f"lnlinear: LNLINEAR_LIBRARY={env!r} is not a file")
        return os.path.abspath(env)
    here = os.path.dirname(os.path.abspath(__file__))
    exact = os.path.join(here, "liblnlinear.so")
    if os.path.isfile(exact):
        return exact
    # An install may ship only the versioned names (liblnlinear.so.0.2, .so.0.2.0).
    found = sorted(glob.glob(os.path.join(here, "liblnlinear.so*")))
    if found:
        return found[0]
    raise ImportError(
        "lnlinear: cannot find liblnlinear.so. Install the package with `pip install .` "
        "at the repository root (it builds and ships the library), or build it with CMake "
        "and set LNLINEAR_LIBRARY=/path/to/liblnlinear.so")


def abi_mismatch(found):
    """Why a library of version `found` (major, minor, patch) cannot be driven through this
    binding, or None where it can."""
    major, minor = found[0], found[1]
    if major == ABI_VERSION[0] and (major > 0 or minor == ABI_VERSION[1]):
        return None
    want = ".".join(map(str, ABI_VERSION))
    return (f"the library is version {'.'.join(map(str, found))} but this binding was written "
            f"for {want}.x, whose lnl_problem may differ: rebuild the library from this "
            f"checkout or point LNLINEAR_LIBRARY at a {want} build")


def _load():
    path = _find_library()
    try:
        handle = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"lnlinear: cannot load {path}: {e}") from e
    P = ctypes.POINTER(Problem)
    vp, sz, st = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    sigs = {
        "lnl_forward": (st, [P] + [vp] * 10 + [sz]),
        "lnl_backward": (st, [P] + [vp] * 14 + [sz]),
        "lnl_backward_ex": (st, [P, ctypes.POINTER(BackwardArgs)]),
        "lnl_backward_wants_y": (ctypes.c_int, [P]),
        "lnl_forward_workspace_size": (sz, [P]),
        "lnl_backward_workspace_size": (sz, [P]),
        "lnl_check": (st, [P]),
        "lnl_status_string": (ctypes.c_char_p, [st]),
        "lnl_last_error": (ctypes.c_char_p, []),
        "lnl_version": (None, [ctypes.POINTER(ctypes.c_int)] * 3),
        "lnl_saved_bytes": (sz, [P, ctypes.c_int]),
        "lnl_resolve_strategy": (st, [P]),
        "lnl_resolve_backward_strategy": (st, [P]),
        "lnl_dtype_size": (sz, [st]),
    }
    for name, (res, args) in sigs.items():
        try:
            fn = getattr(handle, name)
        except AttributeError as e:
            raise ImportError(f"lnlinear: {path} does not export {name}") from e
        fn.restype = res
        fn.argtypes = args
    found = [ctypes.c_int(-1) for _ in range(3)]
    handle.lnl_version(*(ctypes.byref(v) for v in found))
    why = abi_mismatch(tuple(v.value for v in found))
    if why:
        raise ImportError(f"lnlinear: {path}: {why}")
    return path, handle


library_path, lib = _load()


def version():
    """(major, minor, patch) of the loaded library."""
    v = [ctypes.c_int(0) for _ in range(3)]
    lib.lnl_version(*(ctypes.byref(i) for i in v))
    return tuple(i.value for i in v)


def check(status, what):
    """Raise the exception for a non-zero status. Must run on the calling thread right
    after the failed call: lnl_last_error() is per thread."""
    if status == STATUS_SUCCESS:
        return
    msg = (lib.lnl_last_error() or b"").decode("utf-8", "replace")
    name = lib.lnl_status_string(status).decode("utf-8", "replace")
    exc = _STATUS_EXCEPTIONS.get(status, LnlError)
    raise exc(f"{what} failed ({name}): {msg}" if msg else f"{what} failed ({name})")
