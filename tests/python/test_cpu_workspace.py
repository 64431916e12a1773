"""CPU workspaces are kept per calling thread (ops._cpu_ws and the C++ node's thread_local):
a call that reuses one must not depend on what an earlier call left in it, each thread
gets its own, and one past the cap is not kept."""
import threading

import pytest
import torch

import lnlinear
from lnlinear import _cpp, ops
from _util import eager_node, make_inputs, run

PATHS = ["python", "cpp"]


def step(path, inputs, dy):
    if path == "cpp" and not _cpp.available():
        pytest.skip(f"C++ op not loaded: {_cpp.reason}")
    with eager_node(path == "cpp"):
        y, g, _ = run(lnlinear.layernorm_linear, inputs, dy, (1, 1, 1, 1, 1))
    return [y] + [g[k] for k in sorted(g)]


def in_new_thread(fn):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", fn()))
    t.start()
    t.join()
    return out["r"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_reused_workspace_gives_the_same_bits(path, dtype):
    # K = 1000 > the bf16 kernel's depth block: float partial sums go through the workspace
    inputs, dy = make_inputs((96,), 1000, 40, dtype, "cpu")
    fresh = in_new_thread(lambda: step(path, inputs, dy))
    # this thread's workspace, first filled by a larger problem with other values
    other, other_dy = make_inputs((130,), 1200, 56, dtype, "cpu", offset=-50.0)
    step(path, other, other_dy)
    again = step(path, inputs, dy)
    for a, b in zip(fresh, again):
        assert torch.equal(a, b)


def test_python_path_keeps_one_workspace_a_thread():
    inputs, dy = make_inputs((64,), 300, 48, torch.bfloat16, "cpu")
    step("python", inputs, dy)
    mine = ops._cpu_ws.t
    step("python", inputs, dy)
    assert ops._cpu_ws.t is mine  # reused, not reallocated
    theirs = in_new_thread(lambda: (step("python", inputs, dy), ops._cpu_ws.t)[1])
    assert theirs.data_ptr() != mine.data_ptr()


def test_python_path_does_not_keep_one_past_the_cap(monkeypatch):
    inputs, dy = make_inputs((64,), 300, 48, torch.bfloat16, "cpu")

    def fresh_thread():
        monkeypatch.setattr(ops, "_CPU_WS_CACHE_MAX", 1024)  # below this problem's workspace
        step("python", inputs, dy)
        return getattr(ops._cpu_ws, "t", None)
    assert in_new_thread(fresh_thread) is None
