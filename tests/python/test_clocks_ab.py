"""bench/cuda/clocks_ab.py's reading of nvidia-smi's samples (the timing needs a GPU; this
part does not)."""
import math
import os
import sys

import pytest

torch = pytest.importorskip("torch")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "cuda"))
import clocks_ab  # noqa: E402


def test_summarize_medians_and_reasons():
    rows = [["1980", "650.20", "0x0000000000000000"], ["1755", "699.85", "0x0000000000000004"],
            ["1800", "[N/A]", "0x0000000000000004"], ["1830", "690.00"]]
    mhz, watts, reasons, n = clocks_ab.summarize(rows)
    assert mhz == 1815.0  # median of four clocks
    assert watts == 690.0  # "[N/A]" left out: median of three
    assert reasons == ["0x0000000000000000", "0x0000000000000004"] and n == 4


def test_summarize_nothing_read():
    mhz, watts, reasons, n = clocks_ab.summarize([["[N/A]", "[N/A]"]])
    assert math.isnan(mhz) and math.isnan(watts) and reasons == [] and n == 1
