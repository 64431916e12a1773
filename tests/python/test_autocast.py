"""layernorm_linear under torch.autocast (python/lnlinear/autocast.py): float32 operands run
in autocast's dtype, as F.linear's do: the linear's alone, on the CPU and on CUDA (the
library's mixed call, LayerNorm on the float32 x); where the LayerNorm's parameters are
16-bit already, all of them, x centred in float32 first. y and the gradients against float64
no worse than eager autocast's own (F.layer_norm then F.linear)."""

import os
import sys

import pytest
import torch
import torch.nn.functional as F

import lnlinear
from _util import eager_node, make_inputs
from conftest import DEVICES
from lnlinear.ops import mixed_ok

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from autocast_step import kept_bytes  # noqa: E402

EPS = 1e-5
AUTOCAST_DTYPES = [torch.bfloat16, torch.float16]
CASES = [(d, t) for d in DEVICES for t in AUTOCAST_DTYPES]


def _ids(v):
    return str(v).replace("torch.", "") if isinstance(v, torch.dtype) else str(v)


def _node_or_skip(node):
    from lnlinear import _cpp
    if node == "cpp" and not _cpp.available():
        pytest.skip(f"C++ op not loaded: {_cpp.reason}")


def _inputs(device, M=96, K=192, N=80, x_dtype=torch.float32, params=torch.float32):
    """Rows of two kinds: mean 3, spread 2, and (odd rows) mean 1e3 + 3, spread 2: rounded to
    bfloat16 as they are, the odd rows would keep no bit of their spread."""
    inputs, dy = make_inputs((M,), K, N, torch.float64, "cpu")
    inputs[0][1::2] += 1e3
    x = inputs[0].to(device=device, dtype=x_dtype)
    rest = [t.to(device=device, dtype=params) for t in inputs[1:]]
    return [x] + rest, dy.to(device)


def _eager(x, lnw, lnb, w, b):
    return F.linear(F.layer_norm(x, (x.shape[-1],), lnw, lnb, EPS), w, b)


def _ours(*a):
    return lnlinear.layernorm_linear(*a, eps=EPS)


def _run(fn, inputs, dy, device, dtype):
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    with torch.autocast(device, dtype=dtype):
        y = fn(*leaves)
    grads = torch.autograd.grad(y, leaves, dy.to(y.dtype))
    return y, grads


def _errors(y, grads, inputs, dy):
    ref = [t.detach().double().cpu().requires_grad_() for t in inputs]
    y_ref = _eager(*ref)
    g_ref = torch.autograd.grad(y_ref, ref, dy.double().cpu())
    out = [y] + list(grads)
    want = [y_ref] + list(g_ref)
    return [((a.double().cpu() - r).abs().max() / r.abs().max()).item() for a, r in zip(out, want)]


def _eager_or_skip(inputs, dy, device, dtype):
    try:
        return _run(_eager, inputs, dy, device, dtype)
    except RuntimeError as e:  # an older torch without this autocast dtype on this device
        pytest.skip(f"eager autocast {dtype} on {device}: {e}")


@pytest.mark.parametrize("node", ["cpp", "python"])
@pytest.mark.parametrize("device,dtype", CASES, ids=_ids)
def test_float32_operands_run_in_the_autocast_dtype(device, dtype, node):
    _node_or_skip(node)
    inputs, dy = _inputs(device)
    y_e, g_e = _eager_or_skip(inputs, dy, device, dtype)
    with eager_node(node == "cpp"):
        y, grads = _run(_ours, inputs, dy, device, dtype)
    assert y.dtype == dtype == y_e.dtype
    assert all(g.dtype == torch.float32 for g in grads)
    ours, eager = _errors(y, grads, inputs, dy), _errors(y_e, g_e, inputs, dy)
    names = ["y", "dx", "dln_weight", "dln_bias", "dlinear_weight", "dlinear_bias"]
    # Ours rounds gamma and beta to the autocast dtype too, and the centred x: up to ~2x
    # eager's error; rounding x uncentred reads ~0.4-0.7 (the odd rows, bench/autocast_step.py).
    floor = 2e-3 if dtype == torch.bfloat16 else 3e-4
    for n, a, e in zip(names, ours, eager):
        assert a <= 2.5 * max(e, floor), f"{n}: {a:.2e} against eager autocast's {e:.2e}"


