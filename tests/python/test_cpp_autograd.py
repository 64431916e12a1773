"""The C++ autograd node (python/csrc/lnlinear_torch.cpp) against the Python one
(ops.LayerNormLinearFunction): one library, the same data, so y and every gradient must
be bitwise equal; and both against the float64 reference.

Skipped when the extension was not built (no torch at configure time), except under
LNLINEAR_EXPECT_CPP=1 (make test sets it), where a missing extension fails.
"""

import os
import subprocess
import sys

import pytest
import torch

import lnlinear
from lnlinear import _cpp, ops
from _util import NAMES, assert_close_to_ref, eager_node, make_inputs, run, torch_forward
from conftest import DEVICE_DTYPES, DEVICES, dtype_id

if not _cpp.available():
    if os.environ.get("LNLINEAR_EXPECT_CPP", "") not in ("", "0"):
        raise RuntimeError(f"LNLINEAR_EXPECT_CPP is set but the C++ op is not loaded: "
                           f"{_cpp.reason}")
    pytest.skip(f"C++ op not loaded: {_cpp.reason}", allow_module_level=True)

CPP_NODE = "torch::autograd::CppNode<lnlinear_torch::LayerNormLinearFn>"
PY_NODE = "LayerNormLinearFunctionBackward"


def _both(fn):
    """fn() on the C++ path, then on the Python path."""
    outs = []
    for cpp in (True, False):
        with eager_node(cpp):
            outs.append(fn())
    return outs


def _node(y):
    """The name of the node that made y (under the view of a 3-D or higher result).

    y must be alive while its node is named: torch 2.11 refuses .name() on a Python
    Function's node once the tensor that held it is freed."""
    return (y.grad_fn if y.dim() == 2 else y.grad_fn.next_functions[0][0]).name()


def _assert_bitwise(a, b, what):
    assert a.keys() == b.keys(), what
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, f"{what}: {k}"
        assert torch.equal(a[k], b[k]), f"{what}: {k} differs between the C++ and Python paths"


def _run(inputs, dy, mask, **kw):
    y, grads, _ = run(lambda *a: lnlinear.layernorm_linear(*a, **kw), inputs, dy, mask)
    return dict(grads, y=y)


def test_cpp_path_is_taken():
    inputs, dy = make_inputs((4,), 8, 3, torch.float32, "cpu")
    leaves = [t.detach().requires_grad_() for t in inputs]
    assert ops.cpp_autograd_available()
    names = _both(lambda: _node(lnlinear.layernorm_linear(*leaves)))
    assert names == [CPP_NODE, PY_NODE]


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("affine", ["all", "no_ln_bias", "no_ln_affine", "no_linear_bias"])
@pytest.mark.parametrize("lead", [(33,), (3, 5)], ids=["2d", "3d"])
def test_bitwise_equal_to_python_path(device, dtype, recompute, affine, lead):
    inputs, dy = make_inputs(lead, 40, 24, dtype, device, ln_affine=affine != "no_ln_affine",
                             ln_bias=affine != "no_ln_bias",
                             linear_bias=affine != "no_linear_bias")
    cpp, py = _both(lambda: _run(inputs, dy, [True] * 5, recompute=recompute))
    _assert_bitwise(cpp, py, f"{device} {dtype} recompute={recompute} {affine} {lead}")
    with eager_node(True):
        x = inputs[0].detach().requires_grad_()
        assert _node(lnlinear.layernorm_linear(x, *inputs[1:])) == CPP_NODE
    assert set(cpp) == {"y"} | {n for n, t in zip(NAMES, inputs) if t is not None}
    # and both against the float64 reference, as test_numerics judges the library
    ref_y, ref_g, _ = run(torch_forward, inputs, dy, [True] * 5, upcast=True)
    own_y, own_g, _ = run(torch_forward, inputs, dy, [True] * 5)
    assert_close_to_ref(cpp["y"], own_y, ref_y, dtype, "y")
    for name in ref_g:
        assert_close_to_ref(cpp[name], own_g[name], ref_g[name], dtype, name)


