"""bench/autocast_step.py runs and prints its rows (a tiny shape: the script, not timings)."""

from _util import bench_stdout


def test_prints_every_way():
    out = bench_stdout("autocast_step.py", "--shape", "64,32,16", "--rounds", "1", "--steps", "1",
                       "--uncentred", "--centred")
    rows = [line.split() for line in out.splitlines() if line.startswith(" ") and "64,32,16" in line]
    ways = [" ".join(r[1:3]) for r in rows]
    assert ways == ["eager autocast", "lnlinear autocast", "lnlinear float32", "x uncentred",
                    "x centred"]
    err = {w: float(r[-2]) for w, r in zip(ways, rows)}
    dtype = {w: r[-1] for w, r in zip(ways, rows)}
    assert dtype["lnlinear autocast"] == "bfloat16" and dtype["lnlinear float32"] == "float32"
    assert dtype["x centred"] == "bfloat16"
    # the float32 x (the CPU's mixed call) or the centring is what keeps the mean-1003 rows:
    # rounded as they are, they lose their spread
    for way in ("lnlinear autocast", "x centred"):
        assert err[way] < 2.5 * err["eager autocast"] < err["x uncentred"]
