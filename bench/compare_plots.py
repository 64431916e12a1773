#!/usr/bin/env python3
"""results.md and the PNG plots of a bench/compare.py run, from its results.json.

    python3 bench/compare_plots.py docs/results/cpu-2026-01-01/results.json [--out DIR]

compare.py calls write_report() at the end of a run; run this file by hand to redraw
after editing the layout, without measuring again.
"""

import argparse
import json
import math
import os

import matplotlib

matplotlib.use("Agg")  # files only: the benchmark machines have no display
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

PEERS = ("eager", "compile", "liger")  # what lnlinear is judged against
LNL = ("lnl_fused", "lnl_unfused", "lnl_fused_keep", "lnl_auto")
COLORS = {"lnl_fused": "#1f77b4", "lnl_unfused": "#aec7e8", "lnl_fused_keep": "#17becf",
          "lnl_auto": "#08306b", "eager": "#7f7f7f", "compile": "#ff7f0e", "liger": "#2ca02c",
          "floor": "#d62728"}
PHASES = (("fwd", "forward"), ("fwdbwd", "forward+backward"))


def shape_label(e):
    return f"{e['M']}x{e['K']}x{e['N']}"


def fmt(v, digits=3):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def mb(v):
    return None if v is None else v / 2**20


def ratio(a, b):
    return a / b if a and b else None


def derived(entry):
    """Per candidate: speed-up over eager and time / GEMM floor, per phase."""
    c = entry["candidates"]
    out = {}
    for name, r in c.items():
        d = {}
        for ph, _ in PHASES:
            t = r.get(f"{ph}_ms")
            d[f"speedup_{ph}"] = ratio(c.get("eager", {}).get(f"{ph}_ms"), t)
            d[f"floor_{ph}"] = ratio(t, c.get("floor", {}).get(f"{ph}_ms"))
        out[name] = d
    return out


def slower_than_peers(doc):
    """Lines naming every problem and phase where an lnlinear variant loses to a peer."""
    lines = []
    for e in doc["results"]:
        c = e["candidates"]
        for ph, phase in PHASES:
            peers = [(c[p][f"{ph}_ms"], p) for p in PEERS if c.get(p, {}).get(f"{ph}_ms")]
            if not peers:
                continue
            best_t, best = min(peers)
            for name in LNL:
                t = c.get(name, {}).get(f"{ph}_ms")
                if t and t > best_t:
                    lines.append(f"- {shape_label(e)} {e['dtype']} {phase}: {name} "
                                 f"{fmt(t)} ms vs {best} {fmt(best_t)} ms "
                                 f"({t / best_t:.2f}x slower)")
    return lines


def headline(doc):
    """One line per problem: lnlinear auto against eager and the best peer, fwd+bwd."""
    rows = ["## Headline: forward+backward, lnlinear auto vs PyTorch", "",
            "| M x K x N | dtype | eager ms | best peer | lnlinear auto ms | speed-up over "
            "eager | over best peer | x GEMM floor | kept MB eager -> auto |",
            "|" + " --- |" * 9]
    for e in doc["results"]:
        c = e["candidates"]
        auto = c.get("lnl_auto", {}).get("fwdbwd_ms")
        eager = c.get("eager", {}).get("fwdbwd_ms")
        floor = c.get("floor", {}).get("fwdbwd_ms")
        peers = [(c[p]["fwdbwd_ms"], p) for p in PEERS if c.get(p, {}).get("fwdbwd_ms")]
        best_t, best = min(peers) if peers else (None, "–")
        rows.append("| " + " | ".join([
            shape_label(e), e["dtype"], fmt(eager), f"{best} {fmt(best_t)}", fmt(auto),
            fmt(ratio(eager, auto)), fmt(ratio(best_t, auto)), fmt(ratio(auto, floor)),
            f"{fmt(mb(c.get('eager', {}).get('kept_bytes')))} -> "
            f"{fmt(mb(c.get('lnl_auto', {}).get('kept_bytes')))}"]) + " |")
    return rows + [""]