@pytest.mark.parametrize("linear_dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("affine", ["all", "no_ln_affine", "no_linear_bias"])
@pytest.mark.parametrize("device", DEVICES)
def test_mixed_call_bitwise_equal_to_python_path(device, linear_dtype, recompute, affine):
    # the one mix (ops.mixed_ok): float32 x and LayerNorm parameters, the linear in 16
    # bits; y and the linear's gradients in its dtype, the rest float32, both nodes alike
    inputs, dy = make_inputs((3, 11), 40, 24, torch.float32, device,
                             ln_affine=affine != "no_ln_affine",
                             linear_bias=affine != "no_linear_bias")
    inputs[3:] = [None if t is None else t.to(linear_dtype) for t in inputs[3:]]
    dy = dy.to(linear_dtype)
    cpp, py = _both(lambda: _run(inputs, dy, [True] * 5, recompute=recompute))
    _assert_bitwise(cpp, py, f"mixed {linear_dtype} recompute={recompute} {affine}")
    assert cpp["y"].dtype == linear_dtype and cpp["x"].dtype == torch.float32
    assert cpp["linear_weight"].dtype == linear_dtype
    with eager_node(True):
        x = inputs[0].detach().requires_grad_()
        assert _node(lnlinear.layernorm_linear(x, *inputs[1:])) == CPP_NODE


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("strategy", ["auto", "fused", "unfused", "reference"])
def test_eps_and_strategy_reach_the_library(device, strategy):
    if device == "cuda" and strategy == "reference":
        pytest.skip("REFERENCE is CPU-only")
    inputs, dy = make_inputs((19,), 24, 12, torch.float32, device, offset=0.0)
    x = inputs[0]
    inputs[0] = x * 0.01  # a variance near eps: a wrong eps shows in every output
    eps = 1e-3
    cpp, py = _both(lambda: _run(inputs, dy, [True] * 5, eps=eps, strategy=strategy))
    _assert_bitwise(cpp, py, f"{strategy} eps={eps}")
    ref_y, ref_g, _ = run(lambda *a: torch_forward(*a, eps=eps), inputs, dy, [True] * 5,
                          upcast=True)
    own_y, own_g, _ = run(lambda *a: torch_forward(*a, eps=eps), inputs, dy, [True] * 5)
    assert_close_to_ref(cpp["y"], own_y, ref_y, torch.float32, "y")
    for name in ref_g:
        assert_close_to_ref(cpp[name], own_g[name], ref_g[name], torch.float32, name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mask", [[True, False, False, False, False],
                                  [False, True, True, True, True],
                                  [False, False, False, True, False],
                                  [False] * 5], ids=["only_x", "only_params", "only_w", "none"])
def test_partial_requires_grad(device, mask):
    dtype = torch.float32
    inputs, dy = make_inputs((17,), 24, 10, dtype, device)
    cpp, py = _both(lambda: _run(inputs, dy, mask))
    _assert_bitwise(cpp, py, f"mask {mask}")
    assert set(cpp) == {"y"} | {n for n, m in zip(NAMES, mask) if m}
    if not any(mask):
        leaves = [t.detach() for t in inputs]
        assert lnlinear.layernorm_linear(*leaves).grad_fn is None


def test_only_x_computes_only_dx():
    # A gradient not asked for must not be computed: with only x requiring grad the
    # parameter leaves stay without .grad, and dx equals the all-gradients run's dx.
    inputs, dy = make_inputs((9,), 12, 5, torch.float64, "cpu")
    leaves = [t.detach() for t in inputs]
    x = leaves[0].requires_grad_()
    lnlinear.layernorm_linear(*leaves).backward(dy)
    assert all(t.grad is None for t in leaves[1:])
    full = _run(inputs, dy, [True] * 5)
    assert torch.equal(x.grad, full["x"])


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_x_and_weight(device):
    inputs, dy = make_inputs((20,), 16, 12, torch.float32, device)
    x = torch.cat([inputs[0], inputs[0]], dim=1)[:, ::2]  # every other column: strided
    w = inputs[3].t().contiguous().t()  # a transposed view of [K, N] storage
    assert not x.is_contiguous() and not w.is_contiguous()
    inputs = [x, inputs[1], inputs[2], w, inputs[4]]
    cpp, py = _both(lambda: _run(inputs, dy, [True] * 5))
    _assert_bitwise(cpp, py, "non-contiguous")
    assert cpp["x"].shape == x.shape


