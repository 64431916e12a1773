"""The one mix of dtypes layernorm_linear takes (ops.MIXED_LINEAR_DTYPES; ln_float32 in
lnlinear.h): on the CPU and on CUDA, x, ln_weight and ln_bias in float32 with linear_weight and
linear_bias in bfloat16 or float16. y and the linear's gradients come back in the 16-bit
dtype, dx, dln_weight and dln_bias in float32; checked against float64 next to eager
PyTorch doing the same (F.layer_norm in float32, its output cast for F.linear in 16 bits),
and through every way a call can go: the eager autograd node, the custom ops
(torch.compile), each strategy, with and without a kept ln_out."""

import pytest
import torch
import torch.nn.functional as F

import lnlinear
from _util import make_inputs
from conftest import DEVICES

EPS = 1e-5
LINEAR_DTYPES = [torch.bfloat16, torch.float16]
NAMES = ["y", "dx", "dln_weight", "dln_bias", "dlinear_weight", "dlinear_bias"]


def _ids(v):
    return str(v).replace("torch.", "") if isinstance(v, torch.dtype) else str(v)


def _mixed_inputs(d, M=64, K=96, N=40, offset=3.0, device="cpu"):
    """float32 x (odd rows with mean 1e3: a 16-bit x would lose their spread), float32
    LayerNorm parameters, the linear in d, on device; float64 copies of the same values on
    the CPU."""
    inputs, dy = make_inputs((M,), K, N, torch.float64, "cpu", offset=offset)
    inputs[0][1::2] += 1e3
    x, lnw, lnb, w, b = inputs
    mixed = [t.to(device) for t in (x.float(), lnw.float(), lnb.float(), w.to(d), b.to(d))]
    return mixed, [t.cpu().double() for t in mixed], dy.to(device=device, dtype=d)


def _grads(fn, inputs, dy):
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    y = fn(*leaves)
    return y, torch.autograd.grad(y, leaves, dy.to(y.dtype))


def _eager(x, lnw, lnb, w, b):
    """What eager PyTorch does with these dtypes under autocast: LayerNorm in x's dtype,
    its output cast to the linear's."""
    return F.linear(F.layer_norm(x, (x.shape[-1],), lnw, lnb, EPS).to(w.dtype), w, b)


def _errors(y, grads, ref, dy):
    y_ref, g_ref = _grads(_eager, ref, dy.cpu().double())
    return [((a.cpu().double() - r).norm() / r.norm()).item()
            for a, r in zip([y] + list(grads), [y_ref] + list(g_ref))]


@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("strategy", ["auto", "fused", "unfused", "reference"])
@pytest.mark.parametrize("d", LINEAR_DTYPES, ids=_ids)
@pytest.mark.parametrize("device", DEVICES)
def test_against_float64_next_to_eager(device, d, strategy, recompute):
    # CUDA runs one order for every strategy (mixed_backend.cu), and no REFERENCE
    if device == "cuda" and strategy == "reference":
        pytest.skip("the REFERENCE strategy runs on the CPU only")
    mixed, ref, dy = _mixed_inputs(d, device=device)

    def ours(*a):
        return lnlinear.layernorm_linear(*a, eps=EPS, recompute=recompute, strategy=strategy)

    y, grads = _grads(ours, mixed, dy)
    assert y.dtype == d
    assert [g.dtype for g in grads] == [torch.float32] * 3 + [d] * 2
    y_e, g_e = _grads(_eager, mixed, dy)
    e_ours, e_eager = _errors(y, grads, ref, dy), _errors(y_e, g_e, ref, dy)
    # 16-bit outputs: both round y and the linear's gradients once; LN(x) is rounded to d
    # by eager's cast, and by ours where the GEMM multiplies bf16 operands
    floor = 4e-3 if d == torch.bfloat16 else 5e-4
    for n, a, e in zip(NAMES, e_ours, e_eager):
        assert a <= 1.5 * max(e, floor), f"{n}: {a:.2e} against eager's {e:.2e}"


@pytest.mark.parametrize("d", LINEAR_DTYPES, ids=_ids)
@pytest.mark.parametrize("device", DEVICES)
def test_compiled_custom_ops_match_eager(device, d):
    # the custom ops (fake kernels with the mixed dtypes) under torch.compile, fullgraph
    mixed, _, dy = _mixed_inputs(d, M=12, K=24, N=16, device=device)

    def f(*a):
        return lnlinear.layernorm_linear(*a, eps=EPS)

    y0, g0 = _grads(f, mixed, dy)
    torch._dynamo.reset()
    y1, g1 = _grads(torch.compile(f, fullgraph=True, backend="aot_eager"), mixed, dy)
    assert torch.equal(y0, y1)
    for a, b in zip(g0, g1):
        assert a.dtype == b.dtype and torch.equal(a, b)


