"""The CUDA backward's workspace holds one M x K region, and no more.

That region holds dxhat = dy W: in the 16-bit dtype where K >= 512, else in float32 (as
in a float32 problem). A LN(x) rebuilt for cuBLAS's dW GEMM is written over it (by the
LayerNorm backward, over a 16-bit dxhat it has read) or before it (by a LayerNorm pass of
its own); dW from the raw x needs no LN(x), and its dy' and float32 sums also go there,
before dxhat. Until session 34 the region was 4 M K + 256 bytes whatever the plan, and a
bf16 forward+backward's peak memory was above eager PyTorch's at 16384x8192x1024 and
32768x4096x256. The sizes are queried, not
allocated, so the large shapes cost nothing; the C table's exact-workspace runs (guard
bytes after the workspace) and the sanitizers check that the calls stay inside, and its
float64 comparisons that LN(x) written over dxhat leaves dx and the gradients right."""

import pytest

from lnlinear import _clib
from conftest import DEVICES

pytestmark = pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")

STRATEGIES = (_clib.STRATEGY_AUTO, _clib.STRATEGY_FUSED, _clib.STRATEGY_UNFUSED)


def bwd_workspace(dtype, M, K, N, strategy):
    p = _clib.Problem(rows=M, in_features=K, out_features=N, eps=1e-5, dtype=dtype,
                      device=_clib.DEVICE_CUDA, strategy=strategy, threads=0, stream=None)
    return _clib.lib.lnl_backward_workspace_size(p)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype,M,K,N", [
    (_clib.DTYPE_BF16, 32768, 4096, 256),    # N < K: dW from the raw x
    (_clib.DTYPE_BF16, 16384, 8192, 1024),   # the same
    (_clib.DTYPE_BF16, 8192, 4096, 4096),    # N >= K: LN(x) rebuilt over dxhat
    (_clib.DTYPE_F16, 32768, 4096, 256),     # f16 too (its dy' scaled, since session 41)
    (_clib.DTYPE_F16, 16384, 8192, 1024),
])
def test_16bit_dxhat_is_the_only_mk_region(dtype, M, K, N, strategy):
    """2 M K bytes of dxhat (268 MB here), and besides it ~20 MB: the dgamma/dbeta
    partials (G x K floats each, G ~ 2 blocks an SM), the bias gradient's partials and
    cuBLASLt's 8 MiB. Where dW comes from the raw x, dy' = rstd dy (M x N) and dW's
    float32 sums (N x K, a split's worth each) are inside dxhat's region, which they
    precede (36 and 64 MB outside it until session 34). The old size was 4 M K + 256
    and more."""
    ws = bwd_workspace(dtype, M, K, N, strategy)
    assert 2 * M * K <= ws < 2 * M * K + (48 << 20), (ws, M * K)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("dtype,M,K,N", [
    (_clib.DTYPE_BF16, 65536, 256, 128),    # K < 512: float32 dxhat
    (_clib.DTYPE_F32, 32768, 4096, 256),    # float32 dxhat
])
def test_float32_dxhat_keeps_its_room(dtype, M, K, N, strategy):
    """A float32 dxhat needs 4 M K bytes: the size must not shrink below that."""
    assert bwd_workspace(dtype, M, K, N, strategy) >= 4 * M * K