@pytest.mark.parametrize("device", DEVICES)
def test_backward_accumulates_into_grad(device):
    inputs, dy = make_inputs((2, 7), 16, 8, torch.float32, device)

    def twice():
        leaves = [t.detach().requires_grad_() for t in inputs]
        y = lnlinear.layernorm_linear(*leaves, recompute=False)
        y.backward(dy, retain_graph=True)
        once = [t.grad.clone() for t in leaves]
        y.backward(dy)
        return dict(zip(NAMES, once)), {n: t.grad for n, t in zip(NAMES, leaves)}

    (c_once, c_twice), (p_once, p_twice) = _both(twice)
    _assert_bitwise(c_once, p_once, "first backward")
    _assert_bitwise(c_twice, p_twice, "accumulated")
    for n in NAMES:
        assert torch.equal(c_twice[n], c_once[n] + c_once[n])


def test_retain_graph_gives_the_same_gradients():
    inputs, dy = make_inputs((11,), 9, 6, torch.float64, "cpu")
    leaves = [t.detach().requires_grad_() for t in inputs]
    y = lnlinear.layernorm_linear(*leaves)
    assert y.grad_fn.name() == CPP_NODE
    g1 = torch.autograd.grad(y, leaves, dy, retain_graph=True)
    g2 = torch.autograd.grad(y, leaves, dy)
    for a, b in zip(g1, g2):
        assert torch.equal(a, b)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        torch.autograd.grad(y, leaves, dy)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
@pytest.mark.parametrize("recompute", [True, False])
def test_no_grad_forward(device, mode, recompute):
    inputs, _ = make_inputs((3, 6), 16, 8, torch.float32, device)
    leaves = [t.detach().requires_grad_() for t in inputs]

    def fwd():
        with mode():
            return lnlinear.layernorm_linear(*leaves, recompute=recompute)

    cpp, py = _both(fwd)
    assert cpp.grad_fn is None and not cpp.requires_grad
    assert torch.equal(cpp, py)
    torch.testing.assert_close(cpp, torch_forward(*inputs))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("lead", [(0,), (3, 0)])
def test_empty_batch(device, lead):
    inputs, _ = make_inputs((1,), 6, 4, torch.float32, device)

    def fwd_bwd():
        leaves = [t.detach().requires_grad_() for t in inputs]
        x = torch.empty(*lead, 6, device=device, requires_grad=True)
        y = lnlinear.layernorm_linear(x, *leaves[1:])
        y.sum().backward()
        return y, x.grad, [t.grad for t in leaves[1:]], _node(y)

    (y, dx, grads, name), (py_y, py_dx, py_grads, _) = _both(fwd_bwd)
    assert name == CPP_NODE
    assert y.shape == py_y.shape == (*lead, 4) and dx.shape == py_dx.shape == (*lead, 6)
    for g, p, t in zip(grads, py_grads, inputs[1:]):
        assert g.shape == t.shape and not g.any() and torch.equal(g, p)


def test_checkpoint_recomputes_through_the_node():
    # torch.utils.checkpoint (non-reentrant) drops the saved tensors through saved-tensor
    # hooks and reruns the forward in the backward: the C++ node must serve both.
    from torch.utils.checkpoint import checkpoint
    inputs, dy = make_inputs((12,), 16, 8, torch.float32, "cpu")

    def checkpointed():
        leaves = [t.detach().requires_grad_() for t in inputs]
        y = checkpoint(lnlinear.layernorm_linear, *leaves, use_reentrant=False)
        return dict(zip(("y",) + NAMES, (y.detach(),) + torch.autograd.grad(y, leaves, dy)))

    ck_cpp, ck_py = _both(checkpointed)
    plain = _both(lambda: _run(inputs, dy, [True] * 5))[0]
    _assert_bitwise(ck_cpp, ck_py, "checkpointed")
    _assert_bitwise(ck_cpp, plain, "checkpointed against plain")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=dtype_id)
def test_saves_what_the_python_path_saves(dtype):
    inputs, _ = make_inputs((64,), 128, 8, dtype, "cpu")
    leaves = [t.detach().requires_grad_() for t in inputs]

    def saved(recompute):
        packed = []

        def pack(t):
            packed.append((tuple(t.shape), t.dtype))
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            lnlinear.layernorm_linear(*leaves, recompute=recompute)
        return sorted(packed, key=str)

    for recompute in (True, False):
        cpp, py = _both(lambda: saved(recompute))
        assert cpp == py, f"recompute={recompute}"
    # ln_out [64, 128] kept only with recompute=False, in x's dtype; mean and rstd in float32
    # whatever x's dtype (16-bit included)
    assert saved(False).count(((64, 128), dtype)) == 2
    assert saved(True).count(((64, 128), dtype)) == 1
    for recompute in (True, False):
        assert saved(recompute).count(((64,), torch.float32)) == 2