def markdown(doc):
    m = doc["machine"]
    where = m.get("gpu") or m.get("cpu", "?")
    out = [f"# LayerNorm + Linear: lnlinear vs PyTorch ({doc['results'][0]['device'] if doc['results'] else '?'}, {doc['date']})",
           "",
           f"- machine: {where}" + (f" (host CPU {m.get('cpu')})" if m.get("gpu") else "")
           + f"; torch {m.get('torch')}; lnlinear {m.get('lnlinear_version', m.get('lnlinear_error'))}"
           + (f" ({m['lnlinear_eager_node']} autograd node)" if m.get("lnlinear_eager_node") else "")
           + f"; liger-kernel {m.get('liger_kernel')}; torch threads {m.get('torch_threads')}",
           f"- command: `{doc['command']}`",
           f"- settings: {json.dumps(doc.get('settings', {}))}",
           "- times: median ms per call over round-robin samples after warm-up; forward runs with "
           "autograd recording (training forward); fwd+bwd computes all five gradients for a "
           "random grad_output. speed-up = eager time / candidate time; x floor = candidate time / "
           "time of the GEMM alone (F.linear with bias on a pre-normalized input; its fwd+bwd "
           "computes d(input), d(weight), d(bias)).",
           "- kept MB: memory held between forward and backward besides the output y and the inputs "
           "(CUDA: allocator growth over the forward minus y; CPU: new tensors saved for backward, "
           "via saved_tensors_hooks). peak MB: allocator peak of one forward+backward above the "
           "pre-allocated inputs (CUDA only).",
           "- max rel err: over y and the five gradients, max|out - ref| / max|ref| against "
           "float64 LayerNorm+Linear on the same inputs (the floor: y only).",
           ""]
    if doc.get("liger_note"):
        out += [f"- Liger: {doc['liger_note']}", ""]
    out += headline(doc)
    cols = ("candidate | fwd ms | fwd+bwd ms | speed-up fwd | speed-up fwd+bwd | x floor fwd | "
            "x floor fwd+bwd | kept MB | peak MB | max rel err")
    notes = []
    for e in doc["results"]:
        out += [f"## {shape_label(e)} {e['dtype']} (M x K x N)", ""]
        if e.get("error"):
            out += [f"problem failed: {e['error']}", ""]
            continue
        out += [f"| {cols} |", "|" + " --- |" * (cols.count("|") + 1)]
        der = derived(e)
        for name, label in doc["candidates"].items():
            r = e["candidates"].get(name)
            if r is None:
                continue
            d = der[name]
            if "resolves_to" in r:
                label += f" (-> {r['resolves_to']})"
            if r.get("error") and not r.get("fwd_ms"):
                out.append(f"| {label} | {r['error'][:120]} |" + " |" * 8)
                continue
            out.append("| " + " | ".join([
                label, fmt(r.get("fwd_ms")), fmt(r.get("fwdbwd_ms")), fmt(d["speedup_fwd"]),
                fmt(d["speedup_fwdbwd"]), fmt(d["floor_fwd"]), fmt(d["floor_fwdbwd"]),
                fmt(mb(r.get("kept_bytes"))), fmt(mb(r.get("peak_bytes"))),
                f"{r['max_rel_err']:.2e}" if r.get("max_rel_err") is not None else "–"]) + " |")
            if r.get("error"):
                notes.append(f"- {shape_label(e)} {e['dtype']} {name}: {r['error']}")
        if e.get("reference_error"):
            notes.append(f"- {shape_label(e)} {e['dtype']}: float64 reference failed: "
                         f"{e['reference_error']}")
        out.append("")
    slow = slower_than_peers(doc)
    out += ["## Where lnlinear is slower than a peer (eager, torch.compile, Liger)", ""]
    out += slow or ["- nowhere in this run"]
    out.append("")
    if notes:
        out += ["## Errors and skips", ""] + notes + [""]
    return "\n".join(out)


