"""LayerNormLinear: parameters, initialization, from_modules."""

import pytest
import torch
from torch import nn

import lnlinear
from conftest import DEVICES


def test_parameters_and_init():
    m = lnlinear.LayerNormLinear(300, 20)
    names = dict(m.named_parameters())
    assert list(names) == ["ln_weight", "ln_bias", "weight", "bias"]
    assert m.weight.shape == (20, 300) and m.bias.shape == (20,)
    assert torch.equal(m.ln_weight, torch.ones(300)) and torch.equal(m.ln_bias, torch.zeros(300))
    bound = 300 ** -0.5  # nn.Linear's U(-1/sqrt(in), 1/sqrt(in))
    assert m.weight.abs().max() <= bound and m.weight.abs().max() > 0.9 * bound
    assert m.bias.abs().max() <= bound
    # Same init scheme as nn.Linear: compare spreads.
    ref = nn.Linear(300, 20)
    assert abs(m.weight.std().item() - ref.weight.std().item()) < 0.1 * ref.weight.std().item()
    assert "recompute=True" in repr(m)


def test_no_affine_no_bias():
    m = lnlinear.LayerNormLinear(8, 4, bias=False, elementwise_affine=False, dtype=torch.float64)
    assert m.ln_weight is None and m.ln_bias is None and m.bias is None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    x = torch.randn(3, 8, dtype=torch.float64)
    ref = nn.functional.linear(nn.functional.layer_norm(x, (8,)), m.weight)
    torch.testing.assert_close(m(x), ref)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("recompute", [True, False])
def test_from_modules_matches_pair(device, recompute):
    ln = nn.LayerNorm(24, eps=1e-6, device=device)
    nn.init.normal_(ln.weight)
    nn.init.normal_(ln.bias)
    lin = nn.Linear(24, 10, device=device)
    m = lnlinear.LayerNormLinear.from_modules(ln, lin, recompute=recompute)
    assert m.eps == 1e-6 and m.recompute == recompute and m.weight.device.type == device
    x = torch.randn(2, 5, 24, device=device)
    torch.testing.assert_close(m(x), lin(ln(x)))
    # Copies, not shared storage.
    with torch.no_grad():
        lin.weight.add_(1)
    assert not torch.equal(m.weight, lin.weight)


def test_from_modules_layernorm_without_bias():
    ln = nn.LayerNorm(6, bias=False)
    lin = nn.Linear(6, 3, bias=False)
    m = lnlinear.LayerNormLinear.from_modules(ln, lin)
    assert m.ln_bias is None and m.bias is None
    x = torch.randn(4, 6)
    torch.testing.assert_close(m(x), lin(ln(x)))


def test_from_modules_refuses_mismatch():
    with pytest.raises(ValueError, match="6 features"):
        lnlinear.LayerNormLinear.from_modules(nn.LayerNorm(6), nn.Linear(7, 3))
    with pytest.raises(ValueError, match="single last dimension"):
        lnlinear.LayerNormLinear.from_modules(nn.LayerNorm((2, 3)), nn.Linear(3, 3))
    with pytest.raises(TypeError, match="nn.Linear"):
        lnlinear.LayerNormLinear.from_modules(nn.LayerNorm(3), nn.Conv2d(3, 3, 1))
    with pytest.raises(TypeError, match="LayerNorm"):
        lnlinear.LayerNormLinear.from_modules(nn.BatchNorm1d(3), nn.Linear(3, 3))


def test_module_trains():
    torch.manual_seed(0)
    m = lnlinear.LayerNormLinear(16, 4)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x, target = torch.randn(32, 16), torch.randn(32, 4)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = nn.functional.mse_loss(m(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]
    assert all(p.grad is not None for p in m.parameters())


@pytest.mark.parametrize("recompute", [True, False])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=lambda d: str(d).replace("torch.", ""))
def test_16bit_module_on_cpu(dtype, recompute):
    # A bf16/f16 LayerNorm + Linear pair on the CPU (16-bit storage, float32 arithmetic):
    # the module keeps the dtype, and its output and every gradient stay within the C
    # tests' bounds of the float64 pair on the same 16-bit values.
    from _util import rel_err
    bound = {torch.bfloat16: 1e-2, torch.float16: 2e-3}[dtype]
    ln = nn.LayerNorm(40, dtype=dtype)
    with torch.no_grad():
        ln.weight.normal_(1.0, 0.5)
        ln.bias.normal_(0.0, 0.5)
    lin = nn.Linear(40, 24, dtype=dtype)
    m = lnlinear.LayerNormLinear.from_modules(ln, lin, recompute=recompute)
    assert all(p.dtype == dtype for p in m.parameters())
    assert lnlinear.LayerNormLinear(40, 24, dtype=dtype).weight.dtype == dtype
    x = (3 + 2 * torch.randn(2, 9, 40)).to(dtype).requires_grad_()
    dy = torch.randn(2, 9, 24).to(dtype)
    y = m(x)
    assert y.dtype == dtype and y.shape == (2, 9, 24)
    y.backward(dy)
    ref_ln, ref_lin = ln.double(), lin.double()
    xd = x.detach().double().requires_grad_()
    yd = ref_lin(ref_ln(xd))
    yd.backward(dy.double())
    pairs = [("y", y.detach(), yd.detach()), ("x", x.grad, xd.grad),
             ("ln_weight", m.ln_weight.grad, ref_ln.weight.grad),
             ("ln_bias", m.ln_bias.grad, ref_ln.bias.grad),
             ("weight", m.weight.grad, ref_lin.weight.grad), ("bias", m.bias.grad, ref_lin.bias.grad)]
    for name, ours, ref in pairs:
        assert ours.dtype == dtype, name
        assert rel_err(ours, ref) <= bound, f"{name}: {rel_err(ours, ref):.3e} > {bound}"
