"""torch.compile(fullgraph=True) through the custom ops: no graph break, same numbers.
Kept to two cases: compiling is slow on a 2-core machine."""

import pytest
import torch

import lnlinear
from _util import make_inputs
from conftest import DEVICES


def _compile_or_skip(fn, **kw):
    if not hasattr(torch, "compile"):
        pytest.skip("torch.compile is not available")
    return torch.compile(fn, fullgraph=True, **kw)


def _model_step(x, lnw, lnb, w, b, w2):
    # The op between ordinary torch ops, so inductor fuses around it.
    h = lnlinear.layernorm_linear(x * 1.5, lnw, lnb, w, b, recompute=False)
    return (torch.nn.functional.gelu(h) @ w2).square().mean()


# float32 on every device under test, and bfloat16 on the CPU (16-bit storage computed in
# float32 since commit 8f3218e: the fake kernel's float32 mean/rstd beside a bf16 y).
COMPILE_CASES = [(d, torch.float32) for d in DEVICES] + [("cpu", torch.bfloat16)]
# Eager and compiled bf16 may round the ops around ours (gelu, the square's mean) apart.
TOL = {torch.float32: dict(loss=(1e-5, 1e-6), grad=(1e-4, 1e-5)),
       torch.bfloat16: dict(loss=(2e-2, 1e-3), grad=(2e-2, 2e-2))}


@pytest.mark.parametrize("device,dtype", COMPILE_CASES, ids=lambda v: str(v).replace("torch.", ""))
def test_compile_fullgraph_matches_eager(device, dtype):
    torch._dynamo.reset()
    inputs, _ = make_inputs((4, 8), 48, 40, dtype, device)
    w2 = torch.randn(40, 5, device=device).to(dtype)
    step = _compile_or_skip(_model_step)
    results = []
    for fn in (_model_step, step):
        leaves = [t.detach().clone().requires_grad_() for t in inputs]
        try:
            loss = fn(*leaves, w2)
        except Exception as e:  # a missing C++ compiler etc. is not our bug
            kind = type(e).__name__
            if fn is step and ("Inductor" in kind or "BackendCompilerFailed" in kind) and (
                    "compiler" in str(e).lower() or "gcc" in str(e) or "g++" in str(e)):
                pytest.skip(f"inductor unusable here: {e}")
            raise
        loss.backward()
        results.append((loss.detach(), [t.grad for t in leaves]))
    (l_e, g_e), (l_c, g_c) = results
    tol = TOL[dtype]
    assert l_c.dtype == dtype and all(g.dtype == dtype for g in g_c)
    torch.testing.assert_close(l_c, l_e, rtol=tol["loss"][0], atol=tol["loss"][1])
    for a, b in zip(g_c, g_e):
        # bf16: atol relative to the gradient's own scale (8 bits whatever its size)
        scale = 1.0 if dtype == torch.float32 else b.abs().max().item()
        torch.testing.assert_close(a, b, rtol=tol["grad"][0], atol=tol["grad"][1] * scale)


def test_compile_dynamic_shapes_module():
    torch._dynamo.reset()
    m = lnlinear.LayerNormLinear(24, 12, dtype=torch.float64)
    cm = _compile_or_skip(m, dynamic=True, backend="aot_eager")
    for rows in (3, 7, 0):
        x = torch.randn(rows, 24, dtype=torch.float64)
        torch.testing.assert_close(cm(x), m(x))
