"""bench/mixed_call.py runs and prints both rows (a tiny shape: the script, not timings)."""

from _util import bench_stdout


def test_prints_both_ways():
    out = bench_stdout("mixed_call.py", "--shape", "32,16,8", "--rounds", "1", "--steps", "1",
                       "--dtype", "f16")
    rows = [line.split() for line in out.splitlines() if "32,16,8" in line]
    assert [r[1] for r in rows] == ["float32", "f16"]
    assert all(float(v) > 0 for r in rows for v in r[2:])
