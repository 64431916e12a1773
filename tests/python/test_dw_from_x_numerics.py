"""bench/dw_from_x_numerics.py is the evidence for dw_from_x.cu's limit on |mean| * rstd.
Its fast float32 row-order sum must add exactly as the plain loop does (torch's own CPU
cumsum adds float32 in double and would hide the rounding the script measures), and the
model must show both sides of the limit: the formula as accurate as rebuilding LN(x) on
centred rows, and far worse on rows whose mean is 1e3 spreads."""
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import dw_from_x_numerics as m  # noqa: E402


def test_fast_sum_adds_in_row_order():
    g = torch.Generator().manual_seed(0)
    a = m.bf16(100 + torch.randn(700, 3, generator=g, dtype=torch.float64))
    b = m.bf16(torch.randn(700, 5, generator=g, dtype=torch.float64))
    assert torch.equal(m.seq_sum_rows(a, b), m.seq_sum_rows_fast(a, b, chunk=64))


def test_both_sides_of_the_limit():
    rebuild, from_x = m.errors(4096, 64, 4, 3.0, "cpu")
    assert from_x < 4e-3 and rebuild < 4e-3
    rebuild, from_x = m.errors(4096, 64, 4, 1000.0, "cpu")
    assert rebuild < 4e-3 and from_x > 10 * rebuild
