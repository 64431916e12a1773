#!/usr/bin/env bash
# Session 44, call 6: call 5's ceiling again. x.clone() is a cudaMemcpy (no kernel for ncu to
# (Its first run named the script copy.py, which shadows Python's copy module: torch failed to import.)
# profile), so the ceiling here is an elementwise kernel that reads x and writes a copy.
mkdir -p "$OUT/s44c6"
cat > "$OUT/s44c6/ceiling.py" <<'PY'
import torch
x = torch.randn(32768, 4096, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
for _ in range(2):
    torch.mul(x, 1.0, out=y)
torch.cuda.synchronize()
PY
timeout 60 ncu --kernel-name regex:elementwise --launch-skip 1 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis python3 "$OUT/s44c6/ceiling.py" >"$OUT/s44c6/ncu_copy.txt" 2>&1
echo "ncu copy rc $?"
grep -E "Duration|DRAM Throughput|Memory Throughput|Max Bandwidth|L2 Hit|Mem Busy" "$OUT/s44c6/ncu_copy.txt" | head -8
