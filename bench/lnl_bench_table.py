"""Markdown tables of one `lnl-bench --device cuda` run, from its printed output, against
issue #7's targets (the README's GPU tables are made with it).

    python3 bench/lnl_bench_table.py bench.log [--dtype bf16]
    python3 bench/lnl_bench_table.py --medians run1.json run2.json run3.json
    python3 bench/lnl_bench_table.py --bounds run1.json run2.json run3.json
    python3 bench/lnl_bench_table.py --choices run1.json run2.json run3.json

With --medians it reads the --json files of repeated runs instead (any device) and prints,
per problem and strategy, each run's fwd/GEMM and f+b/3GEMM and their medians: the form
the README's CPU figures take on a shared, noisy machine. For CUDA runs it then prints #7's
verdicts on the medians (target_medians): single runs move these ratios by 5-10%.

With --bounds it prints, for the 16-bit CUDA problems of those runs, what #7's targets
leave our GEMM kernel (bounds): FUSED's forward is a pre-pass and then a GEMM, and the
pre-pass's bytes at the 4.2 TB/s copy ceiling are taken off the target before the GEMM kernel
gets any of it. With --choices it prints, per problem, which strategy's forward was the faster
on the medians and what AUTO resolved to (choices): #7 asks that AUTO take the fused path
wherever it wins.

It reads the text lnl-bench prints (not its --json, which a run cut short never writes):
each shape's baseline line (cuBLAS on the problem's own data: the forward GEMM, the two
backward GEMMs, the forward+backward floor and the forward GEMM on constant data) and
the rows of FUSED, UNFUSED and AUTO. #7's targets, per shape, judged on FUSED's forward
and on AUTO's forward + backward (what a caller gets):
  - bf16/f16 forward, N >= 1024: <= 1.05 x the forward GEMM; N = 256: <= 1.2 x
    max(the forward GEMM, reading x once at 4.2 TB/s); none set for other N;
  - f32 forward: <= 1.05 x the (true fp32) forward GEMM;
  - bf16/f16 forward + backward: <= 1.05 x the floor (the three GEMMs, plus 3 M K
    elements and dy once at 4.2 TB/s; lnl-bench's f+b/floor column).
"""
import argparse
import json
import re
import statistics
import sys

# the groups read: dtype, M, K, N, then the forward GEMM, the floor and the constant-data GEMM
BASE = re.compile(r"^cuda (\w+)\s+(\d+),(\d+),(\d+)\s+cuBLAS GEMM\s+([\d.]+) .*three GEMMs of fwd\+bwd: "
                  r"[\d.]+ ms = [\d.]+ \+ dy\.W [\d.]+ \+ dy\^T\.ln_out [\d.]+; f\+b floor "
                  r"([\d.]+) ms; the forward GEMM on constant data ([\d.]+) ms")
# dtype, M, K, N, strategy, what AUTO resolved to, fwd ms, bwd ms
ROW = re.compile(r"^cuda (\w+)\s+(\d+),(\d+),(\d+)\s+(fused|unfused|auto)(?:->(\S+))?\s+([\d.]+)\s+([\d.]+)\s"
                 r".*\s[\d.]+e[-+]\d+\s+[\d.]+ (?:ok|FAIL)$")
ELEM = {"bf16": 2, "f16": 2, "f32": 4}


def parse(lines):
    shapes = {}
    for line in lines:
        m = BASE.match(line)
        if m:
            g, floor, const = map(float, m.group(5, 6, 7))
            shapes[(m.group(1), *map(int, m.group(2, 3, 4)))] = {"gemm": g, "floor": floor,
                                                                 "const": const}
            continue
        m = ROW.match(line)
        key = m and (m.group(1), *map(int, m.group(2, 3, 4)))
        if key in shapes:
            shapes[key][m.group(5)] = {"fwd": float(m.group(7)), "bwd": float(m.group(8)),
                                       "resolved": m.group(6) or m.group(5)}
    return shapes


def fwd_target(dt, M, K, N, gemm):
    if dt == "f32" or N >= 1024:
        return 1.05 * gemm
    if N == 256:
        return 1.2 * max(gemm, M * K * ELEM[dt] / 4.2e9)
    return None