def test_gradcheck_float64():
    inputs, _ = make_inputs((2, 3), 5, 4, torch.float64, "cpu")
    leaves = tuple(t.detach().requires_grad_() for t in inputs)
    assert _node(lnlinear.layernorm_linear(*leaves)) == CPP_NODE
    for recompute in (True, False):
        assert torch.autograd.gradcheck(
            lambda *a: lnlinear.layernorm_linear(*a, recompute=recompute), leaves,
            eps=1e-6, atol=1e-8, rtol=1e-6)


def _misaligned(shape, dtype=torch.float32):
    """A contiguous CPU tensor one byte off its element alignment: Python's checks pass
    it (they do not look at addresses), the library refuses it (INVALID_ARGUMENT)."""
    n = 1
    for s in shape:
        n *= s
    size = torch.empty((), dtype=dtype).element_size()
    t = torch.frombuffer(bytearray(size * n + 1), dtype=dtype, offset=1, count=n).view(*shape)
    t.copy_(torch.randn(*shape, dtype=dtype))
    return t


def test_forward_error_carries_the_library_message():
    inputs, _ = make_inputs((5,), 8, 4, torch.float32, "cpu")
    inputs[0] = _misaligned((5, 8))
    errors = []
    for cpp in (True, False):
        with eager_node(cpp), pytest.raises(lnlinear.LnlInvalidArgument) as info:
            lnlinear.layernorm_linear(*[t.detach().requires_grad_() for t in inputs])
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("lnl_forward failed (invalid argument): lnl_forward: x is not "
                                "aligned")
    # the no-grad call (y alone) fails the same way
    with torch.no_grad(), pytest.raises(lnlinear.LnlInvalidArgument, match="x is not aligned"):
        lnlinear.layernorm_linear(*inputs)


def test_backward_error_carries_the_library_message():
    # dy one byte off alignment: the forward succeeds, lnl_backward_ex refuses dy in the
    # autograd engine. The C++ node raises torch's ValueError with the Python path's text.
    inputs, _ = make_inputs((5,), 8, 4, torch.float32, "cpu")
    dy = _misaligned((5, 4))
    errors = []
    for cpp in (True, False):
        leaves = [t.detach().requires_grad_() for t in inputs]
        with eager_node(cpp):
            y = lnlinear.layernorm_linear(*leaves)
        with pytest.raises(ValueError) as info:
            torch.autograd.grad(y, leaves, dy)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("lnl_backward_ex failed (invalid argument): lnl_backward_ex: dy is "
                                "not aligned")


# Bad operands on the fast path: the op's own checks (operands_ok) reject them and
# ops.check_operands names the argument, so the error is the Python path's, word for word.
_BAD = [
    (0, lambda: torch.randn(4, 11)),                       # K against linear_weight
    (0, lambda: torch.randn(4, 0)),                        # K = 0
    (0, lambda: torch.randn(4, 10, dtype=torch.float64)),  # x's dtype against the rest
    (0, lambda: torch.randn(4, 10).to(torch.bfloat16)),    # a CPU dtype, against the rest
    (0, lambda: torch.randn(4, 10, dtype=torch.complex64)),  # a dtype no device takes
    (0, lambda: torch.randn(2, 2, 10)[:, :, :9]),          # 3-D, K against linear_weight
    (1, lambda: torch.randn(9)),
    (1, lambda: torch.randn(10, 1)),
    (2, lambda: torch.randn(10, dtype=torch.float16)),
    (3, lambda: torch.randn(6, 9)),
    (3, lambda: torch.randn(60)),
    (3, lambda: torch.randn(0, 10)),
    (4, lambda: torch.randn(7)),
    (4, lambda: torch.randn(6, 1)),
]


@pytest.mark.parametrize("index,bad", _BAD, ids=[f"arg{i}-{n}" for n, (i, _) in enumerate(_BAD)])
def test_bad_operands_raise_the_python_paths_error(index, bad):
    errors = []
    for cpp in (True, False):
        inputs, _ = make_inputs((4,), 10, 6, torch.float32, "cpu")
        inputs[index] = bad()
        with eager_node(cpp), pytest.raises((ValueError, TypeError)) as info:
            lnlinear.layernorm_linear(*inputs)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
    assert "operands rejected" not in errors[0][1]


