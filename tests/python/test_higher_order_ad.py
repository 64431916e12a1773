"""Derivatives the library's kernels do not form, which used to vanish silently.

Gradients of gradients (backward with create_graph=True) through every autograd path: the
C++ node, the Python node and the custom op (what torch.compile and dispatch modes take).
The library's backward has no derivative, so with create_graph=True the gradients come from
PyTorch's own ops (lnlinear/double_backward.py); before, they came back as constants and a
gradient penalty through the layer lost its terms.

Forward-mode AD (torch.autograd.forward_ad): a call with a dual operand runs on PyTorch's
ops (functional.py); before, y came back without a tangent.
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


def _jvp(fn, inputs, tangents):
    import torch.autograd.forward_ad as fwad
    with fwad.dual_level():
        duals = [None if t is None else (t if d is None else fwad.make_dual(t, d))
                 for t, d in zip(inputs, tangents)]
        y = fn(*duals)
        return fwad.unpack_dual(y).primal.clone(), fwad.unpack_dual(y).tangent


@pytest.mark.parametrize("path", ["cpp", "py"])
@pytest.mark.parametrize("which", ["x_only", "all"])
@pytest.mark.parametrize("lead", [(6,), (2, 3)], ids=["2d", "3d"])
def test_forward_mode_tangent_matches_eager(path, which, lead):
    inputs, _ = make_inputs(lead, 9, 5, torch.float64, "cpu")
    tangents = [None if t is None or (which == "x_only" and i > 0) else torch.randn_like(t)
                for i, t in enumerate(inputs)]
    y, ty = _jvp(lambda *a: _call(path, *a), inputs, tangents)
    ye, te = _jvp(torch_forward, inputs, tangents)
    assert ty is not None, "y came back without a tangent"
    torch.testing.assert_close(ty, te, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(y, ye, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", ["cpp", "py"])
def test_gradcheck_forward_mode(path):
    inputs, _ = make_inputs((4,), 6, 3, torch.float64, "cpu")
    ins = tuple(_leaves(inputs))
    assert torch.autograd.gradcheck(lambda *a: _call(path, *a), ins, check_forward_ad=True)


def test_forward_mode_mixed_call():
    # float32 x with a bf16 linear: the tangent in the linear's dtype, as eager's
    inputs, _ = make_inputs((8,), 16, 12, torch.float32, "cpu")
    inputs[3], inputs[4] = inputs[3].bfloat16(), inputs[4].bfloat16()
    tangents = [torch.randn_like(inputs[0])] + [None] * 4

    def eager(x, lnw, lnb, w, b):
        ln = torch.nn.functional.layer_norm(x, (x.shape[-1],), lnw, lnb, 1e-5)
        return torch.nn.functional.linear(ln.to(w.dtype), w, b)

    _, ty = _jvp(lambda *a: _call("cpp", *a), inputs, tangents)
    _, te = _jvp(eager, inputs, tangents)
    assert ty.dtype == torch.bfloat16
    assert torch.equal(ty, te)


def test_no_dual_level_keeps_the_library():
    # outside forward-mode AD (or inside a dual level with no dual operand) the call is
    # the library's: bitwise what the Python node gives, not PyTorch's ops
    import torch.autograd.forward_ad as fwad
    inputs, _ = make_inputs((32,), 48, 40, torch.float32, "cpu")
    with torch.no_grad():
        plain = lnlinear.layernorm_linear(*inputs)
        with fwad.dual_level():
            inside = lnlinear.layernorm_linear(*inputs)
        eager = torch_forward(*inputs)
    assert torch.equal(plain, inside)
    assert not torch.equal(plain, eager)  # (else this test could not tell the two apart)


@pytest.mark.parametrize("path", PATHS)
def test_forward_over_reverse_matches_eager(path):
    # the tangent of a gradient (a Hessian-vector product's route without create_graph):
    # a grad_output with a forward-mode tangent, backward through the layer
    import torch.autograd.forward_ad as fwad
    inputs, dy = make_inputs((7,), 9, 5, torch.float64, "cpu")
    tdy = torch.randn_like(dy)

    def tangent_of_grads(fn):
        ins = _leaves(inputs)
        y = fn(*ins)
        with fwad.dual_level():
            dyd = fwad.make_dual(dy, tdy)
            gs = torch.autograd.grad(y, [t for t in ins if t is not None], dyd)
            out = [fwad.unpack_dual(g) for g in gs]
        return [(o.primal, o.tangent) for o in out]

    ours, eager = tangent_of_grads(lambda *a: _call(path, *a)), tangent_of_grads(torch_forward)
    for (p, t), (pe, te) in zip(ours, eager):
        assert t is not None, "the gradient came back without a tangent"
        torch.testing.assert_close(p, pe, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(t, te, rtol=1e-12, atol=1e-12)
        assert not p.requires_grad  # no create_graph: no graph kept


def test_raw_ops_refuse_dual_operands():
    # torch.ops.lnlinear.forward / backward called directly with a dual operand would drop
    # its tangent; they refuse it by name instead
    import torch.autograd.forward_ad as fwad
    inputs, dy = make_inputs((4,), 6, 3, torch.float32, "cpu")
    x, lnw, lnb, w, b = inputs
    with fwad.dual_level():
        xd = fwad.make_dual(x, torch.randn_like(x))
        with pytest.raises(NotImplementedError, match="lnlinear::forward has no forward-mode"):
            torch.ops.lnlinear.forward(xd, lnw, lnb, w, b, 1e-5, False, 0)
        y, mean, rstd, _ = torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, False, 0)
        dyd = fwad.make_dual(dy, torch.randn_like(dy))
        with pytest.raises(NotImplementedError, match="lnlinear::backward has no forward-mode"):
            torch.ops.lnlinear.backward(dyd, x, lnw, lnb, w, mean, rstd, None, 1e-5, 0,
                                        [True] * 5)