def table(shapes, dtype):
    out = ["| M, K, N | cuBLAS GEMM ms (constant data) | FUSED fwd | FUSED f+b / floor | "
           "UNFUSED fwd | UNFUSED f+b / floor | AUTO fwd (resolves to) | AUTO fwd ms | "
           "AUTO f+b ms | AUTO f+b / floor | #7 FUSED fwd: target ms, met? | #7 AUTO f+b <= 1.05 floor? |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    x = lambda v: f"{v:.2f}x"  # noqa: E731
    for (dt, M, K, N), s in shapes.items():
        if dt != dtype or not all(k in s for k in ("fused", "unfused", "auto")):
            continue
        f, u, a = s["fused"], s["unfused"], s["auto"]
        fb = lambda r: (r["fwd"] + r["bwd"]) / s["floor"]  # noqa: E731
        t = fwd_target(dt, M, K, N, s["gemm"])
        tgt = "-" if t is None else f"{t:.4f}, " + ("met" if f["fwd"] <= t else "not met")
        fb_ok = "-" if dt == "f32" else "met" if fb(a) <= 1.05 else "not met"
        out.append(
            f"| {M}, {K}, {N} | {s['gemm']:.4f} ({s['const']:.4f}) | {x(f['fwd'] / s['gemm'])} | "
            f"{x(fb(f))} | {x(u['fwd'] / s['gemm'])} | {x(fb(u))} | "
            f"{x(a['fwd'] / s['gemm'])} ({a['resolved']}) | {a['fwd']:.4f} | "
            f"{a['fwd'] + a['bwd']:.4f} | {x(fb(a))} | {tgt} | "
            f"{fb_ok} |")
    return "\n".join(out)


def each_and_median(values):
    """Repeated runs' ratios as table cells: each run's, then their median."""
    return " / ".join(f"{x:.3f}" for x in values), f"{statistics.median(values):.3f}"


def problems(runs, cuda_only=False):
    """Repeated runs' results (their --json files) by problem: yields each (device, dtype, M,
    K, N, strategy) of the first run, in its order, with rows(strategy): that problem's
    results under a strategy, one from each run that has it. cuda_only keeps the CUDA
    results with a floor (the ones #7's targets judge)."""
    key = lambda r: (r["device"], r["dtype"], r["M"], r["K"], r["N"], r["strategy"])  # noqa: E731
    keep = lambda r: not cuda_only or (r.get("device") == "cuda" and r.get("floor_ms"))  # noqa: E731
    by_run = [{key(r): r for r in run if keep(r)} for run in runs]
    for k in by_run[0]:
        yield k, lambda s, k=k: [b[k[:5] + (s,)] for b in by_run if k[:5] + (s,) in b]


def medians(runs):
    """runs: one list of lnl-bench JSON results per run. Rows in the first run's order."""
    out = ["| device, dtype | M, K, N | strategy | fwd/GEMM (each run) | median | "
           "f+b/3GEMM (each run) | median | fwd ms (median) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k, rows in problems(runs):
        rs = rows(k[5])
        if rs[0]["gemm_ms"] <= 0:
            continue
        fw = [r["fwd_ms"] / r["gemm_ms"] for r in rs]
        fb = [(r["fwd_ms"] + r["bwd_ms"]) / r["three_gemm_ms"] for r in rs]
        out.append(f"| {k[0]} {k[1]} | {k[2]}, {k[3]}, {k[4]} | {k[5]} | "
                   + " | ".join(each_and_median(fw) + each_and_median(fb))
                   + f" | {statistics.median(r['fwd_ms'] for r in rs):.4f} |")
    return "\n".join(out)


def target_medians(runs):
    """#7's verdicts on the medians of repeated CUDA runs (their --json files): per problem,
    FUSED's forward against its target and AUTO's forward + backward against the floor,
    each run's ratio and their median. Problems without a target (f32 forward+backward, N
    not 256 and under 1024) show '-'. Rows in the first run's order."""
    out = ["| dtype | M, K, N | FUSED fwd / #7 target (each run) | median | met? | "
           "AUTO f+b / floor (each run) | median | <= 1.05? |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    def verdict(values, bound):  # each run's ratio, the median, and the median's verdict
        return each_and_median(values) + (
            "met" if statistics.median(values) <= bound else "not met",)

    for (_, dt, M, K, N, strategy), rows in problems(runs, cuda_only=True):
        if strategy != "fused":
            continue
        fused, auto = rows("fused"), rows("auto")
        tgt = [r["fwd_ms"] / t for r in fused
               for t in [fwd_target(dt, M, K, N, r["gemm_ms"])] if t is not None]
        fb = [(r["fwd_ms"] + r["bwd_ms"]) / r["floor_ms"] for r in auto]
        ft = verdict(tgt, 1) if tgt else ("-",) * 3
        ab = verdict(fb, 1.05) if fb and dt != "f32" else ("-",) * 3
        out.append(f"| {dt} | {M}, {K}, {N} | " + " | ".join(ft + ab) + " |")
    return "\n".join(out)


COPY_BYTES_PER_MS = 4.2e9  # #7's copy ceiling, 4.2 TB/s


def bounds(runs):
    """What #7's 16-bit targets ask of the forward's GEMM kernel, on the medians of repeated
    CUDA runs (their --json files). FUSED's forward folds the weight first (W read, W' =
    W gamma written: 2 N K elements) and needs each row's mean and rstd, from a pass that
    reads x (M K elements) or from the GEMM kernel itself. Even with those bytes moved at
    the copy ceiling and nothing else, the GEMM kernel gets (target - bytes' time) / cuBLAS's
    GEMM time: below 1 it must beat cuBLAS. The same bytes over the floor bound the
    forward + backward (the floor has no forward LayerNorm in it), every other kernel taken
    at its floor. Rows in the first run's order; problems without a forward target are left
    out."""
    out = ["| dtype | M, K, N | cuBLAS GEMM ms | fold W / read x at 4.2 TB/s, us | "
           "GEMM kernel / cuBLAS allowed: statistics pass / free in the GEMM | "
           "FUSED fwd / target (median) | least f+b / floor: statistics pass / free | "
           "AUTO f+b / floor (median) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    med = lambda rows, f: statistics.median(f(r) for r in rows)  # noqa: E731
    for (_, dt, M, K, N, strategy), rows in problems(runs, cuda_only=True):
        if strategy != "fused" or dt not in ("bf16", "f16"):
            continue
        fused, auto = rows("fused"), rows("auto")
        gemm, floor = med(fused, lambda r: r["gemm_ms"]), med(fused, lambda r: r["floor_ms"])
        target = fwd_target(dt, M, K, N, gemm)
        if target is None or not auto:
            continue
        fold = 2 * N * K * ELEM[dt] / COPY_BYTES_PER_MS
        stats = M * K * ELEM[dt] / COPY_BYTES_PER_MS
        fwd = med(fused, lambda r: r["fwd_ms"] / fwd_target(dt, M, K, N, r["gemm_ms"]))
        fb = med(auto, lambda r: (r["fwd_ms"] + r["bwd_ms"]) / r["floor_ms"])
        out.append(f"| {dt} | {M}, {K}, {N} | {gemm:.4f} | {fold * 1e3:.1f} / {stats * 1e3:.1f} | "
                   f"{(target - fold - stats) / gemm:.3f} / {(target - fold) / gemm:.3f} | "
                   f"{fwd:.3f} | {(floor + fold + stats) / floor:.3f} / "
                   f"{(floor + fold) / floor:.3f} | {fb:.3f} |")
    return "\n".join(out)


def choices(runs):
    """Per problem of repeated runs (their --json files): FUSED's and UNFUSED's median forward
    ms, the faster one and by how much, and what AUTO resolved to (its forward's strategy:
    lnl-bench prints AUTO's resolution as forward/backward where they differ). Rows in the
    first run's order."""
    out = ["| device, dtype | M, K, N | FUSED fwd ms | UNFUSED fwd ms | faster (by) | "
           "AUTO's forward |",
           "| --- | --- | --- | --- | --- | --- |"]
    for k, rows in problems(runs):
        if k[5] != "fused":
            continue
        each = {s: rows(s) for s in ("fused", "unfused", "auto")}
        if not all(each.values()):
            continue
        f, u = (statistics.median(r["fwd_ms"] for r in each[s]) for s in ("fused", "unfused"))
        faster = "FUSED" if f < u else "UNFUSED"
        out.append(f"| {k[0]} {k[1]} | {k[2]}, {k[3]}, {k[4]} | {f:.4f} | {u:.4f} | {faster} "
                   f"({max(f, u) / min(f, u) - 1:.1%}) | "
                   f"{each['auto'][0]['resolved'].split('/')[0].upper()} |")
    return "\n".join(out)


def medians_and_verdicts(runs):
    """--medians: the medians table, then #7's verdicts where the runs are CUDA runs."""
    text = medians(runs)
    if any(r.get("device") == "cuda" and r.get("floor_ms") for r in runs[0]):
        text += "\n\n" + target_medians(runs)
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log", nargs="?")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--medians", nargs="+", metavar="JSON")
    ap.add_argument("--bounds", nargs="+", metavar="JSON")
    ap.add_argument("--choices", nargs="+", metavar="JSON")
    a = ap.parse_args()
    for paths, make in ((a.medians, medians_and_verdicts), (a.bounds, bounds),
                        (a.choices, choices)):
        if paths:
            runs = []
            for path in paths:
                with open(path) as f:
                    runs.append(json.load(f))
            print(make(runs))
            return
    if not a.log:
        ap.error("a log file, or --medians with JSON files")
    with open(a.log) as f:
        shapes = parse(f.read().splitlines())
    if not shapes:
        sys.exit(f"{a.log}: no lnl-bench CUDA baseline lines (an lnl-bench from before a3ef450?)")
    print(table(shapes, a.dtype))


if __name__ == "__main__":
    main()
