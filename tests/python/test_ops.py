"""The custom ops themselves: gradcheck, opcheck, empty batches, saved tensors."""

import pytest
import torch

import lnlinear
from _util import eager_node, make_inputs, rel_err, torch_forward
from conftest import DEVICE_DTYPES, DEVICES, dtype_id

STRATEGY_AUTO = 0


def _leaf(inputs, requires_grad=True):
    return [None if t is None else t.detach().requires_grad_(requires_grad) for t in inputs]


@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("ln_affine", [True, False])
def test_gradcheck_float64(recompute, ln_affine):
    inputs, _ = make_inputs((2, 3), 5, 4, torch.float64, "cpu", ln_affine=ln_affine)
    inputs = _leaf(inputs)

    def fn(*a):
        return lnlinear.layernorm_linear(*a, recompute=recompute)

    assert torch.autograd.gradcheck(fn, tuple(inputs), eps=1e-6, atol=1e-8, rtol=1e-6)


def _opcheck_cases(device, dtype):
    for keep in (False, True):
        for affine in (True, False):
            inputs, dy = make_inputs((6,), 9, 7, dtype, device, ln_affine=affine)
            yield inputs, dy, keep


def _skip_opcheck(device, dtype):
    # float32/float64, and bfloat16 on the CPU: there the fake kernel's float32 mean/rstd
    # beside a 16-bit y is the contract to hold (CUDA's 16-bit runs are left out for time)
    if dtype not in (torch.float32, torch.float64) and (device, dtype) != ("cpu", torch.bfloat16):
        pytest.skip("one float32 run per device is enough for the op contract")


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
def test_opcheck_forward(device, dtype):
    _skip_opcheck(device, dtype)
    for inputs, _, keep in _opcheck_cases(device, dtype):
        for rg in (False, True):
            args = tuple(_leaf(inputs, rg)) + (1e-5, keep, STRATEGY_AUTO)
            torch.library.opcheck(torch.ops.lnlinear.forward.default, args)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
def test_opcheck_backward(device, dtype):
    _skip_opcheck(device, dtype)
    for inputs, dy, keep in _opcheck_cases(device, dtype):
        x, lnw, lnb, w, b = inputs
        y, mean, rstd, ln_out = torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, keep,
                                                           STRATEGY_AUTO)
        needs = [True, lnw is not None, lnb is not None, True, True]
        args = (dy.reshape(6, 7), x, lnw, lnb, w, mean, rstd, ln_out if keep else None,
                1e-5, STRATEGY_AUTO, needs)
        torch.library.opcheck(torch.ops.lnlinear.backward.default, args)
        # mean/rstd omitted: the library recomputes them from x.
        args = args[:5] + (None, None, None) + args[8:]
        torch.library.opcheck(torch.ops.lnlinear.backward.default, args)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=dtype_id)
def test_statistics_match_layer_norm(dtype):
    # mean/rstd in float32 for every dtype but float64, 16-bit ones included (PyTorch's own
    # CPU native_layer_norm rounds them to bf16/f16: the 16-bit ones are held to float64
    # statistics of the stored x instead); ln_out in x's dtype.
    inputs, _ = make_inputs((10,), 33, 8, dtype, "cpu")
    x, lnw, lnb, w, b = inputs
    y, mean, rstd, ln_out = torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, True,
                                                       STRATEGY_AUTO)
    assert mean.dtype == rstd.dtype == torch.float32 and y.dtype == ln_out.dtype == dtype
    if dtype == torch.float32:
        _, ref_mean, ref_rstd = torch.ops.aten.native_layer_norm(x, [33], lnw, lnb, 1e-5)
        ref_ln = torch.nn.functional.layer_norm(x, (33,), lnw, lnb)
    else:
        xd = x.double()
        ref_mean = xd.mean(1).float()
        ref_rstd = (xd.var(1, unbiased=False) + 1e-5).rsqrt().float()
        ref_ln = torch.nn.functional.layer_norm(xd, (33,), lnw.double(), lnb.double()).to(dtype)
    torch.testing.assert_close(mean, ref_mean.view(-1))
    torch.testing.assert_close(rstd, ref_rstd.view(-1))
    torch.testing.assert_close(ln_out, ref_ln)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("lead", [(0,), (0, 5), (3, 0)])
def test_empty_batch(device, dtype, lead):
    inputs, _ = make_inputs((1,), 6, 4, dtype, device)
    inputs = _leaf(inputs)
    x = torch.empty(*lead, 6, dtype=dtype, device=device, requires_grad=True)
    y = lnlinear.layernorm_linear(x, *inputs[1:])
    assert y.shape == (*lead, 4) and y.dtype == dtype
    y.sum().backward()
    assert x.grad.shape == x.shape
    for t in inputs[1:]:
        assert t.grad is not None and t.grad.shape == t.shape
        assert not t.grad.any(), "parameter gradients of an empty batch must be zero"