def test_op_checks_its_operands_itself():
    # Called directly, the op refuses what the library would read out of bounds (it took
    # Python's word for the shapes until session 43), before any allocation or launch.
    inputs, _ = make_inputs((4,), 10, 6, torch.float32, "cpu")
    op = torch.ops.lnlinear_cpp.layernorm_linear
    cases = [(0, torch.randn(4, 12)), (0, torch.randn(2, 2, 10)), (1, torch.randn(11)),
             (2, torch.randn(9)), (3, torch.randn(6, 12)), (4, torch.randn(5)),
             (0, torch.randn(4, 10, dtype=torch.float64)),
             (1, torch.randn(10, dtype=torch.float64)), (0, torch.randint(0, 3, (4, 10))),
             (3, torch.randn(6, 10, device="meta"))]
    for index, bad in cases:
        args = list(inputs)
        args[index] = bad
        with pytest.raises(ValueError, match="operands rejected"):
            op(*args, 1e-5, False, 0)
    y = op(*inputs, 1e-5, False, 0)  # and takes good ones
    assert y.shape == (4, 6)
    for dtype in (torch.bfloat16, torch.float16):  # 16-bit CPU ones too (commit 8f3218e)
        half = [t.to(dtype) for t in inputs]
        y = op(*half, 1e-5, False, 0)
        assert y.shape == (4, 6) and y.dtype == dtype
        mixed = [half[0]] + [t.to(torch.float16 if dtype == torch.bfloat16 else torch.bfloat16)
                             for t in half[1:]]
        with pytest.raises(ValueError, match="operands rejected"):
            op(*mixed, 1e-5, False, 0)
        # the one mix it takes (ops.mixed_ok): float32 x, ln_weight, ln_bias beside a 16-bit
        # linear; a LayerNorm parameter in 16 bits, or a bias apart from the weight, it refuses
        good = inputs[:3] + half[3:]
        y = op(*good, 1e-5, False, 0)
        assert y.shape == (4, 6) and y.dtype == dtype
        other = torch.float16 if dtype == torch.bfloat16 else torch.bfloat16
        for index, t in ((1, half[1]), (2, half[2]), (4, half[4].to(other))):
            args = list(good)
            args[index] = t
            with pytest.raises(ValueError, match="operands rejected"):
                op(*args, 1e-5, False, 0)


def test_fast_path_leaves_the_checks_to_the_op(monkeypatch):
    # The happy path runs no Python operand checks (~2.5 of a small training forward's
    # ~13 us on a CPU, bench/python_overhead.py --paths): a good call never reaches
    # check_operands on the C++ path, and a bad one does.
    from lnlinear import functional

    calls = []

    def counting(*a):
        calls.append(a)
        return ops.check_operands(*a)

    monkeypatch.setattr(functional, "check_operands", counting)
    inputs, _ = make_inputs((3, 4), 10, 6, torch.float32, "cpu")
    with eager_node(True):
        y = lnlinear.layernorm_linear(*inputs)
        assert y.shape == (3, 4, 6) and not calls
        inputs[1] = torch.randn(9)
        with pytest.raises(ValueError, match="ln_weight"):
            lnlinear.layernorm_linear(*inputs)
    assert len(calls) == 1
    with eager_node(False):
        inputs[1] = torch.randn(10)
        lnlinear.layernorm_linear(*inputs)
    assert len(calls) == 2  # the Python path checks first


@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
def test_unsupported_strategy_on_cuda_reports_cleanly():
    # REFERENCE is CPU-only: Python's checks let it through, lnl_forward says UNSUPPORTED.
    inputs, _ = make_inputs((4,), 10, 6, torch.bfloat16, "cuda")
    errors = []
    for cpp in (True, False):
        with eager_node(cpp), pytest.raises(lnlinear.LnlUnsupported) as info:
            lnlinear.layernorm_linear(*[t.detach().requires_grad_() for t in inputs],
                                      strategy="reference")
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "unsupported" in errors[0]


