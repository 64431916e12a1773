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


def test_f16_scaled_both_sides_and_range():
    """f16's way (dy' scaled by 2^e into f16's range): as accurate as the rebuild on centred
    rows, past f16's bound of 2e-3 far off centre (rows of mean 4000, the fallback's side;
    f16's finer rows keep the formula within 1.1e-3 at 1000, where bf16's is 0.1), and
    still accurate where rstd dy unscaled would overflow f16 (rows of spread 1e-3, rstd ~
    301, dy of 300: up to ~4e5) or sink into its subnormals (dy of 1e-5)."""
    rebuild, from_x = m.errors(4096, 64, 4, 3.0, "cpu", dtype="f16")
    assert from_x < 5e-4 and rebuild < 5e-4
    rebuild, from_x = m.errors(4096, 64, 4, 4000.0, "cpu", dtype="f16")
    assert rebuild < 5e-4 and from_x > 2e-3
    for spread, dy_scale in ((1e-3, 300.0), (1.0, 1e-5)):
        rebuild, from_x = m.errors(4096, 64, 4, 2e-3 if spread < 1 else 3.0, "cpu", dtype="f16",
                                   spread=spread, dy_scale=dy_scale)
        assert from_x < 5e-4, (spread, dy_scale, from_x)
