"""Bandwidth ceilings for the LayerNorm backward's traffic (two reads, one write) on this GPU:
torch.add(a, b, out=c) and c.copy_(a) in bf16, CUDA-event medians."""
import statistics, torch
def med(fn, n=50):
    for _ in range(5): fn()
    ts = []
    for _ in range(n):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return statistics.median(ts)
for M, K in [(32768, 4096), (8192, 4096), (16384, 8192)]:
    a, b, c = (torch.randn(M, K, device="cuda").bfloat16() for _ in range(3))
    t_add = med(lambda: torch.add(a, b, out=c)); t_cp = med(lambda: c.copy_(a))
    by = M * K * 2
    print(f"{M}x{K} bf16: add (2R+1W) {t_add*1e3:.1f} us = {3*by/t_add/1e9:.2f} TB/s; copy {t_cp*1e3:.1f} us = {2*by/t_cp/1e9:.2f} TB/s")