@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
def test_cuda_side_stream_matches_python_path():
    # The node takes the current stream itself (c10's device-guard registry).
    inputs, dy = make_inputs((64,), 256, 96, torch.bfloat16, "cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())

    def on_stream():
        with torch.cuda.stream(s):
            out = _run(inputs, dy, [True] * 5)
        torch.cuda.synchronize()
        return out

    cpp, py = _both(on_stream)
    _assert_bitwise(cpp, py, "side stream")
    assert any(k[1] == s.cuda_stream for k in _cpp.cached_workspaces())


@pytest.mark.skipif("cuda" not in DEVICES or torch.cuda.device_count() < 2,
                    reason="needs two GPUs under test")
def test_cuda_other_device_matches_python_path():
    inputs, dy = make_inputs((32,), 64, 48, torch.float32, "cuda:1")
    assert torch.cuda.current_device() == 0
    cpp, py = _both(lambda: _run(inputs, dy, [True] * 5))
    _assert_bitwise(cpp, py, "cuda:1")
    assert torch.cuda.current_device() == 0


# One plain call in a new Python process: y made from a (3, 4) input, the node chosen
# by that process's environment alone.
_ONE_CALL = ("import warnings; warnings.simplefilter('always'); import torch, lnlinear; "
             "from lnlinear import ops, _cpp; x = torch.randn(3, 4, requires_grad=True); "
             "y = lnlinear.layernorm_linear(x, None, None, torch.randn(2, 4)); ")


def _in_fresh_process(env, fields):
    """_ONE_CALL under env, then fields (expressions over ops, _cpp and y) printed with
    '|' between them; the finished process (stdout, stderr)."""
    return subprocess.run([sys.executable, "-c", _ONE_CALL + f"print({fields}, sep='|')"],
                          env=env, capture_output=True, text=True, check=True)


def test_no_cpp_env_forces_the_python_path():
    env = dict(os.environ, LNLINEAR_NO_CPP="1")
    out = _in_fresh_process(env, "ops.cpp_autograd_available(), _cpp.reason, y.grad_fn.name()")
    assert out.stdout.strip() == f"False|LNLINEAR_NO_CPP is set|{PY_NODE}"


def test_every_device_type_takes_the_node_by_default():
    # A fresh process with the op built: CPU and CUDA calls both go through it (CUDA was
    # gated behind a variable until the H200 had run the suite through the node).
    env = dict(os.environ)
    env.pop("LNLINEAR_NO_CPP", None)
    out = _in_fresh_process(env, "ops.cpp_autograd_available('cpu'), "
                                 "ops.cpp_autograd_available('cuda'), sorted(_cpp.serves), "
                                 "y.grad_fn.name()")
    assert out.stdout.strip() == f"True|True|['cpu', 'cuda']|{CPP_NODE}"


def test_set_devices_routes_each_device_type():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(2, 4)
    previous = _cpp.set_devices(("cuda",))
    try:
        assert _node(lnlinear.layernorm_linear(x, None, None, w)) == PY_NODE
        _cpp.set_devices(("cpu",))
        assert _node(lnlinear.layernorm_linear(x, None, None, w)) == CPP_NODE
        with pytest.raises(ValueError, match="unknown device types"):
            _cpp.set_devices(("tpu",))
    finally:
        _cpp.set_devices(previous)


def test_unloadable_extension_falls_back_with_a_warning(tmp_path):
    # An extension that cannot load (here not an ELF file; in practice one built against
    # another torch) must leave the package working on the Python path, and say why.
    from lnlinear import _clib
    lib = tmp_path / "liblnlinear.so"
    lib.write_bytes(open(_clib.library_path, "rb").read())
    (tmp_path / "liblnlinear_torch.so").write_bytes(b"not a shared library")
    env = dict(os.environ, LNLINEAR_LIBRARY=str(lib))
    env.pop("LNLINEAR_TORCH_OPS", None)
    env.pop("LNLINEAR_NO_CPP", None)
    r = _in_fresh_process(env, "ops.cpp_autograd_available(), y.grad_fn.name()")
    assert r.stdout.strip() == f"False|{PY_NODE}"
    assert "using the Python autograd path" in r.stderr


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_concurrent_threads_agree(dtype):
    # Forward and backward from several Python threads at once (the op releases the GIL;
    # its caches are shared under locks): every thread's results equal one thread's.
    import threading
    inputs, dy = make_inputs((24,), 32, 16, dtype, "cpu")
    ref = _run(inputs, dy, [True] * 5)
    bad = []

    def work():
        for _ in range(20):
            out = _run(inputs, dy, [True] * 5)
            if any(not torch.equal(out[k], ref[k]) for k in ref):
                bad.append(out)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
