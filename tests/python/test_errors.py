"""Bad input raises ValueError/TypeError naming the argument; never a crash."""

import pytest
import torch

import lnlinear
from _util import make_inputs
from conftest import DEVICES


def good(device="cpu", dtype=torch.float32):
    inputs, _ = make_inputs((4,), 10, 6, dtype, device)
    return inputs


def call(inputs, **kw):
    return lnlinear.layernorm_linear(*inputs, **kw)


@pytest.mark.parametrize("index,bad,exc,words", [
    (0, torch.randn(4, 11), ValueError, ["x.shape[-1]", "11", "linear_weight"]),
    (0, torch.randn(()), ValueError, ["x", "dimension"]),
    (0, torch.randn(4, 0), ValueError, ["in_features"]),
    (0, [[1.0] * 10], TypeError, ["x", "torch.Tensor"]),
    (0, torch.randn(4, 10, dtype=torch.float64), TypeError, ["ln_weight", "dtype"]),
    # bfloat16 is a CPU dtype now (16-bit storage, float32 arithmetic): bf16 x beside
    # float32 parameters is a mismatch; a dtype no device takes names x, cpu and the list
    (0, torch.randn(4, 10).to(torch.bfloat16), TypeError, ["ln_weight", "bfloat16", "float32"]),
    (0, torch.randn(4, 10, dtype=torch.complex64), TypeError,
     ["x", "complex64", "cpu", "float32, float64, bfloat16, float16"]),
    (0, torch.randint(0, 5, (4, 10)), TypeError, ["x", "int64"]),
    (1, torch.randn(9), ValueError, ["ln_weight", "[10]"]),
    (1, torch.randn(10, 1), ValueError, ["ln_weight"]),
    (2, torch.randn(10, dtype=torch.float16), TypeError, ["ln_bias", "float16"]),
    (3, torch.randn(6, 9), ValueError, ["linear_weight", "in_features"]),
    (3, torch.randn(6 * 10), ValueError, ["linear_weight", "2-D"]),
    (3, torch.randn(0, 10), ValueError, ["out_features"]),
    (4, torch.randn(7), ValueError, ["linear_bias", "[6]"]),
    (4, 3.0, TypeError, ["linear_bias"]),
])
def test_bad_argument(index, bad, exc, words):
    inputs = good()
    inputs[index] = bad
    with pytest.raises(exc) as info:
        call(inputs)
    for w in words:
        assert w in str(info.value), f"{w!r} not in {info.value}"


@pytest.mark.parametrize("kw,exc,word", [
    (dict(eps=0.0), ValueError, "eps"),
    (dict(eps=-1e-5), ValueError, "eps"),
    (dict(eps=float("nan")), ValueError, "eps"),
    (dict(eps="1e-5"), TypeError, "eps"),
    (dict(recompute=1), TypeError, "recompute"),
    (dict(strategy="fastest"), ValueError, "strategy"),
    (dict(strategy=["auto"]), ValueError, "strategy"),
])
def test_bad_option(kw, exc, word):
    with pytest.raises(exc, match=word):
        call(good(), **kw)


@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("index", [1, 2, 3, 4])
def test_mixed_devices(index):
    inputs = good("cuda")
    inputs[index] = inputs[index].cpu()
    name = ["x", "ln_weight", "ln_bias", "linear_weight", "linear_bias"][index]
    with pytest.raises(ValueError, match=name):
        call(inputs)


@pytest.mark.parametrize("strategy", ["auto", "reference"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_16bit_on_cpu_is_accepted(dtype, strategy):
    # It raised TypeError ("not supported on cpu") before the CPU took 16-bit storage; now
    # every strategy serves it, REFERENCE included, and y comes back in x's dtype.
    assert dtype in lnlinear.ops.SUPPORTED_DTYPES["cpu"]
    inputs = good("cpu", dtype)
    y = call(inputs, strategy=strategy)
    assert y.dtype == dtype and y.shape == (4, 6) and torch.isfinite(y).all()
    leaves = [t.detach().requires_grad_() for t in inputs]
    call(leaves, strategy=strategy).sum().backward()
    assert all(t.grad.dtype == dtype and torch.isfinite(t.grad).all() for t in leaves)


@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
def test_float64_on_cuda_is_refused():
    with pytest.raises(TypeError, match="float64"):
        call(good("cuda", torch.float64))


def test_mixed_devices_cpu_meta():
    # Without a GPU, a meta tensor stands in for "another device".
    inputs = good()
    inputs[3] = inputs[3].to("meta")
    with pytest.raises(ValueError, match="linear_weight"):
        call(inputs)


def test_library_error_carries_its_message():
    # A malformed problem handed straight to the C library: its status and message
    # come back as an exception (here INVALID_ARGUMENT -> ValueError subclass).
    import ctypes
    from lnlinear import _clib
    p = _clib.Problem()
    p.rows, p.in_features, p.out_features, p.eps = 4, 10, 6, -1.0
    status = _clib.lib.lnl_check(ctypes.byref(p))
    with pytest.raises(lnlinear.LnlInvalidArgument, match="eps") as info:
        _clib.check(status, "lnl_check")
    assert isinstance(info.value, ValueError)


def test_reference_strategy_unavailable_for_bfloat16_reports_cleanly():
    if "cuda" not in DEVICES:
        pytest.skip("needs CUDA")
    with pytest.raises(lnlinear.LnlError):
        call(good("cuda", torch.bfloat16), strategy="reference")
