#!/usr/bin/env python3
"""Where a kernel's warps spend their time, from Nsight Compute's source page.

    ncu ... --section SourceCounters -o rep python3 bench/cuda/ncu_forward.py ...
    ncu --import rep.ncu-rep --page source --csv --print-source sass > sass.csv
    python3 bench/cuda/ncu_sass_summary.py sass.csv --list
    python3 bench/cuda/ncu_sass_summary.py sass.csv --kernel 0 [--top 30] [--range 425 1530]

The page holds one block a profiled kernel ("Kernel Name" row, then a header row and one
row a SASS instruction). For the chosen block it prints:
  - the share of the warp-state samples taken at each execution count: instructions run
    equally often belong together (a main loop's instructions run once a K slice and warp,
    an epilogue's once a tile and warp), so this splits a kernel into its loops without
    source line information;
  - the contiguous runs of instructions that hold more than 1% of the samples;
  - the instructions with the most samples and their two main stall reasons;
  - with --range A B, the samples, stall reasons and opcodes of instructions A..B.
Session 21 used it to compare our Hopper GEMM kernel with cuBLAS's
(docs/results/cuda/2026-12-02-session21/README.md).
"""
import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def read_blocks(path):
    """[{name, header, rows}] in the page's order"""
    blocks = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                blocks.append({"name": row[1] if len(row) > 1 else "", "header": None, "rows": []})
            elif row[0] == "Address" and blocks:
                blocks[-1]["header"] = row
            elif blocks and blocks[-1]["header"] is not None:
                blocks[-1]["rows"].append(row)
    return [b for b in blocks if b["header"]]


class Block:
    def __init__(self, raw):
        self.name = raw["name"]
        self.rows = raw["rows"]
        self.col = {k: i for i, k in enumerate(raw["header"])}
        self.stalls = [k for k in raw["header"] if k.startswith("stall_")]
        self.total = sum(self.samples(r) for r in self.rows) or 1.0

    def num(self, row, key):
        i = self.col.get(key)
        try:
            return float(row[i]) if i is not None and row[i] else 0.0
        except ValueError:
            return 0.0

    def samples(self, row):
        return self.num(row, SAMPLES)

    def executed(self, row):
        return self.num(row, EXECUTED)

    def source(self, row):
        return row[self.col["Source"]].strip()

    def opcode(self, row):
        words = self.source(row).split()
        if words and words[0].startswith("@"):  # a predicate guard
            words = words[1:]
        return words[0].split(".")[0] if words else ""

    def top_stalls(self, row, n=2):
        vals = sorted(((self.num(row, k), k[len("stall_"):]) for k in self.stalls), reverse=True)
        return " ".join(f"{k}:{v:.0f}" for v, k in vals[:n] if v > 0)

    def pct(self, s):
        return 100.0 * s / self.total


def by_execution_count(b):
    """execution count -> [samples, instructions, instructions executed]"""
    out = collections.defaultdict(lambda: [0.0, 0, 0.0])
    for r in b.rows:
        e = b.executed(r)
        out[e][0] += b.samples(r)
        out[e][1] += 1
        out[e][2] += e
    return out


def runs(b):
    """maximal runs of consecutive instructions with one execution count: [first, last, count, samples]"""
    out = []
    for i, r in enumerate(b.rows):
        e, s = b.executed(r), b.samples(r)
        if out and out[-1][2] == e:
            out[-1][1] = i
            out[-1][3] += s
        else:
            out.append([i, i, e, s])
    return out


def print_summary(b, top):
    print(f"{b.name[:100]}: {len(b.rows)} instructions, {b.total:.0f} samples, "
          f"{sum(b.executed(r) for r in b.rows):.0f} warp-instructions executed")
    print("samples by execution count (count: share, instructions, warp-instructions):")
    groups = sorted(by_execution_count(b).items(), key=lambda t: -t[1][0])
    for e, (s, n, ie) in groups[:12]:
        print(f"  {e:10.0f}: {b.pct(s):5.1f}%  {n:5d}  {ie:12.0f}")
    print("runs of instructions with more than 1% of the samples:")
    for a, z, e, s in runs(b):
        if b.pct(s) > 1.0:
            print(f"  [{a}-{z}] count {e:.0f}: {b.pct(s):5.1f}%  from `{b.source(b.rows[a])[:50]}`")
    print(f"the {top} instructions with the most samples:")
    order = sorted(range(len(b.rows)), key=lambda i: -b.samples(b.rows[i]))
    for i in order[:top]:
        r = b.rows[i]
        print(f"  {i:5d} {b.pct(b.samples(r)):5.1f}%  count {b.executed(r):9.0f}  "
              f"{b.source(r)[:58]:58s} {b.top_stalls(r)}")


def print_range(b, first, last):
    rows = b.rows[first:last + 1]
    print(f"instructions {first}-{last}: {b.pct(sum(b.samples(r) for r in rows)):.1f}% of the samples")
    stalls = collections.Counter()
    ops = collections.defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        for k in b.stalls:
            stalls[k[len("stall_"):]] += b.num(r, k)
        ops[b.opcode(r)][0] += b.samples(r)
        ops[b.opcode(r)][1] += b.executed(r)
    print("  stall reasons: " + ", ".join(f"{k} {b.pct(v):.1f}%" for k, v in stalls.most_common(8)))
    print("  opcodes (share of samples / warp-instructions): " + ", ".join(
        f"{k} {b.pct(v[0]):.1f}%/{v[1]:.0f}" for k, v in sorted(ops.items(), key=lambda t: -t[1][0])[:14]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--list", action="store_true", help="list the kernels (blocks) in the file")
    ap.add_argument("--kernel", type=int, default=0, help="block index, as --list numbers them")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--range", type=int, nargs=2, metavar=("FIRST", "LAST"))
    a = ap.parse_args(argv)
    blocks = read_blocks(a.csv)
    if not blocks:
        print(f"{a.csv}: no source page blocks found", file=sys.stderr)
        return 1
    if a.list:
        for i, raw in enumerate(blocks):
            b = Block(raw)
            print(f"{i}: {b.name[:100]} ({len(b.rows)} instructions, {b.total:.0f} samples)")
        return 0
    if not 0 <= a.kernel < len(blocks):
        print(f"--kernel {a.kernel}: the file has blocks 0..{len(blocks) - 1}", file=sys.stderr)
        return 1
    b = Block(blocks[a.kernel])
    if a.range:
        print_range(b, *a.range)
    else:
        print_summary(b, a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
