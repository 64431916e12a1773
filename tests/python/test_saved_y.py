"""The forward's output y kept for the backward's dx epilogue (lnl_backward_ex,
lnl_backward_wants_y): on every path (the C++ node, the Python node, the custom op) y is
kept only where the library says its backward reads it and dx and dlinear_weight are both
wanted, and then it is the output tensor itself; otherwise the forward keeps what it always
kept. On the CPU the library never wants y: the tests that need it kept stand a fake
lnl_backward_wants_y in (the CPU backward ignores y, so the gradients must not move a bit).
The CUDA tests check the epilogue's gradients on Hopper against the float64 reference.
"""

import contextlib
import ctypes

import pytest
import torch

import lnlinear
from lnlinear import _clib, _cpp, ops
from _util import assert_close_to_ref, eager_node, make_inputs, run, torch_forward
from conftest import DEVICES

PATHS = ["cpp", "python", "custom_op"]


def _forward(path, leaves, recompute=True, strategy="auto"):
    """y on one of the three paths (the eager nodes route by device; the custom op is what
    torch.compile traces)."""
    if path == "custom_op":
        x, lnw, lnb, w, b = leaves
        return torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, not recompute,
                                          ops.STRATEGIES[strategy])[0]
    if path == "cpp" and not _cpp.available():
        pytest.skip(f"C++ op not loaded: {_cpp.reason}")
    with eager_node(path == "cpp"):
        return lnlinear.layernorm_linear(*leaves, recompute=recompute, strategy=strategy)


def _leaves(inputs, mask=(1, 1, 1, 1, 1)):
    return [None if t is None else t.detach().requires_grad_(bool(m))
            for t, m in zip(inputs, mask)]


def _saved(fn):
    """fn()'s result and every tensor its autograd node saved."""
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn()
    return y, packed


def _same(a, b):
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape


def _kept_bytes(packed, leaves):
    """Bytes of the saved tensors that are not the call's own inputs (x and the
    parameters, alive anyway): what the forward keeps alive for the backward."""
    return sum(t.numel() * t.element_size() for t in packed
               if not any(i is not None and _same(t, i) for i in leaves))


def _stat_bytes(x, N, strategy="auto", keep_ln_out=False):
    p = ops._problem(x, N, 1e-5, ops.STRATEGIES[strategy])
    return _clib.lib.lnl_saved_bytes(ctypes.byref(p), int(keep_ln_out))


@contextlib.contextmanager
def _library_wants_y(monkeypatch, answer):
    """lnl_backward_wants_y answers `answer` for every problem, on both eager paths and
    the custom op (the Python side's cached answers are set aside, the C++ op rebound)."""
    asked = []

    def fake(p):
        asked.append(p)
        return answer

    monkeypatch.setattr(_clib.lib, "lnl_backward_wants_y", fake)
    monkeypatch.setattr(ops, "_calls", {})
    cb = None
    if _cpp.available():
        cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda p: asked.append(p) or answer)
        _cpp.bind({"lnl_backward_wants_y": ctypes.cast(cb, ctypes.c_void_p).value})
    try:
        yield asked
    finally:
        if cb is not None:
            _cpp.bind()


def _grads(path, inputs, dy, mask=(1, 1, 1, 1, 1), **kw):
    leaves = _leaves(inputs, mask)
    y = _forward(path, leaves, **kw)
    wanted = [t for t in leaves if t is not None and t.requires_grad]
    return [y.detach()] + list(torch.autograd.grad(y, wanted, dy))


# ---- CPU: the library never wants y ----

@pytest.mark.parametrize("strategy", ["auto", "fused", "unfused", "reference"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16],
                         ids=str)
def test_cpu_library_never_wants_y(strategy, dtype):
    x = torch.empty(64, 128, dtype=dtype)
    p = ops._problem(x, 32, 1e-5, ops.STRATEGIES[strategy])
    assert _clib.lib.lnl_backward_wants_y(ctypes.byref(p)) == 0
    assert _clib.lib.lnl_backward_wants_y(None) == 0


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_cpu_saves_no_y(path, recompute, dtype):
    # Every gradient wanted (the case y would be kept for): the forward keeps mean + rstd
    # (+ ln_out with recompute=False) and nothing of y's size, as lnl_saved_bytes counts
    # (16-bit: float32 mean and rstd, a 16-bit ln_out).
    M, K, N = 64, 128, 8
    inputs, _ = make_inputs((M,), K, N, dtype, "cpu")
    leaves = _leaves(inputs)
    y, packed = _saved(lambda: _forward(path, leaves, recompute=recompute))
    assert not any(_same(t, y) for t in packed)
    assert not any(tuple(t.shape) == (M, N) for t in packed)
    assert _kept_bytes(packed, leaves) == _stat_bytes(leaves[0], N, keep_ln_out=not recompute)


