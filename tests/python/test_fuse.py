"""fuse_ on small models: correct rewrites, and refusals when the LayerNorm output is
read elsewhere (found by torch.fx, or by a watched example forward)."""

import copy

import pytest
import torch
from torch import nn

import lnlinear


class Conv1D(nn.Module):
    """Same name and layout as Hugging Face's GPT-2 Conv1D: weight [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.2)
        self.bias = nn.Parameter(torch.randn(nf) * 0.2)

    def forward(self, x):
        shape = x.size()[:-1] + (self.nf,)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(shape)


def _randomize(model):
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.5).add_(0.1)
    return model


class Block(nn.Module):
    def __init__(self, linear_cls=nn.Linear):
        super().__init__()
        self.ln = nn.LayerNorm(16)
        self.fc = linear_cls(16, 24) if linear_cls is nn.Linear else linear_cls(24, 16)
        self.out = nn.Linear(24, 16)

    def forward(self, x):
        return x + self.out(torch.relu(self.fc(self.ln(x))))


class Leaky(Block):
    def forward(self, x):
        h = self.ln(x)
        return self.out(self.fc(h)) + h  # ln's output is also a residual input


class Untraceable(Block):
    """Data-dependent control flow: torch.fx cannot trace it."""

    def __init__(self, leak):
        super().__init__()
        self.leak = leak

    def forward(self, x):
        h = self.ln(x)
        y = self.out(self.fc(h))
        if bool(y.sum() > -1e30):
            y = y + (h.mean() if self.leak else 0.0)
        return y


class ReturnsLnOutput(Block):
    def forward(self, x):
        if bool(x.sum() > -1e30):  # untraceable, so only the example run can judge
            pass
        h = self.ln(x)
        return self.fc(h), h


def _check_same(model, fused, x):
    torch.testing.assert_close(fused(x), model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("linear_cls", [nn.Linear, Conv1D])
def test_fuse_block(linear_cls):
    model = _randomize(Block(linear_cls))
    fused = copy.deepcopy(model)
    out = lnlinear.fuse_(fused, [(fused.ln, fused.fc)])
    assert out is fused
    assert isinstance(fused.ln, nn.Identity)
    assert isinstance(fused.fc, lnlinear.LayerNormLinear)
    assert fused.fc.weight.shape == (24, 16)
    _check_same(model, fused, torch.randn(3, 5, 16))


@pytest.mark.parametrize("linear_cls", [nn.Linear, Conv1D])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=lambda d: str(d).replace("torch.", ""))
def test_fuse_16bit_block_on_cpu(dtype, linear_cls):
    # A bf16/f16 model on the CPU fuses into a LayerNormLinear of its dtype, and the fused
    # model's output and gradients are no further from the float64 model than twice the
    # unfused 16-bit model's error (or the C tests' bound: bf16 1e-2, f16 2e-3).
    from _util import rel_err
    bound = {torch.bfloat16: 1e-2, torch.float16: 2e-3}[dtype]
    model = _randomize(Block(linear_cls)).to(dtype)
    fused = copy.deepcopy(model)
    lnlinear.fuse_(fused, [(fused.ln, fused.fc)])
    assert isinstance(fused.fc, lnlinear.LayerNormLinear) and fused.fc.weight.dtype == dtype
    ref = copy.deepcopy(model).double()
    x = (3 + 2 * torch.randn(6, 16)).to(dtype)
    outs = []
    for m in (model, fused, ref):
        xi = x.detach().to(next(m.parameters()).dtype, copy=True).requires_grad_()
        y = m(xi)
        y.square().sum().backward()
        assert y.dtype == xi.dtype
        outs.append([y.detach(), xi.grad, m.out.weight.grad, m.out.bias.grad])
    for i, (u, f, r) in enumerate(zip(*outs)):
        assert f.dtype == dtype
        e_f, e_u = rel_err(f, r), rel_err(u, r)
        assert e_f <= max(2 * e_u, bound), f"output {i}: fused {e_f:.3e} vs unfused {e_u:.3e}"


def test_fuse_by_name_and_gradients():
    model = _randomize(Block())
    fused = copy.deepcopy(model)
    lnlinear.fuse_(fused, [("ln", "fc")], recompute=False)
    assert fused.fc.recompute is False
    x = torch.randn(7, 16)
    model(x).square().sum().backward()
    fused(x).square().sum().backward()
    g = {n: p.grad for n, p in fused.named_parameters()}
    torch.testing.assert_close(g["fc.ln_weight"], model.ln.weight.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(g["fc.ln_bias"], model.ln.bias.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(g["fc.weight"], model.fc.weight.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(g["fc.bias"], model.fc.bias.grad, rtol=1e-4, atol=1e-5)


def test_refuses_leak_found_by_fx():
    model = _randomize(Leaky())
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(lnlinear.FusionError, match="ln.*also used"):
        lnlinear.fuse_(model, [(model.ln, model.fc)])
    # Nothing was changed.
    assert isinstance(model.ln, nn.LayerNorm) and isinstance(model.fc, nn.Linear)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_refuses_linear_on_other_input():
    class Dropped(Block):
        def forward(self, x):
            return self.fc(torch.tanh(self.ln(x)))

    model = Dropped()
    with pytest.raises(lnlinear.FusionError):
        lnlinear.fuse_(model, [(model.ln, model.fc)])


def test_refuses_layernorm_feeding_two_linears():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)
            self.q = nn.Linear(8, 8)
            self.k = nn.Linear(8, 8)

        def forward(self, x):
            h = self.ln(x)
            return self.q(h) * self.k(h)

    model = Two()
    with pytest.raises(lnlinear.FusionError, match="also used"):
        lnlinear.fuse_(model, [(model.ln, model.q)])


def test_untraceable_model_checked_with_example_inputs():
    x = torch.randn(4, 16)
    good = _randomize(Untraceable(leak=False))
    fused = copy.deepcopy(good)
    lnlinear.fuse_(fused, [(fused.ln, fused.fc)], example_inputs=(x,))
    _check_same(good, fused, x)

    bad = Untraceable(leak=True)
    with pytest.raises(lnlinear.FusionError, match="also read by mean"):
        lnlinear.fuse_(bad, [(bad.ln, bad.fc)], example_inputs=(x,))

    returns = ReturnsLnOutput()
    with pytest.raises(lnlinear.FusionError, match="returned by the model"):
        lnlinear.fuse_(returns, [(returns.ln, returns.fc)], example_inputs=(x,))


def test_untraceable_model_without_example_is_callers_guarantee():
    # Documented: without fx or an example forward nothing can be checked.
    bad = Untraceable(leak=True)
    lnlinear.fuse_(bad, [(bad.ln, bad.fc)])
    assert isinstance(bad.fc, lnlinear.LayerNormLinear)


def test_bad_pairs():
    model = Block()
    other = nn.Linear(16, 24)
    with pytest.raises(ValueError, match="not a submodule"):
        lnlinear.fuse_(model, [(model.ln, other)])
    with pytest.raises(ValueError, match="no submodule"):
        lnlinear.fuse_(model, [("ln", "nope")])
    with pytest.raises(TypeError, match="LayerNorm"):
        lnlinear.fuse_(model, [(model.fc, model.out)])
    with pytest.raises(TypeError, match="nn.Linear"):
        lnlinear.fuse_(model, [(model.ln, model.ln)])
    with pytest.raises(TypeError, match="pair"):
        lnlinear.fuse_(model, [model.ln])
    with pytest.raises(lnlinear.FusionError, match="more than one pair"):
        lnlinear.fuse_(model, [(model.ln, model.fc), (model.ln, model.out)])
    with pytest.raises(ValueError, match="in_features|features"):
        lnlinear.fuse_(model, [(model.ln, model.out)])


def test_refuses_shared_module():
    model = Block()
    model.alias = model.ln  # the same LayerNorm registered twice
    with pytest.raises(lnlinear.FusionError, match="shared"):
        lnlinear.fuse_(model, [(model.ln, model.fc)])
