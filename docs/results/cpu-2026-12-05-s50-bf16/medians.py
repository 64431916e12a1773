"""Medians over the three runs of each build in this folder (python3 medians.py)."""
import json
import os
import statistics

here = os.path.dirname(os.path.abspath(__file__))
rows = {}
for build in ("d348e66", "cb9e506"):
    for i in (1, 2, 3):
        d = json.load(open(os.path.join(here, build, f"bf16-run{i}", "results.json")))
        for r in d["results"]:
            c = r["candidates"]
            a, e = c["lnl_auto"], c["eager"]
            key = (r["M"], r["K"], r["N"])
            rows.setdefault(key, {}).setdefault(build, []).append(
                (e["fwdbwd_ms"] / a["fwdbwd_ms"], e["fwd_ms"] / a["fwd_ms"], a["fwdbwd_ms"],
                 e["fwdbwd_ms"], a["max_rel_err"], e["max_rel_err"]))
print("| M x K x N | f+b speed-up over eager, d348e66 [runs] | cb9e506 [runs] | fwd speed-up d348e66 / cb9e506 "
      "| AUTO f+b ms d348e66 / cb9e506 | eager f+b ms | max err AUTO / eager |")
print("| --- | --- | --- | --- | --- | --- | --- |")
med = statistics.median
for (M, K, N), b in rows.items():
    new, old = b["d348e66"], b["cb9e506"]
    f = lambda v, j: med(x[j] for x in v)  # noqa: E731
    runs = lambda v: ", ".join(f"{x[0]:.2f}" for x in v)  # noqa: E731
    print(f"| {M}x{K}x{N} | {f(new, 0):.2f} [{runs(new)}] | {f(old, 0):.2f} [{runs(old)}] | "
          f"{f(new, 1):.2f} / {f(old, 1):.2f} | {f(new, 2):.3g} / {f(old, 2):.3g} | "
          f"{med([x[3] for x in new + old]):.3g} | {f(new, 4):.1e} / {f(new, 5):.1e} |")