# ---- a library that wants y (faked on the CPU) ----

@pytest.mark.parametrize("path", PATHS)
def test_saves_y_itself_where_the_library_wants_it(path, monkeypatch):
    M, K, N = 64, 128, 8
    inputs, _ = make_inputs((M,), K, N, torch.float32, "cpu")
    with _library_wants_y(monkeypatch, 1) as asked:
        leaves = _leaves(inputs)
        y, packed = _saved(lambda: _forward(path, leaves))
        assert asked, "lnl_backward_wants_y was not asked"
        # the output tensor itself (same storage, no copy) and linear_bias
        assert sum(_same(t, y) for t in packed) == 1
        assert any(_same(t, leaves[4]) for t in packed)
        assert _kept_bytes(packed, leaves) == _stat_bytes(leaves[0], N) + y.numel() * y.element_size()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", ["no_dx", "no_dw", "keep_ln_out", "library_says_no"])
def test_no_y_unless_dx_and_dw_are_wanted(path, case, monkeypatch):
    M, K, N = 64, 128, 8
    inputs, _ = make_inputs((M,), K, N, torch.float32, "cpu")
    mask = {"no_dx": (0, 1, 1, 1, 1), "no_dw": (1, 1, 1, 0, 1)}.get(case, (1, 1, 1, 1, 1))
    with _library_wants_y(monkeypatch, 0 if case == "library_says_no" else 1):
        leaves = _leaves(inputs, mask)
        y, packed = _saved(lambda: _forward(path, leaves, recompute=case != "keep_ln_out"))
        assert not any(_same(t, y) for t in packed)
        assert _kept_bytes(packed, leaves) == _stat_bytes(leaves[0], N,
                                                          keep_ln_out=case == "keep_ln_out")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("lead", [(33,), (3, 11)], ids=str)
@pytest.mark.parametrize("linear_bias", [True, False])
def test_gradients_with_y_are_bitwise_unchanged_on_cpu(path, lead, linear_bias, monkeypatch):
    # The CPU backward ignores y: handing it over (lnl_backward_ex with y and linear_bias)
    # must not change a bit of any gradient.
    inputs, dy = make_inputs(lead, 40, 24, torch.float32, "cpu", linear_bias=linear_bias)
    if path == "custom_op":
        inputs[0], dy = inputs[0].reshape(-1, 40), dy.reshape(-1, 24)
    plain = _grads(path, inputs, dy)
    with _library_wants_y(monkeypatch, 1):
        leaves = _leaves(inputs)
        y, packed = _saved(lambda: _forward(path, leaves))
        assert any(_same(t, y) for t in packed) or any(_same(t, y._base) for t in packed
                                                       if y._base is not None)
        with_y = [y.detach()] + list(torch.autograd.grad(
            y, [t for t in leaves if t is not None], dy))
    assert len(plain) == len(with_y)
    for a, b in zip(plain, with_y):
        assert torch.equal(a, b)


@pytest.mark.parametrize("path", PATHS)
def test_in_place_change_of_a_kept_y_is_refused(path, monkeypatch):
    # Keeping y means autograd's version check guards it, as for any saved output; where y
    # is not kept (the CPU's real answer) an in-place change stays allowed.
    inputs, dy = make_inputs((16,), 24, 8, torch.float32, "cpu")
    leaves = _leaves(inputs)
    y = _forward(path, leaves)
    y.mul_(2)
    torch.autograd.grad(y, [t for t in leaves if t is not None], dy)
    with _library_wants_y(monkeypatch, 1):
        leaves = _leaves(inputs)
        y = _forward(path, leaves)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            torch.autograd.grad(y, [t for t in leaves if t is not None], dy)


def test_opcheck_backward_with_y():
    inputs, dy = make_inputs((6,), 9, 7, torch.float32, "cpu")
    x, lnw, lnb, w, b = inputs
    y, mean, rstd, _ = torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, False,
                                                  ops.STRATEGIES["auto"])
    args = (dy, x, lnw, lnb, w, mean, rstd, None, 1e-5, ops.STRATEGIES["auto"],
            [True, True, True, True, True], y, b)
    torch.library.opcheck(torch.ops.lnlinear.backward.default, args)
    plain = torch.ops.lnlinear.backward(*args[:11])
    for a, c in zip(plain, torch.ops.lnlinear.backward(*args)):
        assert torch.equal(a, c)
    with pytest.raises(ValueError, match="y must be"):
        torch.ops.lnlinear.backward(*args[:11], y[:, :3], b)
    with pytest.raises(ValueError, match="linear_bias must be"):
        torch.ops.lnlinear.backward(*args[:11], y, b[:3])


