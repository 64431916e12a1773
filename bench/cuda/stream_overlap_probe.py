"""Probe: does a memory-bound row-statistics pass overlap a true-fp32 cuBLAS GEMM when
run on a second stream? Times (CUDA events, medians) GEMM alone, statistics alone, both in
one stream, and both forked onto a side stream (normal and high priority)."""
import statistics, torch
torch.backends.cuda.matmul.allow_tf32 = False
dev = "cuda"
def timeit(fn, reps=30, inner=5):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner): fn()
        b.record(); b.synchronize(); ts.append(a.elapsed_time(b) / inner)
    return statistics.median(ts)
lo, hi = torch.cuda.Stream.priority_range() if hasattr(torch.cuda.Stream, "priority_range") else (0, -1)
side_n = torch.cuda.Stream(priority=0)
side_h = torch.cuda.Stream(priority=-1)
for (M, K, N) in [(32768,4096,256),(16384,8192,1024),(8192,4096,4096),(8192,1024,1024),(8192,768,3072),(4096,768,768)]:
    x = torch.randn(M, K, device=dev) + 3
    w = torch.randn(N, K, device=dev)
    y = torch.empty(M, N, device=dev)
    mv = [None]
    def gemm(): torch.mm(x, w.t(), out=y)
    def stats(): mv[0] = torch.var_mean(x, dim=1)
    def seq(): stats(); gemm()
    def fork(side):
        def f():
            cur = torch.cuda.current_stream()
            side.wait_stream(cur)
            with torch.cuda.stream(side): stats()
            gemm()
            cur.wait_stream(side)
        return f
    r = dict(gemm=timeit(gemm), stats=timeit(stats), seq=timeit(seq), fork=timeit(fork(side_n)), fork_hi=timeit(fork(side_h)))
    g = r["gemm"]
    print(f"{M},{K},{N} gemm {g:.4f} stats {r['stats']:.4f} seq {r['seq']:.4f} ({r['seq']/g:.3f}x) fork {r['fork']:.4f} ({r['fork']/g:.3f}x) fork_hi {r['fork_hi']:.4f} ({r['fork_hi']/g:.3f}x)", flush=True)