def _mixed(device, dtype):
    """Whether the library takes this device's float32 x beside a linear in dtype."""
    return mixed_ok(torch.float32, dtype, device)


@pytest.mark.parametrize("device,dtype", CASES, ids=_ids)
def test_the_call_is_the_mixed_op(device, dtype):
    # Where the library takes the mix (the CPU), bit for bit: the op on the float32 x,
    # ln_weight and ln_bias as they are and the linear's operands rounded, autocast off;
    # dx, dln_weight and dln_bias float32 from the library, the linear's gradients in the
    # autocast dtype, cast to float32 by autograd.
    if not _mixed(device, dtype):
        pytest.skip(f"{device} takes every operand in {dtype}")
    inputs, dy = _inputs(device, M=16, K=40, N=24)
    y, grads = _run(_ours, inputs, dy, device, dtype)
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    w16 = leaves[3].detach().to(dtype).requires_grad_()
    b16 = leaves[4].detach().to(dtype).requires_grad_()
    y2 = _ours(leaves[0], leaves[1], leaves[2], w16, b16)
    assert y2.dtype == dtype
    g2 = torch.autograd.grad(y2, leaves[:3] + [w16, b16], dy.to(dtype))
    assert torch.equal(y, y2)
    assert all(g.dtype == torch.float32 for g in g2[:3]) and g2[3].dtype == dtype
    for a, b in zip(grads[:3], g2[:3]):
        assert torch.equal(a, b)
    for a, b in zip(grads[3:], g2[3:]):
        assert torch.equal(a, b.float())


@pytest.mark.parametrize("device,dtype", CASES, ids=_ids)
def test_the_call_is_the_op_on_centred_operands(device, dtype):
    # Where the library does not take the mix (here: a float32 x beside LayerNorm
    # parameters already in the autocast dtype), what the rule does, bit for bit: the op in
    # the autocast dtype on x - mean(x) (in float32, rounded once) and the parameters
    # rounded, autocast off; dx is the op's gradient for the centred x, cast to float32. The
    # shift's own backward would subtract dx's row mean, which LayerNorm's gradient has (up
    # to rounding) none of.
    inputs, dy = _inputs(device, M=16, K=40, N=24)
    inputs[1], inputs[2] = inputs[1].to(dtype), inputs[2].to(dtype)
    y, grads = _run(_ours, inputs, dy, device, dtype)
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    x = leaves[0].detach()
    xc = (x - x.mean(dim=-1, keepdim=True)).to(dtype).requires_grad_()
    y2 = _ours(xc, *[t.to(dtype) for t in leaves[1:]])
    g2 = torch.autograd.grad(y2, [xc] + leaves[1:], dy.to(dtype))
    assert torch.equal(y, y2)
    assert torch.equal(grads[0], g2[0].float())
    for a, b in zip(grads[1:], g2[1:]):
        assert torch.equal(a, b)
    row_mean = grads[0].double().mean(dim=-1).abs().max()
    assert row_mean <= 1e-2 * grads[0].double().abs().max()


@pytest.mark.parametrize("device,dtype", CASES, ids=_ids)
def test_a_16_bit_x_with_float32_parameters(device, dtype):
    # x already in the autocast dtype (a previous layer's output), the parameters float32
    # (master weights): x is taken as it is, the parameters rounded; dx in x's dtype.
    inputs, dy = _inputs(device, x_dtype=dtype)
    y_e, g_e = _eager_or_skip(inputs, dy, device, dtype)
    y, grads = _run(_ours, inputs, dy, device, dtype)
    assert y.dtype == dtype and grads[0].dtype == dtype
    assert all(g.dtype == torch.float32 for g in grads[1:])
    ours, eager = _errors(y, grads, inputs, dy), _errors(y_e, g_e, inputs, dy)
    floor = 2e-3 if dtype == torch.bfloat16 else 3e-4
    for a, e in zip(ours, eager):
        assert a <= 2.5 * max(e, floor)