def _grouped_bars(ax, entries, names, value, title, ylabel, base=None):
    """One group of bars per shape. With base set, bars start at base (1 = parity), so
    up means more / slower and down means less / faster at a glance on the log axis."""
    labels = [shape_label(e) for e in entries]
    vals = {n: [value(e, n) for e in entries] for n in names}
    vals = {n: v for n, v in vals.items()
            if any(x is not None and math.isfinite(x) and x > 0 for x in v)}
    width = 0.8 / max(len(vals), 1)
    for i, (name, v) in enumerate(vals.items()):
        xs, ys = [], []
        for j, x in enumerate(v):
            if x is not None and math.isfinite(x) and x > 0:
                xs.append(j + (i - (len(vals) - 1) / 2) * width)
                ys.append(x)
        if base is None:
            ax.bar(xs, ys, width, label=name, color=COLORS.get(name))
        else:
            ax.bar(xs, [y - base for y in ys], width, bottom=base, label=name,
                   color=COLORS.get(name))
    if base is not None:
        ax.axhline(base, color="black", lw=0.8)
    ax.set_yscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=15, fontsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", which="both", alpha=0.3)


def _by_dtype(doc):
    groups = {}
    for e in doc["results"]:
        if not e.get("error"):
            groups.setdefault(e["dtype"], []).append(e)
    return groups


def _present(doc, names, groups):
    return [n for n in names if any(n in e["candidates"] for es in groups.values() for e in es)]


def plots(doc, out):
    groups = _by_dtype(doc)
    if not groups:
        return []
    dev = doc["results"][0]["device"]
    files = []
    cands = [c for c in doc["candidates"]]

    def der(e, name, key):
        return derived(e).get(name, {}).get(key)

    specs = [
        ("speedup.png", [c for c in cands if c != "eager"], "speed-up over eager (x; up = faster)",
         lambda ph: (lambda e, n: der(e, n, f"speedup_{ph}")), 1.0, True),
        ("floor_ratio.png", [c for c in cands if c != "floor"],
         "time / GEMM-floor time (1 = floor)", lambda ph: (lambda e, n: der(e, n, f"floor_{ph}")),
         1.0, True),
        ("memory_kept.png", [c for c in cands if c != "floor"],
         "MB kept between forward and backward",
         lambda ph: (lambda e, n: mb(e["candidates"].get(n, {}).get("kept_bytes"))), None,
         False),
    ]
    for fname, names, ylabel, value, hline, per_phase in specs:
        names = _present(doc, names, groups)
        ncols = 2 if per_phase else 1
        fig, axes = plt.subplots(len(groups), ncols, squeeze=False,
                                 figsize=(7.5 * ncols, 3.8 * len(groups)))
        for r, (dt, es) in enumerate(groups.items()):
            phases = PHASES if per_phase else (("fwd", "after forward"),)
            for c, (ph, phase) in enumerate(phases):
                _grouped_bars(axes[r][c], es, names, value(ph), f"{dev} {dt}: {phase}", ylabel,
                              hline)
        seen = {}
        for ax in axes.flat:  # a candidate may have bars in one panel only
            for h, l in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(l, h)
        labels, handles = list(seen), list(seen.values())
        if not labels:  # nothing to draw, e.g. no floor candidate for floor_ratio.png
            plt.close(fig)
            continue
        fig.legend(handles, [doc["candidates"].get(l, l) for l in labels], loc="lower center",
                   ncol=min(4, len(labels)), fontsize=8, frameon=False)
        fig.suptitle(f"LayerNorm+Linear, {dev}, {doc['date']} ({ylabel.split(' (')[0]})",
                     fontsize=11)
        fig.tight_layout(rect=(0, 0.08 if len(groups) == 1 else 0.05, 1, 0.96))
        path = os.path.join(out, fname)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def write_report(doc, out):
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(doc))
    return plots(doc, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="results.json written by bench/compare.py")
    ap.add_argument("--out", help="folder for results.md and the PNGs (default: beside the json)")
    a = ap.parse_args()
    with open(a.results) as f:
        doc = json.load(f)
    write_report(doc, a.out or os.path.dirname(os.path.abspath(a.results)))


if __name__ == "__main__":
    main()