@pytest.mark.parametrize("d", LINEAR_DTYPES, ids=_ids)
@pytest.mark.parametrize("device", DEVICES)
def test_the_ops_directly(device, d):
    # lnlinear::forward / backward with mixed operands: y and ln_out in the linear's dtype,
    # each gradient in its input's; a dy in x's dtype is refused by name
    mixed, _, dy = _mixed_inputs(d, M=8, K=16, N=12, device=device)
    x, lnw, lnb, w, b = mixed
    y, mean, rstd, ln_out = torch.ops.lnlinear.forward(x, lnw, lnb, w, b, EPS, True, 0)
    assert y.dtype == ln_out.dtype == d and mean.dtype == rstd.dtype == torch.float32
    ref = F.layer_norm(x, (16,), lnw, lnb, EPS).to(d)
    assert (ln_out.float() - ref.float()).abs().max() <= 1e-2 * ref.float().abs().max()
    grads = torch.ops.lnlinear.backward(dy, x, lnw, lnb, w, mean, rstd, ln_out, EPS, 0,
                                        [True] * 5)
    assert [g.dtype for g in grads] == [torch.float32] * 3 + [d] * 2
    with pytest.raises(ValueError, match="dy must be"):
        torch.ops.lnlinear.backward(dy.float(), x, lnw, lnb, w, mean, rstd, None, EPS, 0,
                                    [True] * 5)


def test_bad_mixes_are_refused_by_name():
    x, w = torch.randn(4, 8) + 3, torch.randn(5, 8).bfloat16()
    g32, b16 = torch.ones(8), torch.zeros(5, dtype=torch.bfloat16)
    ok = lnlinear.layernorm_linear(x, g32, g32 * 0, w, b16)
    assert ok.dtype == torch.bfloat16
    cases = [
        ((x, g32.bfloat16(), None, w, b16), "ln_weight has dtype bfloat16 but x has dtype float32"),
        ((x, g32, None, w, b16.half()), "linear_bias has dtype float16 but linear_weight"),
        ((x.double(), None, None, w, None), "linear_weight has dtype bfloat16 but x has dtype float64"),
        ((x.bfloat16(), None, None, w.float(), None), "all tensors must share one dtype"),
    ]
    for args, match in cases:
        with pytest.raises(TypeError, match=match):
            lnlinear.layernorm_linear(*args)


@pytest.mark.parametrize("d", LINEAR_DTYPES, ids=_ids)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(3, 5, 7), (300, 1024, 96), (64, 520, 130)], ids=str)
def test_shapes_and_missing_operands(device, d, shape):
    # rows of 5 (no vector loads), 1024 (the row kernels' other forms) and 520 (K % 8 != 0
    # for a 16-bit LN(x)); no LayerNorm parameters and no linear bias; against float64
    M, K, N = shape
    mixed, ref, dy = _mixed_inputs(d, M=M, K=K, N=N, device=device)
    mixed[1] = mixed[2] = mixed[4] = None
    ref[1] = ref[2] = ref[4] = None
    keep = [0, 3]
    leaves = [t.detach().clone().requires_grad_() if t is not None else None for t in mixed]
    y = lnlinear.layernorm_linear(*leaves, eps=EPS)
    grads = torch.autograd.grad(y, [leaves[i] for i in keep], dy)
    assert y.dtype == d and grads[0].dtype == torch.float32 and grads[1].dtype == d
    rl = [t.detach().clone().requires_grad_() if t is not None else None for t in ref]
    y_ref = _eager(*rl)
    g_ref = torch.autograd.grad(y_ref, [rl[i] for i in keep], dy.cpu().double())
    floor = 4e-3 if d == torch.bfloat16 else 5e-4
    for n, a, r in zip(["y", "dx", "dlinear_weight"], [y] + list(grads), [y_ref] + list(g_ref)):
        err = ((a.cpu().double() - r).norm() / r.norm()).item()
        assert err <= 2 * floor, f"{n}: {err:.2e}"


def test_a_row_far_from_zero_keeps_its_spread():
    # mean 1e3, spread 0.1: bf16 holds no bit of that spread (its step at 1e3 is 4), so a
    # 16-bit x would need autocast.py's centring; here x stays float32 in the
    # library, which is as accurate as eager's float32 LayerNorm, and a bf16 x is not
    torch.manual_seed(0)
    x = 1e3 + 0.1 * torch.randn(32, 64)
    w = (torch.randn(16, 64) / 8).bfloat16()
    ref = F.linear(F.layer_norm(x.double(), (64,), eps=EPS), w.double())

    def err(y):
        return ((y.double() - ref).norm() / ref.norm()).item()

    ours = err(lnlinear.layernorm_linear(x, None, None, w))
    eager = err(_eager(x, None, None, w, None))
    rounded = err(lnlinear.layernorm_linear(x.bfloat16(), None, None, w))
    assert ours <= 1.5 * max(eager, 4e-3) and rounded > 0.5, (ours, eager, rounded)
