"""Devices under test: the CPU always; CUDA when LNLINEAR_TEST_DEVICE=cuda and torch
sees a GPU (tests/gpu/run.sh sets it on the lent H200)."""

import os

import pytest
import torch

import lnlinear  # noqa: F401  (fail the session early when the library cannot load)


def cuda_requested():
    return os.environ.get("LNLINEAR_TEST_DEVICE", "cpu") == "cuda"


def devices():
    devs = ["cpu"]
    if cuda_requested():
        if not torch.cuda.is_available():
            # Asked for CUDA but torch cannot see it: a setup error, not a skip.
            raise RuntimeError("LNLINEAR_TEST_DEVICE=cuda but torch.cuda.is_available() is False")
        devs.append("cuda")
    return devs


DEVICES = devices()
# bfloat16/float16 on the CPU: stored in 16 bits, accumulated in float32 (commits 8f3218e, cc15004).
DTYPES = {
    "cpu": [torch.float32, torch.float64, torch.bfloat16, torch.float16],
    "cuda": [torch.float32, torch.bfloat16, torch.float16],
}
DEVICE_DTYPES = [(d, t) for d in DEVICES for t in DTYPES[d]]


def dtype_id(v):
    return str(v).replace("torch.", "") if isinstance(v, torch.dtype) else None


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)
