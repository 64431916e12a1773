"""Forward and all five gradients against F.layer_norm + F.linear, judged by the error
of each against a float64 reference on the same inputs."""

import itertools

import pytest
import torch

import lnlinear
from lnlinear import _cpp, ops
from _util import (NAMES, assert_close_to_ref, eager_node, make_inputs, rel_err, run,
                   torch_forward)
from conftest import DEVICE_DTYPES, DEVICES, dtype_id

SHAPES = [  # (leading dims, K, N): odd sizes, K=1, N=1, a 1-D x, several leading dims
    ((2, 3), 67, 33),
    ((), 8, 5),
    ((1,), 1, 1),
    ((5,), 3, 130),
    ((7,), 1000, 3),
    ((4, 2, 3), 64, 64),
    ((33,), 257, 129),
]
CUDA_SHAPES = [((2, 512), 1024, 1000), ((3, 100), 4097, 67)]
VARIANTS = {  # which optional parameters exist
    "affine": dict(ln_affine=True, ln_bias=True, linear_bias=True),
    "no_ln_affine": dict(ln_affine=False, linear_bias=True),
    "no_ln_bias_no_bias": dict(ln_affine=True, ln_bias=False, linear_bias=False),
}


def check_all(inputs, dy, dtype, mask=(1, 1, 1, 1, 1), **kw):
    lnl = lambda *a: lnlinear.layernorm_linear(*a, **kw)  # noqa: E731
    y, g, _ = run(lnl, inputs, dy, mask)
    y_t, g_t, _ = run(torch_forward, inputs, dy, mask)
    y_r, g_r, _ = run(torch_forward, inputs, dy, mask, upcast=True)
    assert y.dtype == dtype and y.shape == y_r.shape
    report = {"y": assert_close_to_ref(y, y_t, y_r, dtype, "y")}
    assert set(g) == set(g_r), f"gradients for {sorted(g)}, expected {sorted(g_r)}"
    for name in g_r:
        assert g[name].dtype == dtype and g[name].shape == g_r[name].shape
        report["d" + name] = assert_close_to_ref(g[name], g_t[name], g_r[name], dtype,
                                                 "d" + name)
    return report


def _cases():
    for dev, dt in DEVICE_DTYPES:
        shapes = SHAPES + (CUDA_SHAPES if dev == "cuda" else [])
        for shape in shapes:
            yield dev, dt, shape


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
@pytest.mark.parametrize("device,dtype,shape", list(_cases()), ids=lambda v: dtype_id(v))
def test_matches_pytorch(device, dtype, shape, recompute, variant):
    lead, K, N = shape
    inputs, dy = make_inputs(lead, K, N, dtype, device, **VARIANTS[variant])
    check_all(inputs, dy, dtype, recompute=recompute)


MASKS = [m for m in itertools.product((0, 1), repeat=5) if any(m)]


@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
@pytest.mark.parametrize("mask", MASKS, ids=lambda m: "".join(map(str, m)))
@pytest.mark.parametrize("device", DEVICES)
def test_every_requires_grad_subset(device, mask, recompute):
    dtype = torch.float32
    inputs, dy = make_inputs((3, 4), 19, 11, dtype, device)
    check_all(inputs, dy, dtype, mask=mask, recompute=recompute)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
def test_strided_x(device, dtype):
    # x is a view: leading dims transposed and every other feature taken.
    base, dy = make_inputs((5, 3), 2 * 37, 21, dtype, device)
    xb = base[0]
    for recompute in (True, False):
        def lnl(xb_, *params):
            return lnlinear.layernorm_linear(xb_.transpose(0, 1)[..., ::2], *params,
                                             recompute=recompute)

        def ref(xb_, *params):
            return torch_forward(xb_.transpose(0, 1)[..., ::2], *params)

        params = make_inputs((1,), 37, 21, dtype, device)[0][1:]
        dyt = dy.transpose(0, 1).contiguous()
        inputs = [xb] + params
        y, g, _ = run(lnl, inputs, dyt, (1, 1, 1, 1, 1))
        y_t, g_t, _ = run(ref, inputs, dyt, (1, 1, 1, 1, 1))
        y_r, g_r, _ = run(ref, inputs, dyt, (1, 1, 1, 1, 1), upcast=True)
        assert_close_to_ref(y, y_t, y_r, dtype, "y")
        for name in NAMES:
            assert_close_to_ref(g[name], g_t[name], g_r[name], dtype, "d" + name)