# Without autograd the forward asks the library for y alone (mean, rstd and ln_out NULL),
# whatever recompute says: every strategy must serve that.
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("strategy", ["auto", "fused", "unfused"])
@pytest.mark.parametrize("recompute", [True, False])
def test_no_grad_and_inference_mode(device, strategy, recompute):
    inputs, _ = make_inputs((3,), 16, 8, torch.float32, device)
    ref = torch_forward(*inputs)
    for mode in (torch.no_grad, torch.inference_mode):
        with mode():
            torch.testing.assert_close(
                lnlinear.layernorm_linear(*inputs, recompute=recompute, strategy=strategy), ref)


# The same y-alone forward in 16 bits on the CPU, on both eager nodes, against float64
# (the C tests' bounds).
@pytest.mark.parametrize("node", ["cpp", "python"])
@pytest.mark.parametrize("strategy", ["auto", "fused", "unfused", "reference"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_no_grad_16bit_cpu(dtype, strategy, node):
    from lnlinear import _cpp
    if node == "cpp" and not _cpp.available():
        pytest.skip(f"C++ op not loaded: {_cpp.reason}")
    inputs, _ = make_inputs((5, 3), 40, 24, dtype, "cpu")
    ref = torch_forward(*[None if t is None else t.double() for t in inputs])
    bound = {torch.bfloat16: 1e-2, torch.float16: 2e-3}[dtype]
    with eager_node(node == "cpp"):
        for mode in (torch.no_grad, torch.inference_mode):
            with mode():
                y = lnlinear.layernorm_linear(*_leaf(inputs), strategy=strategy)
            assert y.dtype == dtype and y.grad_fn is None and y.shape == ref.shape
            assert rel_err(y, ref) <= bound


def test_recompute_changes_what_is_saved():
    # recompute=False keeps the M x K ln_out alive for the backward; True does not.
    inputs, _ = make_inputs((64,), 128, 8, torch.float32, "cpu")
    inputs = _leaf(inputs)
    saved = {}
    for recompute in (True, False):
        sizes = []

        def pack(t):
            sizes.append(t.numel())
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            lnlinear.layernorm_linear(*inputs, recompute=recompute)
        saved[recompute] = sizes
    assert 64 * 128 not in saved[True][1:]  # only x itself is M x K
    assert saved[False].count(64 * 128) == saved[True].count(64 * 128) + 1


def test_backward_uses_grad_output():
    # A backward that ignored dy (e.g. assumed ones) would pass a .sum() test.
    inputs, dy = make_inputs((5,), 12, 7, torch.float64, "cpu")
    inputs = _leaf(inputs)
    y = lnlinear.layernorm_linear(*inputs)
    g1 = torch.autograd.grad(y, inputs, dy, retain_graph=True)
    g2 = torch.autograd.grad(y, inputs, 2 * dy)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(2 * a, b)


def test_library_enums_match_header():
    from lnlinear import _clib
    sizes = {_clib.DTYPE_F32: 4, _clib.DTYPE_F64: 8, _clib.DTYPE_BF16: 2, _clib.DTYPE_F16: 2}
    for code, size in sizes.items():
        assert _clib.lib.lnl_dtype_size(code) == size
    assert lnlinear.library_version()[:2] == _clib.ABI_VERSION


def test_binding_refuses_another_abi():
    # The ctypes Problem mirrors one version's struct; a library of another 0.x minor (or
    # another major) would read it wrongly, so loading one is refused with both versions.
    from lnlinear import _clib
    major, minor = _clib.ABI_VERSION
    assert _clib.abi_mismatch((major, minor, 0)) is None
    assert _clib.abi_mismatch((major, minor, 7)) is None
    for other in [(major, minor - 1, 0), (major, minor + 1, 0), (major + 1, minor, 0)]:
        why = _clib.abi_mismatch(other)
        assert why and ".".join(map(str, other)) in why and f"{major}.{minor}" in why


def _custom_op_path(inputs, recompute):
    # What layernorm_linear runs when compiling: the registered op and its autograd.
    x, lnw, lnb, w, b = inputs
    return torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, not recompute, STRATEGY_AUTO)[0]


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("recompute", [True, False])
def test_eager_fast_path_matches_custom_op(device, dtype, recompute):
    # Plain eager calls skip the dispatcher (ops.LayerNormLinearFunction); the results and
    # all five gradients must be bitwise those of the custom op.
    inputs, dy = make_inputs((33,), 40, 24, dtype, device)
    dy = dy.reshape(33, 24)
    outs = []
    for fn in (lambda a: lnlinear.layernorm_linear(*a, recompute=recompute),
               lambda a: _custom_op_path(a, recompute)):
        leaves = _leaf(inputs)
        y = fn(leaves)
        outs.append((y,) + torch.autograd.grad(y, leaves, dy))
    for a, b in zip(*outs):
        assert torch.equal(a, b)


def test_eager_fast_path_is_taken_only_for_plain_eager():
    from lnlinear import ops
    inputs, _ = make_inputs((4,), 8, 3, torch.float32, "cpu")
    assert ops.eager_fast_path_ok(*inputs)
    with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
        fake = [None if t is None else mode.from_tensor(t) for t in inputs]
        assert not ops.eager_fast_path_ok(*fake)
        # and the call itself still works there, through the custom op's fake kernel
        assert lnlinear.layernorm_linear(*fake).shape == (4, 3)
