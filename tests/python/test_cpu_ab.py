"""bench/cpu_ab.py: one build timed against itself (an A/A run) loads two separate copies,
runs both passes on each, and reports the same results for both."""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("numpy")
import lnlinear  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("which", ["fwd", "bwd", "fb"])
def test_a_a_run_reports_both_copies(which):
    lib = lnlinear.library_path
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "cpu_ab.py"), "--lib", lib,
                          "--lib", lib, "--shape", "37,24,40", "--shape", "3,8,5", "--pass", which,
                          "--rounds", "3", "--strategy", "auto"],
                         check=True, capture_output=True, text=True).stdout
    heads = re.findall(rf"^auto {which} (\d+,\d+,\d+) \(3 rounds", out, re.M)
    assert heads == ["37,24,40", "3,8,5"], out
    rows = re.findall(r"^  lib(\d) .*: +([0-9.]+) ms  ratio ([0-9.]+) .* checksum (\S+)$", out, re.M)
    assert [r[0] for r in rows] == ["0", "1", "0", "1"], out
    for a, b in (rows[0:2], rows[2:4]):
        assert float(a[2]) == 1.0 and float(b[2]) > 0
        assert a[3] == b[3] and float(a[3]) > 0  # same build, same inputs: the same results


def test_needs_two_libraries():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "cpu_ab.py"), "--lib",
                        lnlinear.library_path, "--shape", "4,4,4"], capture_output=True, text=True)
    assert r.returncode == 2 and "at least two --lib" in r.stderr