@pytest.mark.parametrize("K,N", [(96, 24), (8, 16)], ids=["16x96x24", "16x8x16"])
@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
def test_large_row_offset(device, dtype, K, N):
    # Rows with |mean| >> std break the E[x^2] - E[x]^2 variance formula. 16x8x16 is a
    # tiny problem: on CUDA its FUSED/AUTO backward is the one-launch kernel, whose
    # unshifted sums once failed here in float32 (at 16x96x24, then also tiny).
    if dtype in (torch.float16,):
        offset = 30.0  # 1e3 + N(0,1) is not representable finely in fp16 anyway
    else:
        offset = 1e3
    inputs, dy = make_inputs((16,), K, N, dtype, device, offset=offset)
    check_all(inputs, dy, dtype)


@pytest.mark.parametrize("strategy", ["fused", "unfused", "reference"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16],
                         ids=dtype_id)
def test_cpu_strategies(strategy, dtype):
    inputs, dy = make_inputs((3, 5), 67, 45, dtype, "cpu")
    for recompute in (True, False):
        check_all(inputs, dy, dtype, recompute=recompute, strategy=strategy)


# bf16/f16 on the CPU (commit 8f3218e): stored in 16 bits, accumulated in float32. Every
# output against a float64 reference on the same (rounded) 16-bit inputs, within the C
# tests' bounds (tests/c/test_table.c: relative norm error 1e-2 for bf16, 2e-3 for f16), on
# each path a call can take: the C++ node, the Python autograd.Function (what
# LNLINEAR_NO_CPP=1 leaves) and the custom op that torch.compile traces; and each output
# no further than 1.5x PyTorch's own 16-bit error (or the floor), as check_all judges.
CPU_16BIT_BOUND = {torch.bfloat16: 1e-2, torch.float16: 2e-3}


def _path_call(path, recompute, strategy="auto"):
    """fn(x, ln_weight, ln_bias, linear_weight, linear_bias) -> y on one path."""

    if path == "custom_op":
        def call(x, lnw, lnb, w, b):
            x2 = x.reshape(-1, x.shape[-1])
            y = torch.ops.lnlinear.forward(x2, lnw, lnb, w, b, 1e-5, not recompute,
                                           ops.STRATEGIES[strategy])[0]
            return y.view(*x.shape[:-1], w.shape[0])
        return call
    if path == "cpp" and not _cpp.available():
        pytest.skip(f"C++ op not loaded: {_cpp.reason}")

    def call(*a):
        with eager_node(path == "cpp"):
            return lnlinear.layernorm_linear(*a, recompute=recompute, strategy=strategy)
    return call


