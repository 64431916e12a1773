"""bench/compare_plots.py redraws results.md and the plots from a results.json. A run
with only some candidates (here lnl_auto and eager, no GEMM floor) must still draw what
it can: floor_ratio.png has nothing to show and is skipped, not a crash."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
pytest.importorskip("matplotlib")
import compare_plots  # noqa: E402

RESULTS = os.path.join(ROOT, "docs", "results", "cuda-h200-2026-11-30-b", "results.json")


def _keep(doc, names):
    doc["candidates"] = {k: v for k, v in doc["candidates"].items() if k in names}
    for r in doc["results"]:
        r["candidates"] = {k: v for k, v in r["candidates"].items() if k in names}
    return doc


def test_report_without_floor_candidate(tmp_path):
    with open(RESULTS) as f:
        doc = _keep(json.load(f), {"lnl_auto", "eager"})
    files = compare_plots.write_report(doc, str(tmp_path))
    names = sorted(os.path.basename(p) for p in files)
    assert names == ["memory_kept.png", "speedup.png"]
    for n in names:
        assert os.path.getsize(tmp_path / n) > 0
    md = (tmp_path / "results.md").read_text()
    assert "lnlinear auto" in md and "PyTorch eager" in md


def test_report_with_every_candidate(tmp_path):
    with open(RESULTS) as f:
        doc = json.load(f)
    names = sorted(os.path.basename(p) for p in compare_plots.write_report(doc, str(tmp_path)))
    assert names == ["floor_ratio.png", "memory_kept.png", "speedup.png"]


@pytest.mark.parametrize("node", [None, "C++", "Python"])
def test_report_names_the_eager_node(node):
    # Reports since session 12 say which autograd node lnlinear's eager calls took (the C++
    # one or the Python one); older results.json files have no such field and say nothing.
    with open(RESULTS) as f:
        doc = json.load(f)
    doc["machine"].pop("lnlinear_eager_node", None)
    if node:
        doc["machine"]["lnlinear_eager_node"] = node
    header = next(l for l in compare_plots.markdown(doc).splitlines() if l.startswith("- machine:"))
    assert ("autograd node" in header) == bool(node)
    if node:
        assert f"({node} autograd node)" in header
