"""A real model: Hugging Face GPT-2 (random weights from a small config, no download)
with every ln_1 -> attn.c_attn and ln_2 -> mlp.c_fc pair fused."""

import copy
import json
import os

import pytest
import torch

import lnlinear
from _util import rel_err
from conftest import DEVICES, dtype_id

transformers = pytest.importorskip("transformers")

# bfloat16 on the CPU too: 16-bit storage accumulated in float32 (commits 8f3218e, cc15004).
CASES = [(d, t) for d in DEVICES for t in [torch.float32, torch.bfloat16]]
# Fused error vs a float64 model <= FACTOR x the unfused model's error, or FLOOR.
FACTOR = 2.0
FLOOR = {torch.float64: 1e-10, torch.float32: 1e-5, torch.bfloat16: 2e-2, torch.float16: 5e-3}
# Relative distance allowed between the two loss curves after 20 AdamW steps.
CURVE_TOL = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 1e-2}


def tiny_gpt2(device, dtype, n_layer=2, n_embd=64, n_head=4, vocab=128, n_positions=32):
    cfg = transformers.GPT2Config(
        n_layer=n_layer, n_embd=n_embd, n_head=n_head, vocab_size=vocab,
        n_positions=n_positions, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    with torch.no_grad():  # LayerNorms at ones/zeros would hide gamma/beta bugs
        for name, p in model.named_parameters():
            if ".ln_" in name:
                p.add_(0.2 * torch.randn_like(p))
    return model.to(device=device, dtype=dtype)


def pairs(model):
    return [p for b in model.transformer.h
            for p in ((b.ln_1, b.attn.c_attn), (b.ln_2, b.mlp.c_fc))]


def fused_copy(model, recompute=True, example=None):
    fused = copy.deepcopy(model)
    lnlinear.fuse_(fused, pairs(fused), recompute=recompute,
                   example_inputs=None if example is None else (example,))
    return fused


def fused_name(name):
    """Where an unfused parameter lives in the fused model (and if it is transposed)."""
    for ln, lin in (("ln_1", "attn.c_attn"), ("ln_2", "mlp.c_fc")):
        if f".{ln}." in name:
            return name.replace(f"{ln}.weight", f"{lin}.ln_weight").replace(
                f"{ln}.bias", f"{lin}.ln_bias"), False
        if name.endswith(f"{lin}.weight"):
            return name, True
    return name, False


def tokens(device, batch=4, seq=32, vocab=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (batch, seq), generator=g).to(device)


def forward_backward(model, ids):
    model.zero_grad(set_to_none=True)
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    return out.logits.detach(), {n: p.grad for n, p in model.named_parameters()}


@pytest.mark.parametrize("device,dtype", CASES, ids=dtype_id)
@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
def test_gpt2_logits_and_gradients(device, dtype, recompute):
    ids = tokens(device)
    model = tiny_gpt2(device, dtype)
    fused = fused_copy(model, recompute, example=ids)
    assert sum(isinstance(m, lnlinear.LayerNormLinear) for m in fused.modules()) == 4
    ref_model = copy.deepcopy(model).double()

    logits_r, grads_r = forward_backward(ref_model, ids)
    logits_u, grads_u = forward_backward(model, ids)
    logits_f, grads_f = forward_backward(fused, ids)
    report = {}

    def judge(what, f, u, r):
        e_f, e_u = rel_err(f, r), rel_err(u, r)
        report[what] = (e_f, e_u)
        assert e_f <= max(FACTOR * e_u, FLOOR[dtype]), (
            f"{what}: fused error {e_f:.2e} vs unfused {e_u:.2e} (float64 reference)")

    judge("logits", logits_f, logits_u, logits_r)
    fused_params = dict(fused.named_parameters())
    assert len(fused_params) == len(grads_u)
    for name, g_u in grads_u.items():
        fname, transposed = fused_name(name)
        g_f = fused_params[fname].grad
        assert g_f is not None, f"no gradient for {fname}"
        judge(name, g_f.t() if transposed else g_f, g_u, grads_r[name])
    worst = max(report, key=lambda k: report[k][0])
    print(f"\nGPT-2 {device} {dtype_id(dtype)} recompute={recompute}: logits err fused "
          f"{report['logits'][0]:.2e} / unfused {report['logits'][1]:.2e}; worst gradient "
          f"{worst} {report[worst][0]:.2e} / {report[worst][1]:.2e}")


@pytest.mark.parametrize("device", DEVICES)
def test_gpt2_float32_model_under_autocast(device):
    # Mixed-precision training's usual form: float32 parameters, bfloat16 autocast. The
    # fused layers run in bfloat16 too (autocast.py), their outputs feed attention and the
    # MLP in bfloat16 as c_attn's and c_fc's would; against a float64 model, the fused
    # model's logits and float32 gradients within FACTOR x the unfused model's under the
    # same autocast, or bfloat16's FLOOR.
    ids = tokens(device)
    model = tiny_gpt2(device, torch.float32)
    fused = fused_copy(model, example=ids)
    ref_model = copy.deepcopy(model).double()
    logits_r, grads_r = forward_backward(ref_model, ids)
    results = []
    for m in (model, fused):
        with torch.autocast(device, dtype=torch.bfloat16):
            m.zero_grad(set_to_none=True)
            out = m(input_ids=ids, labels=ids)
            if m is fused:  # a fused LayerNorm+c_attn, given a float32 input
                qkv = m.transformer.h[0].attn.c_attn(torch.randn(2, 3, 64, device=device))
                assert qkv.dtype == torch.bfloat16
        out.loss.backward()
        results.append((out.logits.detach().float(),
                        {n: p.grad for n, p in m.named_parameters()}))
    (logits_u, grads_u), (logits_f, grads_f) = results
    floor = FLOOR[torch.bfloat16]
    e_f, e_u = rel_err(logits_f, logits_r), rel_err(logits_u, logits_r)
    assert e_f <= max(FACTOR * e_u, floor), f"logits: {e_f:.2e} vs unfused {e_u:.2e}"
    fused_params = dict(fused.named_parameters())
    for name, g_u in grads_u.items():
        fname, transposed = fused_name(name)
        g_f = fused_params[fname].grad
        assert g_f.dtype == torch.float32
        g_f = g_f.t() if transposed else g_f
        e_f, e_u = rel_err(g_f, grads_r[name]), rel_err(g_u, grads_r[name])
        assert e_f <= max(FACTOR * e_u, floor), f"{name}: {e_f:.2e} vs unfused {e_u:.2e}"


def test_gpt2_refuses_ln_f_lm_head():
    # lm_head's weight is tied to the embedding and its input is a slice of ln_f's output
    # (which the model also returns): both must stop the fusion.
    model = tiny_gpt2("cpu", torch.float32)
    with pytest.raises(lnlinear.FusionError, match="tied"):
        lnlinear.fuse_(model, [(model.transformer.ln_f, model.lm_head)])
    model.config.tie_word_embeddings = False
    model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    with pytest.raises(lnlinear.FusionError):
        lnlinear.fuse_(model, [(model.transformer.ln_f, model.lm_head)],
                       example_inputs=(tokens("cpu"),))
    assert isinstance(model.transformer.ln_f, torch.nn.LayerNorm)


@pytest.mark.parametrize("device,dtype", CASES, ids=dtype_id)
def test_gpt2_adamw_loss_curve(device, dtype):
    model = tiny_gpt2(device, dtype)
    fused = fused_copy(model)  # before the optimizer: fuse_ makes new parameters
    curves = []
    for m in (model, fused):
        opt = torch.optim.AdamW(m.parameters(), lr=3e-3, weight_decay=0.01)
        losses = []
        for step in range(20):
            ids = tokens(device, seed=100 + step % 2)  # two batches: memorizable
            opt.zero_grad(set_to_none=True)
            loss = m(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves.append(torch.tensor(losses, dtype=torch.float64))
    unfused, fused_c = curves
    dist = ((fused_c - unfused).abs() / unfused.abs()).max().item()
    print(f"\nGPT-2 AdamW {device} {dtype_id(dtype)}: loss {unfused[0]:.4f} -> {unfused[-1]:.4f} "
          f"unfused, {fused_c[0]:.4f} -> {fused_c[-1]:.4f} fused; max rel gap {dist:.2e}")
    assert unfused[-1] < unfused[0], "the run should learn something"
    assert dist <= CURVE_TOL[dtype], f"loss curves differ by {dist:.2e} (relative)"


@pytest.mark.skipif("cuda" not in DEVICES, reason="peak memory is measured on CUDA")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_id)
def test_gpt2_peak_memory_cuda(dtype):
    # Big enough that the saved M x K activations show: M = 8*256, K = 512, 8 pairs.
    kw = dict(n_layer=4, n_embd=512, n_head=8, vocab=1024, n_positions=256)
    ids = tokens("cuda", batch=8, seq=256, vocab=1024)
    results = {}
    for label in ("unfused", "recompute=False", "recompute=True"):
        model = tiny_gpt2("cuda", dtype, **kw)
        if label != "unfused":
            model = fused_copy(model, recompute=(label == "recompute=True"))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            model(input_ids=ids, labels=ids).loss.backward()
            opt.step()

        step()  # optimizer state and workspaces exist from here on
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        step()
        torch.cuda.synchronize()
        results[label] = torch.cuda.max_memory_allocated() - base
        del model, opt
        torch.cuda.empty_cache()
    mib = {k: v / 2 ** 20 for k, v in results.items()}
    print(f"\nGPT-2 training-step peak memory above steady state, {dtype_id(dtype)}, "
          f"M=2048 K=512, 8 fused pairs: " + ", ".join(f"{k} {v:.1f} MiB" for k, v in mib.items()))
    out_dir = os.environ.get("LNLINEAR_REPORT_DIR")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, f"gpt2_peak_memory_{dtype_id(dtype)}.json")
        with open(path, "w") as f:
            json.dump({"dtype": dtype_id(dtype), "batch": 8, "seq": 256, "n_embd": 512,
                       "n_layer": 4, "fused_pairs": 8, "peak_bytes_above_steady": results},
                      f, indent=2)
    # Keeping ln_out can only cost memory; the saving should be visible.
    assert results["recompute=True"] <= results["recompute=False"] + 2 ** 20
