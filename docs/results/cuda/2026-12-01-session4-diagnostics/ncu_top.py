"""Top SASS instructions by warp-stall samples from `ncu --page source --csv --print-source sass`."""
import csv, sys, io
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr_i = next(i for i, r in enumerate(rows) if any("Sampling" in c for c in r))
hdr = rows[hdr_i]
print("columns:", hdr[:12])
def col(*keys):
    for i, c in enumerate(hdr):
        if all(k in c for k in keys):
            return i
    return None
ci = col("Sampling", "All") or col("Sampling")
src = col("Source")
addr = col("Address")
data = []
for r in rows[hdr_i + 1:]:
    if len(r) <= max(ci, src or 0):
        continue
    try:
        v = float(r[ci].replace(",", "") or 0)
    except ValueError:
        continue
    data.append((v, r))
tot = sum(v for v, _ in data) or 1
print(f"total samples {tot:.0f} over {len(data)} instructions")
for v, r in sorted(data, key=lambda t: -t[0])[:45]:
    print(f"{100*v/tot:5.1f}%  {r[addr] if addr is not None else ''}  {r[src][:110]}")
# local memory instructions
loc = [(v, r) for v, r in data if ("LDL" in r[src] or "STL" in r[src])]
print("local-memory instructions:", len(loc), "samples", sum(v for v, _ in loc))
for v, r in loc[:30]:
    print(f"   {v:6.0f}  {r[addr] if addr is not None else ''}  {r[src][:100]}")
