"""bench/compare.py on the CPU in bf16 and f16 (16-bit storage, float32 accumulation, since
commit 8f3218e): `--device cpu --dtypes bf16 f16` runs every lnlinear candidate without an
error and records errors within the 16-bit bounds; f32 stays the CPU's default."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")  # main() draws the report's plots
import compare  # noqa: E402

# compare.py's metric: max |out - ref| / max |ref| over y and the five gradients, against
# float64 on the same 16-bit inputs. One rounding of a 16-bit output is up to 2^-9 (bf16)
# or 2^-12 (f16) of the largest entry; these leave room for the sums before it.
BOUND = {"bf16": 1e-2, "f16": 2e-3}


def test_cpu_default_stays_f32():
    assert compare.DTYPES["cpu"] == ["f32"]
    args = compare.parse_args(["--device", "cpu", "--dtypes", "bf16", "f16"])
    assert args.dtypes == ["bf16", "f16"]


def test_cpu_16bit_run(tmp_path):
    compare.main(["--device", "cpu", "--dtypes", "bf16", "f16", "--shapes", "16,8,16", "40,24,12",
                  "--quick", "--no-compile", "--candidates", "lnl_fused", "lnl_unfused",
                  "lnl_auto", "eager", "--reps", "2", "--min-reps", "1", "--budget-s", "0.05",
                  "--out", str(tmp_path)])
    with open(tmp_path / "results.json") as f:
        doc = json.load(f)
    seen = set()
    for e in doc["results"]:
        assert not e.get("error"), e
        seen.add(e["dtype"])
        for name in ("lnl_fused", "lnl_unfused", "lnl_auto"):
            r = e["candidates"][name]
            assert not r.get("error"), (e["dtype"], name, r["error"])
            assert r["max_rel_err"] <= BOUND[e["dtype"]], (e["dtype"], name, r["rel_err"])
    assert seen == {"bf16", "f16"}