def test_compile_with_y_kept(monkeypatch):
    # The custom op's autograd under torch.compile with y kept: the backward op takes the
    # forward's output. aot_eager: no C++ compiler needed, and quick on 2 cores.
    if not hasattr(torch, "compile"):
        pytest.skip("torch.compile is not available")
    torch._dynamo.reset()
    inputs, dy = make_inputs((12,), 16, 8, torch.float32, "cpu")

    def step(x, lnw, lnb, w, b):
        return (lnlinear.layernorm_linear(x, lnw, lnb, w, b) * dy).sum()

    eager = _leaves(inputs)
    step(*eager).backward()
    with _library_wants_y(monkeypatch, 1) as asked:
        compiled = _leaves(inputs)
        torch.compile(step, fullgraph=True, backend="aot_eager")(*compiled).backward()
        assert asked
    torch._dynamo.reset()
    for a, c in zip(eager, compiled):
        torch.testing.assert_close(c.grad, a.grad, rtol=1e-6, atol=1e-6)


# ---- CUDA: the dx epilogue itself (Hopper, bf16 and f16) ----

def _hopper_or_skip():
    if "cuda" not in DEVICES:
        pytest.skip("CUDA not under test")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the dx epilogue is Hopper's")


def _check_epilogue(path, M, K, N, strategy, dtype):
    inputs, dy = make_inputs((M,), K, N, dtype, "cuda")
    p = ops._problem(inputs[0], N, 1e-5, ops.STRATEGIES[strategy])
    assert _clib.lib.lnl_backward_wants_y(ctypes.byref(p)) == 1, (
        f"lnl_backward_wants_y is 0 at {M},{K},{N} {strategy}: this test wants a shape that "
        f"takes the dx epilogue")
    leaves = _leaves(inputs)
    y, packed = _saved(lambda: _forward(path, leaves, strategy=strategy))
    assert sum(_same(t, y) for t in packed) == 1, "y is not kept"
    del packed
    fn = lambda *a: _forward(path, a, strategy=strategy)  # noqa: E731
    mask = (1, 1, 1, 1, 1)
    _, g, _ = run(fn, inputs, dy, mask)
    _, g_t, _ = run(torch_forward, inputs, dy, mask)
    _, g_r, _ = run(torch_forward, inputs, dy, mask, upcast=True)
    # The same bound as the other CUDA 16-bit tests (test_numerics.check_all): 1.5 x
    # PyTorch's own error against the float64 reference, or the dtype's floor. f16's dW
    # comes from rstd dy scaled by a power of two (dw_from_x.cu).
    for name in ("x", "linear_weight", "ln_weight", "ln_bias", "linear_bias"):
        assert g[name].dtype == dtype and g[name].shape == g_r[name].shape
        assert_close_to_ref(g[name], g_t[name], g_r[name], dtype, "d" + name)


EPI_DTYPES = [torch.bfloat16, torch.float16]


@pytest.mark.parametrize("dtype", EPI_DTYPES)
@pytest.mark.parametrize("path", PATHS)
def test_cuda_dx_epilogue_auto(path, dtype):
    # N <= K / 4: where AUTO's backward takes the epilogue.
    _hopper_or_skip()
    _check_epilogue(path, 4096, 2048, 256, "auto", dtype)


@pytest.mark.parametrize("dtype", EPI_DTYPES)
@pytest.mark.parametrize("path", PATHS)
def test_cuda_dx_epilogue_fused_ragged(path, dtype):
    # Row and column tails: M, K and N not multiples of the GEMM's 128-row, 256-column
    # tiles and 64-deep slices; past the tiny class (whose FUSED backward is one launch of
    # its own, tiny_backward.cuh) with N < K (the epilogue needs dW from the raw x).
    _hopper_or_skip()
    _check_epilogue(path, 1000, 1032, 200, "fused", dtype)


@pytest.mark.parametrize("path", PATHS)
def test_cuda_bf16_no_y_with_ln_out_or_without_dx(path):
    # The epilogue's shape, but with ln_out kept or no dx wanted: y stays unsaved.
    _hopper_or_skip()
    M, K, N = 4096, 2048, 256
    inputs, _ = make_inputs((M,), K, N, torch.bfloat16, "cuda")
    for mask, recompute in (((1, 1, 1, 1, 1), False), ((0, 1, 1, 1, 1), True)):
        leaves = _leaves(inputs, mask)
        y, packed = _saved(lambda: _forward(path, leaves, recompute=recompute))
        assert not any(_same(t, y) for t in packed)
