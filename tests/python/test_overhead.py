"""Python overhead of one forward at M=16, K=8, N=16 against F.layer_norm + F.linear.
Prints the figures (run with -s); asserts nothing about time, which depends on the
machine and its load."""

import os
import sys

import pytest

from conftest import DEVICES

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import python_overhead  # noqa: E402


@pytest.mark.parametrize("device", DEVICES)
def test_python_overhead(device):
    r = python_overhead.measure(device, iters=300, repeats=7)
    print(f"\noverhead {device} M=16 K=8 N=16 forward (no_grad): lnlinear "
          f"{r['lnlinear_us']:.1f} us, F.layer_norm+F.linear {r['torch_us']:.1f} us, "
          f"difference {r['lnlinear_us'] - r['torch_us']:+.1f} us")
    out_dir = os.environ.get("LNLINEAR_REPORT_DIR")
    if out_dir:
        import json
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"python_overhead_{device}.json"), "w") as f:
            json.dump(dict(r, device=device, M=16, K=8, N=16), f, indent=2)
    assert r["lnlinear_us"] > 0 and r["torch_us"] > 0


@pytest.mark.parametrize("device", DEVICES)
def test_python_overhead_stats_ab(device):
    # The script's A/B runs the body both ways; a broken stats=False path would raise.
    r = python_overhead.stats_ab(device, iters=50, repeats=3)
    print(f"\nno_grad forward body {device}: with mean/rstd {r['with_stats_us']:.1f} us, "
          f"without {r['without_stats_us']:.1f} us")
    assert r["with_stats_us"] > 0 and r["without_stats_us"] > 0


@pytest.mark.parametrize("device", DEVICES)
def test_python_overhead_paths_ab(device):
    # The C++/Python/eager A/B (--paths) runs every path; a broken one would raise.
    r = python_overhead.paths_ab(device, iters=20, repeats=2)
    print("\n" + ", ".join(f"{k} {v:.1f}" for k, v in sorted(r.items())))
    assert all(v > 0 for v in r.values())
    assert {k.split("_")[0] for k in r} >= {"python", "eager"}
