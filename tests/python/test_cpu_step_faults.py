"""bench/cpu_step_faults.py runs a tiny training step both ways and reports a time and a
fault count; with --fresh-workspace the Python node really allocates per call."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("fresh", [False, True])
def test_reports_a_step(fresh):
    cmd = [sys.executable, os.path.join(ROOT, "bench", "cpu_step_faults.py"), "--shape", "32,64,48",
           "--dtype", "bf16", "--steps", "3"] + (["--fresh-workspace"] if fresh else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"^bf16 32,64,48 fresh_workspace=(\d) .*: median ([0-9.]+) ms, (\d+) minor faults a step$",
                  out, re.M)
    assert m, out
    assert m.group(1) == str(int(fresh)) and float(m.group(2)) > 0