@pytest.mark.parametrize("shape", [((3, 11), 67, 45), ((130,), 200, 72)], ids=str)
@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
@pytest.mark.parametrize("path", ["cpp", "python", "custom_op"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_cpu_16bit_within_bounds(dtype, path, recompute, shape):
    lead, K, N = shape
    inputs, dy = make_inputs(lead, K, N, dtype, "cpu")  # x = 3 + 2 N(0,1): rows off centre
    fn = _path_call(path, recompute)
    y, g, _ = run(fn, inputs, dy, (1, 1, 1, 1, 1))
    y_r, g_r, _ = run(torch_forward, inputs, dy, (1, 1, 1, 1, 1), upcast=True)
    bound = CPU_16BIT_BOUND[dtype]
    assert y.dtype == dtype and y.shape == y_r.shape
    errs = {"y": rel_err(y, y_r)}
    assert set(g) == set(NAMES)
    for name in NAMES:
        assert g[name].dtype == dtype and g[name].shape == g_r[name].shape, name
        errs["d" + name] = rel_err(g[name], g_r[name])
    worst = max(errs, key=errs.get)
    assert errs[worst] <= bound, f"{worst}: relative error {errs[worst]:.3e} > {bound:.0e} ({errs})"
    # and against PyTorch's own 16-bit error, as every other dtype is judged
    y_t, g_t, _ = run(torch_forward, inputs, dy, (1, 1, 1, 1, 1))
    assert_close_to_ref(y, y_t, y_r, dtype, "y")
    for name in NAMES:
        assert_close_to_ref(g[name], g_t[name], g_r[name], dtype, "d" + name)


# The 16-bit backward with only some gradients asked for (the others NULL in
# lnl_backward_ex): each alone, and two mixed subsets.
MASKS_16BIT = [(1, 0, 0, 0, 0), (0, 1, 0, 0, 0), (0, 0, 1, 0, 0), (0, 0, 0, 1, 0),
               (0, 0, 0, 0, 1), (1, 0, 0, 1, 0), (0, 1, 1, 0, 1)]


@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
@pytest.mark.parametrize("mask", MASKS_16BIT, ids=lambda m: "".join(map(str, m)))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_cpu_16bit_requires_grad_subsets(dtype, mask, recompute):
    inputs, dy = make_inputs((3, 4), 19, 11, dtype, "cpu")
    check_all(inputs, dy, dtype, mask=mask, recompute=recompute)


@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=dtype_id)
def test_cpu_16bit_statistics_are_float32(dtype, recompute):
    # mean and rstd stay float32 for 16-bit storage (as F.layer_norm returns them), computed
    # from the 16-bit x; ln_out (recompute=False) comes back in x's dtype, LN(x) rounded once.
    inputs, _ = make_inputs((37,), 96, 40, dtype, "cpu")
    x, lnw, lnb, w, b = inputs
    y, mean, rstd, ln_out = torch.ops.lnlinear.forward(x, lnw, lnb, w, b, 1e-5, not recompute, 0)
    assert y.dtype == dtype and mean.dtype == rstd.dtype == torch.float32
    assert mean.shape == rstd.shape == (37,)
    xd = x.double()
    ref_mean = xd.mean(1)
    ref_rstd = (xd.var(1, unbiased=False) + 1e-5).rsqrt()
    torch.testing.assert_close(mean.double(), ref_mean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rstd.double(), ref_rstd, rtol=1e-5, atol=0)
    if recompute:
        assert ln_out.numel() == 0
    else:
        assert ln_out.dtype == dtype and ln_out.shape == x.shape
        ref = torch.nn.functional.layer_norm(xd, (96,), lnw.double(), lnb.double(), 1e-5)
        assert rel_err(ln_out, ref) <= CPU_16BIT_BOUND[dtype] / 2


@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("strategy", ["fused", "unfused"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=dtype_id)
def test_cuda_strategies(strategy, dtype):
    inputs, dy = make_inputs((3, 50), 200, 96, dtype, "cuda")
    for recompute in (True, False):
        check_all(inputs, dy, dtype, recompute=recompute, strategy=strategy)


def test_reference_strategy_is_near_exact():
    inputs, dy = make_inputs((4,), 31, 17, torch.float64, "cpu")
    y = lnlinear.layernorm_linear(*inputs, strategy="reference")
    torch.testing.assert_close(y, torch_forward(*inputs), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=dtype_id)
def test_strided_parameters(device, dtype):
    # linear_weight as the transpose of a [K, N] tensor (Conv1D's layout), ln_weight a
    # strided slice: both reach the op as views and get gradients in their own shape.
    inputs, dy = make_inputs((6,), 40, 24, dtype, device)
    x, lnw, lnb, w, b = inputs
    inputs = [x, torch.stack([lnw, lnw], dim=1)[:, 0], lnb, w.t().contiguous().t(), b]
    assert not inputs[3].is_contiguous() and not inputs[1].is_contiguous()
    check_all(inputs, dy, dtype)


# Big enough for the float32 128x128-tile fused kernels (ln_gemm_simt128.cuh), which
# run only once their tiles fill every SM: (2048, 1280, 2048) takes them for the forward
# and dW; (2000, 1284, 2050) has tails in every dimension (forward on the 128 kernel,
# dW on the general one: N % 4 != 0); offset 1e3 exercises the exact per-row shift.
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("M,K,N,offset", [(2048, 1280, 2048, 3.0), (2000, 1284, 2050, 3.0),
                                          (2048, 1280, 2048, 1e3)])
def test_cuda_f32_fused_large_tiles(M, K, N, offset):
    inputs, dy = make_inputs((M,), K, N, torch.float32, "cuda", offset=offset)
    check_all(inputs, dy, torch.float32, strategy="fused")


# Big enough for the Hopper bf16/f16 fused forward (fused_forward_sm90.cu) to walk
# several 128 x 256 tiles per CTA of its persistent grid, with tails in every
# dimension: N = 4104 takes the epilogue through shared memory (N % 8 == 0), N = 4100
# the direct one; (2048, 1024, 2048) has no tails. The backward, without ln_out, rebuilds
# LN(x) for cuBLAS where N >= K; where N < K it takes dW from the raw x (and its fused
# dW kernel for off-centre rows). N = 200 and 256 fit one column of
# tiles, 102 of them (3/4 of
# the H200's SMs and more): there the epilogue form computes the row statistics inside its
# GEMM kernel. The row means: 3 and 100 (|mean| * rstd ~ 1.5 and ~50)
# take the epilogue form, LN applied to x W'^T in the epilogue, 100 close to its limit
# of 64; 1e3 (~500) sends the call to the transform form. "one_row" is 3 with a single
# row moved to 1e3: one off-centre row sends the whole call to the transform form.
# "first_slice" is 3 with +-300 added to the first 64 columns: nearly all of each row's
# variance in the slice whose mean the in-kernel statistics shift by, the worst case of
# their rounding bound (fused_forward_sm90.cu).
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("M,K,N", [(4000, 1032, 4104), (4000, 1032, 4100), (2048, 1024, 2048),
                                   (13000, 1032, 200), (13000, 1032, 256)])
@pytest.mark.parametrize("offset", [3.0, 100.0, 1e3, "one_row", "first_slice"])
def test_cuda_16bit_fused_many_tiles(M, K, N, dtype, offset):
    inputs, dy = make_inputs((M,), K, N, dtype, "cuda",
                             offset=offset if isinstance(offset, float) else 3.0)
    if offset == "one_row":
        inputs[0][M // 3] += 1e3
    if offset == "first_slice":
        signs = torch.ones(64, dtype=dtype, device="cuda")
        signs[1::2] = -1
        inputs[0][:, :64] += 300 * signs
    check_all(inputs, dy, dtype, strategy="fused")


# A 16-bit backward without ln_out takes dW from the raw x where N < K (dw_from_x.cu):
# dW = gamma * (dy'^T x - u) + beta * v with dy' = rstd * dy, whose float32 GEMM carries
# each row's mean until u takes it off again. bf16: 100 + 2 N(0,1) rows (|mean| * rstd ~
# 50) sit just inside its limit of 64, with 33000 rows of accumulation; f16's limit is 16
# (64 in sessions 42-51, until these f16 rows at ~50 failed on an H100: dW 5.3e-4 and
# dgamma 5.6e-4 against a bound of 5e-4), and f16 runs both 25 + 2 N(0,1) (~12, inside it)
# and the 100 + 2 N(0,1) rows (past it: LN(x) rebuilt), whose f16 values are 1/16 apart
# (bf16's: 1/2). "one_row" moves one row to 1e3, past the limit, which sends the whole
# call to the fused dW kernel on the device's own decision. f16's dy' is scaled by a power
# of two into f16's range (session 41): "small_dy" (dy of 1e-4, where rstd dy
# unscaled would sit among f16's subnormals) and "tiny_spread" (rows 2e-3 + 1e-3 N(0,1),
# rstd ~ 301, and dy of 100: rstd dy up to ~1.3e5, past f16's 65504; at N = 16 of K = 2048,
# so that dx, ~ rstd dy sqrt(N / K), stays in range: at 33000,1024,200 with dy of 50 the
# exact dx passed 65504, H200, session 41).
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("strategy", ["unfused", "fused"])
@pytest.mark.parametrize("dtype,offset", [
    (torch.bfloat16, 100.0), (torch.bfloat16, "one_row"), (torch.float16, 25.0),
    (torch.float16, 100.0), (torch.float16, "one_row"), (torch.float16, "small_dy"), (torch.float16, "tiny_spread")],
    ids=str)
def test_cuda_16bit_dw_from_x(strategy, dtype, offset):
    M, K, N = (4096, 2048, 16) if offset == "tiny_spread" else (33000, 1024, 200)
    inputs, dy = make_inputs((M,), K, N, dtype, "cuda",
                             offset=offset if isinstance(offset, float) else 3.0)
    if offset == "one_row":
        inputs[0][M // 3] += 1e3
    if offset == "small_dy":
        dy = dy * 1e-4
    if offset == "tiny_spread":
        x = inputs[0].double()
        inputs[0] = (2e-3 + 5e-4 * (x - x.mean())).to(dtype)  # x is 3 + 2 N(0,1)
        dy = dy * 100
    check_all(inputs, dy, dtype, strategy=strategy, recompute=True)


# AUTO resolves the forward and the backward separately. A bf16/f16 problem on Hopper
# with N <= 1024, M*K >= 2^23, M*K*N >= 2^33 where N > 256, and enough 128-row tiles for
# 3/4 of the SMs (a tile is 128 x 256, 128 x 128 where N <= 128) takes the fused forward
# and the unfused backward, which rebuilds LN(x) from mean and rstd (or reads the kept
# ln_out), except that the backward of a problem with N <= K / 4 resolves FUSED: given the
# forward's y (which the layer keeps there), it forms dx in the epilogue of the dy . W
# GEMM (dx_epilogue_sm90.cu; bf16 since session 40, f16 since 41). Elsewhere both directions resolve alike;
# the results are checked either way.
# Each shape has row and column tails. (33000, 1024, 200): N <= 256, under 2^33 MACs;
# (8300, 1024, 1016) just over 2^33 and (8200, 1024, 1000) just under it (session 10's
# floor), both between 2^23 and 2^25 in M*K (session 9's threshold).
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("recompute", [True, False], ids=["recompute", "keep_ln_out"])
@pytest.mark.parametrize("shape", [(33000, 1024, 200), (8300, 1024, 1016), (8200, 1024, 1000)],
                         ids=str)
def test_cuda_auto_small_n(dtype, recompute, shape):
    import ctypes
    from lnlinear import _clib
    from lnlinear.ops import _problem
    M, K, N = shape
    assert 2 ** 23 <= M * K
    inputs, dy = make_inputs((M,), K, N, dtype, "cuda")
    prob = ctypes.byref(_problem(inputs[0], N, 1e-5, _clib.STRATEGY_AUTO))
    got = (_clib.lib.lnl_resolve_strategy(prob), _clib.lib.lnl_resolve_backward_strategy(prob))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tiles = -(-M // 128) * -(-N // (128 if N <= 128 else 256))
    fused_fwd = 4 * tiles >= 3 * sms and (N <= 256 or M * K * N >= 2 ** 33)
    hopper = torch.cuda.get_device_capability() == (9, 0)
    dx_epilogue = hopper and dtype in (torch.bfloat16, torch.float16) and 4 * N <= K
    bwd = _clib.STRATEGY_FUSED if dx_epilogue else _clib.STRATEGY_UNFUSED
    if hopper and fused_fwd:
        assert got == (_clib.STRATEGY_FUSED, bwd)
    else:
        assert got == (_clib.STRATEGY_UNFUSED, bwd)
    check_all(inputs, dy, dtype, recompute=recompute)


def _overflow_column(x, lnw, w, k0=5):
    """Column k0 of W and of gamma at 300 (W * gamma = 9e4, past f16's 65504) while that
    column of x sits at its row's mean; returns k0. In place, on float64 tensors."""
    x[:, k0] = torch.cat([x[:, :k0], x[:, k0 + 1:]], 1).mean(1)
    lnw[k0], w[:, k0] = 300.0, 300.0
    return k0


# f16's range ends at 65504, so the Hopper epilogue form's folded weight W' = W * gamma
# can overflow where LN(x) W^T does not: here one column of W and its gamma are 300
# (W * gamma = 9e4) while that column of x sits at its row's mean, so its normalized value,
# and its share of y, stay small. The fold flags the overflow and the transform form (W
# itself times LN(x)) redoes the call. One shape a path: the statistics from the fold's
# launch, a warp a row (K <= 2048) or a block a row (K <= 8192), or from launch_ln_forward
# after the folding kernel (K > 8192), and inside the GEMM kernel (N <= 256 on at least 99
# tiles) with the warp and the block fold. Elsewhere than Hopper no weight is folded and
# the test holds all the same.
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("shape", [(512, 512, 384), (12800, 512, 200), (512, 2056, 384),
                                   (12800, 2056, 136), (512, 8200, 384)], ids=str)
def test_cuda_f16_folded_weight_overflow(shape):
    M, K, N = shape
    g = torch.Generator().manual_seed(11)
    x = 3 + 2 * torch.randn(M, K, generator=g, dtype=torch.float64)
    lnw = 0.5 + torch.rand(K, generator=g, dtype=torch.float64)
    lnb = 0.1 * torch.randn(K, generator=g, dtype=torch.float64)
    w = 0.02 * torch.randn(N, K, generator=g, dtype=torch.float64)
    b = 0.1 * torch.randn(N, generator=g, dtype=torch.float64)
    k0 = _overflow_column(x, lnw, w)
    t = [v.to("cuda", torch.float16) for v in (x, lnw, lnb, w, b)]
    assert torch.isinf(t[3][:, k0] * t[1][k0]).all()  # W' overflows in f16
    ref = torch_forward(*[v.double() for v in t])
    assert ref.abs().max() < 3e4  # y itself is well inside f16's range
    theirs = torch_forward(*t)
    y = lnlinear.layernorm_linear(*t, strategy="fused")
    assert torch.isfinite(y).all(), "a W' that overflowed reached y"
    assert_close_to_ref(y, theirs, ref, torch.float16, "y")


# From K = 2049 to 8192 the Hopper epilogue form's statistics and folded weight come from one
# launch, a block a row (fold_weight.cu's fold_prep_kernel with G = 128, session 26, 4 or 8
# chunks a thread); LNL_CUDA_FOLD_PREP_MAX_K=0 takes the two launches it replaced there (the folding
# kernel, then launch_ln_forward's statistics), which still serve K > 8192. Either way every
# row's statistics and y must come out right, with row M / 2 off centre (1e3 + ...), which
# the block kernel reports through its block's flag (the two launches set the word itself)
# and the transform form then redoes. Shapes: K = 4096 (CPT 4, 8 blocks an SM) with N = 520
# (three column tiles on 9 x 3 tiles: too few for the statistics inside); K = 8192 (CPT 8);
# K = 2056, one chunk past the warp kernel (257 chunks: one thread of 128 holds three).
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("prep", ["block", "two_launches"])
@pytest.mark.parametrize("shape", [(1100, 4096, 520), (700, 8192, 300), (300, 2056, 264)], ids=str)
def test_cuda_fold_prep_long_rows(prep, shape, monkeypatch):
    if prep == "two_launches":
        monkeypatch.setenv("LNL_CUDA_FOLD_PREP_MAX_K", "0")
    M, K, N = shape
    g = torch.Generator().manual_seed(17)
    x = 3 + 2 * torch.randn(M, K, generator=g, dtype=torch.float64)
    x[M // 2] += 1e3
    lnw = 0.5 + torch.rand(K, generator=g, dtype=torch.float64)
    lnb = 0.1 * torch.randn(K, generator=g, dtype=torch.float64)
    w = torch.randn(N, K, generator=g, dtype=torch.float64) / K ** 0.5
    b = 0.1 * torch.randn(N, generator=g, dtype=torch.float64)
    t = [v.to("cuda", torch.bfloat16) for v in (x, lnw, lnb, w, b)]
    y, mean, rstd = _fused_forward_into_nan(*t)
    assert torch.isfinite(mean).all() and torch.isfinite(rstd).all()
    _check_fused_forward(t, y, mean, rstd, torch.bfloat16)


def _check_fused_forward(t, y, mean, rstd, dtype):
    """y, mean and rstd of a FUSED forward of inputs t = (x, lnw, lnb, w, b) against float64
    (eps 1e-5): every row of y finite, mean and rstd close, y within assert_close_to_ref."""
    bad = (~torch.isfinite(y)).any(1).nonzero().flatten()
    assert bad.numel() == 0, f"{bad.numel()} rows of y not finite, the first {bad[:4].tolist()}"
    xd = t[0].double()
    ref_mean = xd.mean(1)
    ref_rstd = (xd.var(1, unbiased=False) + 1e-5).rsqrt()
    assert torch.allclose(mean.double(), ref_mean, rtol=1e-5, atol=1e-5 * ref_rstd.reciprocal().max())
    assert torch.allclose(rstd.double(), ref_rstd, rtol=1e-4)
    ref = torch_forward(*[v.double() for v in t])
    assert_close_to_ref(y, torch_forward(*t), ref, dtype, "y")


def _fused_forward_into_nan(x, lnw, lnb, w, b, eps=1e-5):
    """lnl_forward (FUSED) writing y, mean and rstd over buffers that start as NaN, so that a
    row whose statistics were never written, or whose y was, shows as NaN (torch.empty would
    hand back memory that an earlier call may have filled with the very same values)."""
    import ctypes

    from lnlinear import _clib, ops
    M, N = x.shape[0], w.shape[0]
    y = torch.full((M, N), float("nan"), dtype=x.dtype, device=x.device)
    mean, rstd = (torch.full((M,), float("nan"), device=x.device) for _ in range(2))
    c = ops._call_for(x, N, eps, _clib.STRATEGY_FUSED)
    ws, ws_bytes = ops._workspace(c, 0, x.device)
    _clib.check(_clib.lib.lnl_forward(ctypes.byref(c.p), x.data_ptr(), lnw.data_ptr(),
                                      lnb.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(),
                                      mean.data_ptr(), rstd.data_ptr(), None, ops._ptr(ws),
                                      ws_bytes), "lnl_forward")
    torch.cuda.synchronize()
    return y, mean, rstd


# With N <= 256 on many tiles the Hopper epilogue form computes the row statistics inside
# its GEMM kernel and writes them to mean/rstd; when some row is off centre (or, in f16, a
# W' = W * gamma overflowed) the transform form then redoes the call, reading every row's
# statistics back from mean/rstd. 40000 rows are 313 tiles, two or three a CTA of the
# persistent grid, so the flag rises while CTAs still have tiles ahead of them: every one of
# those tiles must still get its statistics. "one_row": row M / 3 moved to 1e3; "all_rows":
# every row at 1e3 + N(0, 2); "w_overflow" (f16): column 5 of W and gamma at 300, that
# column of x at its row's mean (see test_cuda_f16_folded_weight_overflow). N = 520 and
# 1000 take the split statistics: three or four column tiles share each row's statistics
# (12800 x 520: 300 tiles, K = 4096, where the library takes them itself; 40000 x 1000:
# 1252 tiles, at K = 520 only under LNL_CUDA_SPLIT_STATS_MIN_K=0). 12800 x 1800: eight column
# tiles share them (800 tiles, a grid of 128: six rounds and a part).
# "late_offset": row M / 3 moved to 1e3 past its first 64 columns only. The kernel's shift is
# the mean of a row's first slice, far from the rest of this row, and |mean| * rstd ~
# sqrt(K / 64) keeps the epilogue form: the shifted sums' worst cancellation (the bound in
# fused_forward_sm90.cu), up to K = 16384 on one column of tiles.
@pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("shape", [(40000, 512, 256), (40000, 1032, 136), (12800, 4096, 520), (40000, 520, 1000),
                                   (12800, 4096, 1800), (12800, 4096, 256), (3000, 16384, 136)],
                         ids=str)
@pytest.mark.parametrize("case", ["one_row", "all_rows", "w_overflow", "late_offset"])
def test_cuda_stats_inside_redo_many_tiles(dtype, shape, case, monkeypatch):
    if case == "w_overflow" and dtype != torch.float16:
        pytest.skip("W * gamma overflows in f16 only")
    M, K, N = shape
    if shape == (40000, 520, 1000):
        monkeypatch.setenv("LNL_CUDA_SPLIT_STATS_MIN_K", "0")
    g = torch.Generator().manual_seed(13)
    x = (1e3 if case == "all_rows" else 3.0) + 2 * torch.randn(M, K, generator=g, dtype=torch.float64)
    lnw = 0.5 + torch.rand(K, generator=g, dtype=torch.float64)
    lnb = 0.1 * torch.randn(K, generator=g, dtype=torch.float64)
    w = torch.randn(N, K, generator=g, dtype=torch.float64) / K ** 0.5
    b = 0.1 * torch.randn(N, generator=g, dtype=torch.float64)
    if case == "one_row":
        x[M // 3] += 1e3
    if case == "late_offset":
        x[M // 3, 64:] += 1e3
    if case == "w_overflow":
        _overflow_column(x, lnw, w)
    t = [v.to("cuda", dtype) for v in (x, lnw, lnb, w, b)]
    y, mean, rstd = _fused_forward_into_nan(*t)
    _check_fused_forward(t, y, mean, rstd, dtype)
