"""CUDA calls on several streams and under CUDA graph capture: the host path keeps one
workspace per (device, stream) (ops._workspace on the Python path, its C++ twin in
python/csrc on the C++ one), so calls on different streams must never share one, a
graph's captured calls must not use it, and every result must be bitwise the result of
a plain call on the default stream. Every test runs on both eager paths."""

import pytest
import torch

import lnlinear
from lnlinear import _cpp, ops

from _util import eager_node, make_inputs
from conftest import DEVICES

pytestmark = pytest.mark.skipif("cuda" not in DEVICES, reason="CUDA not under test")


@pytest.fixture(params=["cpp", "python"], autouse=True)
def path(request):
    if request.param == "cpp" and not _cpp.available():
        pytest.skip(f"C++ op not loaded: {_cpp.reason}")
    with eager_node(request.param == "cpp"):
        yield request.param


def _ws_cache():
    """{(device, stream): workspace address} of the active path's cache."""
    if "cuda" in _cpp.serves:
        return _cpp.cached_workspaces()
    return {k: v.data_ptr() for k, v in ops._ws_cache.items()}


def _call(inputs):
    return lnlinear.layernorm_linear(*inputs)


def test_streams_share_no_workspace_and_agree():
    inputs, _ = make_inputs((64,), 256, 192, torch.bfloat16, "cuda")
    ref = _call(inputs)
    torch.cuda.synchronize()
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    outs = []
    for s in (s1, s2):
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            # many back-to-back calls: a shared workspace between the two streams
            # would let one stream's kernels overwrite the other's scratch
            outs.append([_call(inputs) for _ in range(20)])
    torch.cuda.synchronize()
    for per_stream in outs:
        for y in per_stream:
            assert torch.equal(y, ref)
    dev = torch.cuda.current_device()
    cache = _ws_cache()
    assert cache[(dev, s1.cuda_stream)] != cache[(dev, s2.cuda_stream)], \
        "each stream keeps its own workspace"


def test_workspace_reused_on_one_stream():
    inputs, _ = make_inputs((32,), 128, 64, torch.float32, "cuda")
    _call(inputs)
    key = (torch.cuda.current_device(), torch.cuda.current_stream().cuda_stream)
    first = _ws_cache()[key]
    _call(inputs)
    assert _ws_cache()[key] == first


def test_large_workspace_is_not_kept():
    # M x K float32 activations: above the cache's cap, so allocated per call
    inputs, _ = make_inputs((8192,), 2560, 64, torch.float32, "cuda")
    before = _ws_cache()
    y = lnlinear.layernorm_linear(*inputs, strategy="unfused")
    torch.cuda.synchronize()
    assert y.shape == (8192, 64)
    assert _ws_cache() == before


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_graph_capture_and_replay(dtype):
    inputs, _ = make_inputs((48,), 320, 160, dtype, "cuda")
    static_x = inputs[0].clone()
    args = [static_x] + inputs[1:]
    ref = _call(args)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on a side stream, as torch.cuda.graphs asks
        _call(args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    cached_before = _ws_cache()
    with torch.cuda.graph(g):
        static_y = _call(args)
    # capture took no cached workspace and added none
    assert _ws_cache() == cached_before
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_y, ref)
    new_x = inputs[0] * 0.5 + 1.0
    static_x.copy_(new_x)
    g.replay()
    # an eager call between replays on the default stream, with its cached workspace
    eager = _call([new_x] + inputs[1:])
    torch.cuda.synchronize()
    assert torch.equal(static_y, eager)
