"""bench/lnl_bench_table.py turns lnl-bench's printed CUDA rows into the README's tables and
#7's verdicts; checked on a recorded run (e7d2f4c, cut by the device budget before its
last shape, which the tables must simply leave out) and on hand-made rows whose verdicts
are known."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import lnl_bench_table  # noqa: E402

LOG = os.path.join(ROOT, "docs", "results", "lnl-bench", "cuda-h200-2026-12-01-e7d2f4c.txt")

BASE = ("cuda bf16        {M},{K},{N}  cuBLAS GEMM          {g:.4f}         - 1.0   (three GEMMs of "
        "fwd+bwd: {g3:.4f} ms = {g:.4f} + dy.W 0.1 + dy^T.ln_out 0.1; f+b floor {fl:.4f} ms; the "
        "forward GEMM on constant data 0.0900 ms)")
ROW = ("cuda bf16        {M},{K},{N}  {s:<20} {f:.4f}    {b:.4f}  1.0  1.0   1.0     1.0     1.0  "
       "2.40e-03     0.000 ok")


def test_recorded_run():
    with open(LOG) as f:
        shapes = lnl_bench_table.parse(f.read().splitlines())
    s = shapes[("bf16", 32768, 4096, 256)]
    assert s["auto"]["resolved"] == "fused/unfused" and s["fused"]["fwd"] == 0.1513
    assert ("f32", 16384, 8192, 1024) in shapes and ("f32", 32768, 4096, 256) not in shapes
    bf16 = lnl_bench_table.table(shapes, "bf16").splitlines()
    assert len(bf16) == 2 + 8
    assert len(lnl_bench_table.table(shapes, "f32").splitlines()) == 2 + 7  # the cut shape left out


def test_verdicts():
    lines = [BASE.format(M=8192, K=4096, N=4096, g=0.4, g3=1.2, fl=1.3),
             ROW.format(M=8192, K=4096, N=4096, s="fused", f=0.42, b=0.9),      # 1.05 x GEMM
             ROW.format(M=8192, K=4096, N=4096, s="unfused", f=0.5, b=0.9),
             ROW.format(M=8192, K=4096, N=4096, s="auto->unfused", f=0.5, b=0.9),  # 1.077 floor
             BASE.format(M=32768, K=4096, N=256, g=0.1, g3=0.4, fl=0.6),
             ROW.format(M=32768, K=4096, N=256, s="fused", f=0.13, b=0.5),
             ROW.format(M=32768, K=4096, N=256, s="unfused", f=0.2, b=0.5),
             ROW.format(M=32768, K=4096, N=256, s="auto->fused/unfused", f=0.13, b=0.49)]  # 1.033
    rows = lnl_bench_table.table(lnl_bench_table.parse(lines), "bf16").splitlines()[2:]
    big, small = (r.split(" | ") for r in rows)
    assert big[2] == "1.05x" and big[-2] == "0.4200, met" and big[-1] == "not met |"
    # N = 256: 1.2 x max(GEMM 0.1, x read 32768 * 4096 * 2 B at 4.2 TB/s = 0.0639 ms)
    assert small[-2] == "0.1200, not met" and small[-1] == "met |"
    assert small[6] == "1.30x (fused/unfused)"


def test_medians_reproduce_the_recorded_cpu_table():
    # docs/results/lnl-bench/cpu-2026-11-30-medians.md was written from these three runs
    runs = []
    for i in (1, 2, 3):
        path = os.path.join(ROOT, "docs", "results", "lnl-bench", f"cpu-2026-11-30-run{i}.json")
        with open(path) as f:
            runs.append(json.load(f))
    rows = lnl_bench_table.medians(runs).splitlines()[2:]
    assert rows[4] == ("| cpu f32 | 2048, 768, 768 | fused | 0.937 / 0.927 / 0.933 | 0.933 | "
                       "1.014 / 0.985 / 1.014 | 1.014 | 15.9794 |")
    with open(os.path.join(ROOT, "docs", "results", "lnl-bench", "cpu-2026-11-30-medians.md")) as f:
        recorded = f.read()
    assert "| 2048, 768, 768 | fused | 0.937 / 0.927 / 0.933 | 0.933 |" in recorded


def test_target_medians_judge_the_median_run():
    # one bf16 problem at N = 4096 in three runs: FUSED's forward at 1.00, 1.10 and 1.20 x
    # its target (1.05 x GEMM), AUTO's forward + backward at 1.04, 1.06 and 1.02 x the floor
    def run(fwd_over_target, fb_over_floor):
        gemm, floor = 0.4, 1.3
        fused = {"device": "cuda", "dtype": "bf16", "M": 8192, "K": 4096, "N": 4096,
                 "strategy": "fused", "fwd_ms": fwd_over_target * 1.05 * gemm, "bwd_ms": 0.9,
                 "gemm_ms": gemm, "floor_ms": floor, "three_gemm_ms": 1.2}
        auto = dict(fused, strategy="auto", fwd_ms=0.4, bwd_ms=fb_over_floor * floor - 0.4)
        return [fused, auto]

    runs = [run(1.00, 1.04), run(1.10, 1.06), run(1.20, 1.02)]
    rows = lnl_bench_table.target_medians(runs).splitlines()
    assert len(rows) == 3
    cells = rows[2].split(" | ")
    assert cells[2:5] == ["1.000 / 1.100 / 1.200", "1.100", "not met"]
    assert cells[5:] == ["1.040 / 1.060 / 1.020", "1.040", "met |"]
    # a median under the target is met, f32's forward + backward has no target
    runs = [run(0.95, 1.2), run(1.5, 1.2), run(0.99, 1.2)]
    for r in runs:
        for row in r:
            row["dtype"] = "f32"
    cells = lnl_bench_table.target_medians(runs).splitlines()[2].split(" | ")
    assert cells[3:5] == ["0.990", "met"] and cells[5:] == ["-", "-", "- |"]


def test_bounds_take_the_pre_pass_bytes_off_the_target():
    # bf16 8192,4096,4096 with a 0.4 ms GEMM and a 1.3 ms floor: the fold moves 2 N K and
    # the statistics pass M K elements of 2 bytes, 0.015978 ms each at 4.2 TB/s, so the
    # GEMM kernel is allowed (0.42 - 0.031957) / 0.4 = 0.970 of cuBLAS's time with the pass
    # and (0.42 - 0.015978) / 0.4 = 1.010 with the statistics free; FUSED's 0.44 ms is 1.048
    # of its target, and the least f+b is (1.3 + 0.031957) / 1.3 and (1.3 + 0.015978) / 1.3
    def run(fused_fwd, dtype="bf16", N=4096):
        fused = {"device": "cuda", "dtype": dtype, "M": 8192, "K": 4096, "N": N,
                 "strategy": "fused", "fwd_ms": fused_fwd, "bwd_ms": 0.9,
                 "gemm_ms": 0.4, "floor_ms": 1.3, "three_gemm_ms": 1.2}
        return [fused, dict(fused, strategy="auto", fwd_ms=0.4, bwd_ms=0.965)]

    runs = [run(0.44), run(0.50), run(0.43)]
    runs = [r + run(0.44, "f32") + run(0.44, N=768) for r in runs]  # no row for these two
    rows = lnl_bench_table.bounds(runs).splitlines()
    assert len(rows) == 3
    assert rows[2] == ("| bf16 | 8192, 4096, 4096 | 0.4000 | 16.0 / 16.0 | 0.970 / 1.010 | "
                       "1.048 | 1.025 / 1.012 | 1.050 |")


def test_bounds_reproduce_the_recorded_tables():
    # docs/results/cuda/2026-12-05-session55/bounds_h200_s48_bf16.md was written from session
    # 48's three H200 runs
    runs = []
    for i in (1, 2, 3):
        path = os.path.join(ROOT, "docs", "results", "cuda", "2026-12-05-session48", "call5",
                            f"full_bf16_r{i}.json")
        with open(path) as f:
            runs.append(json.load(f))
    with open(os.path.join(ROOT, "docs", "results", "cuda", "2026-12-05-session55",
                           "bounds_h200_s48_bf16.md")) as f:
        assert lnl_bench_table.bounds(runs) + "\n" == f.read()


def test_choices_name_the_faster_forward_and_autos():
    # FUSED's forward at 0.30 / 0.50 / 0.31 ms (median 0.31) against UNFUSED's 0.40 in three
    # runs: FUSED faster by 0.40 / 0.31 - 1; AUTO resolved to fused for the forward, unfused
    # for the backward. A problem without an AUTO row is left out.
    def run(fused_fwd):
        fused = {"device": "cuda", "dtype": "bf16", "M": 8192, "K": 1024, "N": 1024,
                 "strategy": "fused", "fwd_ms": fused_fwd, "resolved": "fused"}
        lone = dict(fused, M=16)
        return [fused, dict(fused, strategy="unfused", fwd_ms=0.40, resolved="unfused"),
                dict(fused, strategy="auto", fwd_ms=0.31, resolved="fused/unfused"), lone,
                dict(lone, strategy="unfused")]

    rows = lnl_bench_table.choices([run(0.30), run(0.50), run(0.31)]).splitlines()
    assert rows[2:] == ["| cuda bf16 | 8192, 1024, 1024 | 0.3100 | 0.4000 | FUSED (29.0%) | FUSED |"]
