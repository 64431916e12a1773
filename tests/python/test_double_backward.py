"""Gradients of gradients (backward with create_graph=True) through every autograd path:
the C++ node, the Python node and the custom op (what torch.compile and dispatch modes
take). The library's backward has no derivative, so with create_graph=True the gradients
come from PyTorch's own ops (lnlinear/double_backward.py); before that they came back as
constants and a gradient penalty through the layer silently lost its terms.
"""

import pytest
import torch

import lnlinear
from lnlinear import _cpp
from _util import eager_node, make_inputs, rel_err, torch_forward

PATHS = ["cpp", "py", "op"]
CPP_NODE = "torch::autograd::CppNode<lnlinear_torch::LayerNormLinearFn>"
PY_NODE = "LayerNormLinearFunctionBackward"


def _call(path, x, lnw, lnb, w, b, recompute=True):
    if path == "op":  # the registered op and its autograd, x as the op takes it: [M, K]
        y = torch.ops.lnlinear.forward(x.reshape(-1, x.shape[-1]), lnw, lnb, w, b, 1e-5,
                                       not recompute, lnlinear.ops.STRATEGIES["auto"])[0]
        return y.view(*x.shape[:-1], w.shape[0])
    with eager_node(path == "cpp"):
        y = lnlinear.layernorm_linear(x, lnw, lnb, w, b, recompute=recompute)
    if y.grad_fn is not None:  # (a reentrant checkpoint's first forward runs under no_grad)
        node = (y.grad_fn if y.dim() == 2 else y.grad_fn.next_functions[0][0]).name()
        assert node == (CPP_NODE if path == "cpp" and _cpp.available() else PY_NODE)
    return y


def _leaves(inputs, mask=(1, 1, 1, 1, 1)):
    return [None if t is None else t.detach().requires_grad_(bool(m))
            for t, m in zip(inputs, mask)]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("affine", ["full", "no_ln_params", "no_linear_bias"])
def test_gradgradcheck(path, recompute, affine):
    # float64 on the CPU: autograd's own finite-difference check of the second derivatives
    # of y (and of the first, which create_graph=False takes from the library)
    inputs, _ = make_inputs((5,), 7, 3, torch.float64, "cpu",
                            ln_affine=affine != "no_ln_params",
                            linear_bias=affine != "no_linear_bias")
    ins = tuple(_leaves(inputs))
    fn = lambda *a: _call(path, *a, recompute=recompute)  # noqa: E731
    assert torch.autograd.gradcheck(fn, ins)
    assert torch.autograd.gradgradcheck(fn, ins)


@pytest.mark.parametrize("path", PATHS)
def test_gradgradcheck_3d_and_partial(path):
    # a [2, 3, K] x, and only x and linear_weight requiring grad
    inputs, _ = make_inputs((2, 3), 6, 4, torch.float64, "cpu")
    ins = tuple(_leaves(inputs, (1, 0, 0, 1, 0)))
    fn = lambda *a: _call(path, *a)  # noqa: E731
    assert torch.autograd.gradgradcheck(fn, ins)


def _penalty_grads(fn, inputs, dy):
    # a gradient penalty (as in WGAN-GP or R1): loss = <y, dy> + |d<y, dy>/dx|^2, whose
    # parameter gradients need the derivative of dx
    ins = _leaves(inputs)
    y = fn(*ins)
    (gx,) = torch.autograd.grad(y, ins[0], dy, create_graph=True)
    assert gx.requires_grad, "dx came back as a constant under create_graph=True"
    loss = (y * dy).sum() + gx.square().sum()
    params = [t for t in ins if t is not None]
    return torch.autograd.grad(loss, params)


@pytest.mark.parametrize("path", PATHS)
def test_gradient_penalty_matches_eager(device, path):
    inputs, dy = make_inputs((16,), 32, 24, torch.float32, device)
    ours = _penalty_grads(lambda *a: _call(path, *a), inputs, dy)
    eager = _penalty_grads(torch_forward, inputs, dy)
    ref = _penalty_grads(torch_forward, [t.double() for t in inputs], dy.double())
    for name, o, e, r in zip(("x", "ln_weight", "ln_bias", "linear_weight", "linear_bias"),
                             ours, eager, ref):
        assert o.dtype == e.dtype and o.shape == e.shape, name
        assert rel_err(o, r) <= max(1.5 * rel_err(e, r), 1e-5), name