@pytest.mark.parametrize("device,dtype", CASES, ids=_ids)
def test_operands_already_in_the_dtype_are_left_alone(device, dtype):
    inputs, dy = _inputs(device, M=8, K=24, N=16, x_dtype=dtype, params=dtype)
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    y0 = _ours(*leaves)
    g0 = torch.autograd.grad(y0, leaves, dy.to(dtype))
    y1, g1 = _run(_ours, inputs, dy, device, dtype)
    assert torch.equal(y0, y1)
    for a, b in zip(g0, g1):
        assert torch.equal(a, b)


def test_float64_is_left_alone():
    # autocast casts no float64 tensor; neither does the rule
    inputs, dy = make_inputs((6,), 12, 8, torch.float64, "cpu")
    leaves = [t.detach().clone().requires_grad_() for t in inputs]
    y0 = _ours(*leaves)
    y1, _ = _run(_ours, inputs, dy, "cpu", torch.bfloat16)
    assert y1.dtype == torch.float64 and torch.equal(y0, y1)


def test_autocast_of_another_device_type_changes_nothing():
    # autocast is per device type: a CPU call inside CUDA's autocast runs as it is
    inputs, _ = make_inputs((6,), 12, 8, torch.float32, "cpu")
    y0 = _ours(*inputs)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=torch.cuda.is_available()):
        y1 = _ours(*inputs)
    assert y1.dtype == torch.float32 and torch.equal(y0, y1)


def _saved_bytes(fn, inputs, device, dtype):
    """Bytes autograd keeps for the backward, the leaves excluded; x reaches fn as a layer's
    output (x0 * 1.0, which keeps nothing), so that a float32 x kept for the backward
    counts, as it would in a model, where nothing else keeps it."""
    leaves = [t.detach().clone().requires_grad_() for t in inputs]

    def run():
        with torch.autocast(device, dtype=dtype):
            fn(leaves[0] * 1.0, *leaves[1:])
    return kept_bytes(run, leaves)


@pytest.mark.parametrize("device,dtype", CASES, ids=_ids)
def test_keeps_x_alone(device, dtype):
    M, K, N = 256, 128, 64
    inputs, _ = _inputs(device, M=M, K=K, N=N)
    ours = _saved_bytes(_ours, inputs, device, dtype)
    eager = _saved_bytes(_eager, inputs, device, dtype)
    # ours: x (float32 where the library takes the mix, else centred in 16 bits), mean and
    # rstd, the 16-bit weight the op reads again, the float32 LayerNorm parameters or their
    # 16-bit copies, and y where the library's backward reads it (lnl_backward_wants_y:
    # Hopper's FUSED one)
    x_bytes = 4 * M * K if _mixed(device, dtype) else 2 * M * K
    assert ours <= x_bytes + 2 * M * N + 8 * M + 2 * N * K + 8 * K + 1024, ours
    # eager: float32 x for the LayerNorm, its 16-bit output for the GEMM, and more
    assert eager >= 6 * M * K and ours < eager


def test_module_and_compile_under_autocast():
    # LayerNormLinear's parameters are float32 master weights; torch.compile traces the
    # rule (fullgraph) to the same bits as eager
    torch.manual_seed(0)
    layer = lnlinear.LayerNormLinear(48, 40)
    x = torch.randn(4, 6, 48) + 3

    def step(t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return layer(t)

    y0 = step(x)
    assert y0.dtype == torch.bfloat16 and y0.shape == (4, 6, 40)
    torch._dynamo.reset()
    y1 = torch.compile(step, fullgraph=True, backend="aot_eager")(x)
    assert torch.equal(y0, y1)


def test_errors_and_grad_modes_under_autocast():
    # bad operands get the plain path's messages; no_grad and inference_mode still cast
    x, w = torch.randn(3, 8) + 5, torch.randn(4, 8)
    for bad, match in (((x, None, None, torch.randn(4, 7)), "in_features mismatch"),
                       ((torch.randn(3, 0), None, None, torch.randn(4, 0)), "must be >= 1")):
        with pytest.raises(ValueError, match=match):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                lnlinear.layernorm_linear(*bad)
    for mode in (torch.no_grad, torch.inference_mode):
        with mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            assert lnlinear.layernorm_linear(x, None, None, w).dtype == torch.bfloat16
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert lnlinear.layernorm_linear(torch.randn(0, 8), None, None, w).shape == (0, 4)