@pytest.mark.parametrize("path", ["cpp", "py"])
def test_first_order_under_create_graph_matches_the_library(path):
    # with create_graph=True the first-order values come from PyTorch's ops: they must
    # agree with the library's (float64: to rounding)
    inputs, dy = make_inputs((9,), 11, 5, torch.float64, "cpu")
    ins = _leaves(inputs)
    y = _call(path, *ins)
    plain = torch.autograd.grad(y, ins, dy, retain_graph=True)
    graphed = torch.autograd.grad(y, ins, dy, create_graph=True)
    for i, (p, g) in enumerate(zip(plain, graphed)):
        # dlinear_bias is dy's column sums: constant while dy is
        assert g.requires_grad == (i < 4)
        torch.testing.assert_close(g.detach(), p, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["cpp", "py"])
@pytest.mark.parametrize("linear_dtype", [torch.bfloat16, torch.float16])
def test_mixed_call_second_order(path, linear_dtype):
    # the CPU's mixed call (float32 LayerNorm, 16-bit linear): second-order gradients in
    # each input's dtype, equal to the same ops written out in eager PyTorch
    inputs, dy = make_inputs((8,), 16, 12, torch.float32, "cpu")
    inputs[3], inputs[4] = inputs[3].to(linear_dtype), inputs[4].to(linear_dtype)
    dy = dy.to(linear_dtype)

    def eager(x, lnw, lnb, w, b):
        ln = torch.nn.functional.layer_norm(x, (x.shape[-1],), lnw, lnb, 1e-5)
        return torch.nn.functional.linear(ln.to(w.dtype), w, b)

    ours = _penalty_grads(lambda *a: _call(path, *a), inputs, dy)
    want = _penalty_grads(eager, inputs, dy)
    for o, w, t in zip(ours, want, inputs):
        assert o.dtype == t.dtype
        torch.testing.assert_close(o, w, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("path", ["cpp", "py"])
def test_create_graph_ignores_autocast(path):
    # a float32 call whose create_graph backward runs inside an autocast region: the
    # recomputation runs in the saved dtypes (float32), as the library's own backward would
    inputs, dy = make_inputs((6,), 10, 7, torch.float32, "cpu")
    outside = _penalty_grads(lambda *a: _call(path, *a), inputs, dy)
    ins = _leaves(inputs)
    y = _call(path, *ins)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        (gx,) = torch.autograd.grad(y, ins[0], dy, create_graph=True)
    # (the second backward outside: inside, autocast would cast its matmuls, as eager's)
    loss = (y * dy).sum() + gx.square().sum()
    inside = torch.autograd.grad(loss, [t for t in ins if t is not None])
    for a, b in zip(outside, inside):
        assert b.dtype == torch.float32
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("how", ["plain", "retain_graph", "checkpoint", "checkpoint_reentrant"])
def test_first_order_backward_stays_on_the_library(monkeypatch, how):
    # Only create_graph=True may take PyTorch's ops: plain training backward, and the
    # backward of an activation checkpoint (which recomputes the forward under grad mode),
    # call the library. The Python node is watched directly; the C++ node's gradients must
    # then be bitwise the Python node's (the library's; PyTorch's ops would round apart).
    from lnlinear import ops
    calls = []
    real = ops.differentiable_gradients
    monkeypatch.setattr(ops, "differentiable_gradients",
                        lambda *a: calls.append(1) or real(*a))
    inputs, dy = make_inputs((32,), 48, 40, torch.float32, "cpu")

    def grads(path):
        ins = _leaves(inputs)
        f = lambda *a: _call(path, *a)  # noqa: E731
        if how.startswith("checkpoint"):
            from torch.utils.checkpoint import checkpoint
            y = checkpoint(f, *ins, use_reentrant=how.endswith("reentrant"))
        else:
            y = f(*ins)
        y.backward(dy, retain_graph=how == "retain_graph")
        return [t.grad for t in ins if t is not None]

    py = grads("py")
    assert not calls
    for a, b in zip(grads("cpp"), py):
        assert torch.equal(a, b)
