"""Where the host time of one small lnlinear call goes on CUDA, piece by piece.

    LNLINEAR_LIBRARY=build-gpu/liblnlinear.so PYTHONPATH=python \
        python3 bench/cuda/host_breakdown.py [--dtype bf16] [--shape 16,8,16] [--profile]

At M=16, K=8, N=16 the GPU work is a few microseconds, so a call's wall time is host
time: Python argument handling, tensor allocation, ctypes, the C library's own host
path and the kernel launches. This script times each piece alone (mean per call over
many calls, median of several batches), the whole call, and PyTorch eager beside it,
so a change to the call path can be aimed at the piece that costs. --profile adds a
cProfile listing of the whole no-grad call.
"""
import argparse
import cProfile
import ctypes
import pstats
import statistics
import time

import torch
import torch.nn.functional as F

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def per_call_us(fn, iters=5000, repeats=7):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / iters * 1e6)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="bf16", choices=sorted(DT))
    ap.add_argument("--shape", default="16,8,16")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--gil", action="store_true",
                    help="also time forward+backward with the library's calls releasing the GIL "
                         "(ctypes.CDLL) and holding it (ctypes.PyDLL), in turn")
    ap.add_argument("--fb-only", action="store_true", help="only the forward+backward rows")
    args = ap.parse_args()
    import lnlinear
    from lnlinear import _clib, ops
    def load_as(loader):
        lib2 = loader(_clib.library_path)
        for name in ("lnl_forward", "lnl_backward", "lnl_forward_workspace_size",
                     "lnl_backward_workspace_size", "lnl_dtype_size", "lnl_last_error",
                     "lnl_status_string"):
            f, f2 = getattr(_clib.lib, name), getattr(lib2, name)
            f2.argtypes, f2.restype = f.argtypes, f.restype
        return lib2

    gil_libs = {"release": load_as(ctypes.CDLL), "hold": load_as(ctypes.PyDLL)}
    M, K, N = (int(v) for v in args.shape.split(","))
    dt, dev = DT[args.dtype], torch.device("cuda")
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(M, K, device=dev, generator=g).to(dt) + 1
    lnw, lnb = (torch.randn(K, device=dev, generator=g).to(dt) for _ in range(2))
    w = torch.randn(N, K, device=dev, generator=g).to(dt)
    b = torch.randn(N, device=dev, generator=g).to(dt)
    y = torch.empty(M, N, device=dev, dtype=dt)
    mean = torch.empty(M, device=dev)
    rstd = torch.empty(M, device=dev)
    p = ops._problem(x, N, 1e-5, _clib.STRATEGY_AUTO)
    ws_bytes = _clib.lib.lnl_forward_workspace_size(ctypes.byref(p))
    ws = torch.empty(ws_bytes, dtype=torch.uint8, device=dev)
    lib = _clib.lib
    ptrs = [t.data_ptr() for t in (x, lnw, lnb, w, b, y, mean, rstd)]

    def c_call(prob=p):
        lib.lnl_forward(ctypes.byref(prob), ptrs[0], ptrs[1], ptrs[2], ptrs[3], ptrs[4], ptrs[5],
                        ptrs[6], ptrs[7], None, ws.data_ptr(), ws_bytes)

    p_fused = ops._problem(x, N, 1e-5, _clib.STRATEGY_FUSED)
    p_unfused = ops._problem(x, N, 1e-5, _clib.STRATEGY_UNFUSED)
    ws_unfused = lib.lnl_forward_workspace_size(ctypes.byref(p_unfused))
    ws = torch.empty(max(ws_bytes, ws_unfused), dtype=torch.uint8, device=dev)
    ws_bytes = ws.numel()
    # backward operands, all given (the C library's host path alone)
    dy = torch.randn(M, N, device=dev, generator=g).to(dt)
    grads = [torch.empty(s, device=dev, dtype=dt) for s in ((M, K), (K,), (K,), (N, K), (N,))]
    bws_bytes = lib.lnl_backward_workspace_size(ctypes.byref(p))
    bws = torch.empty(bws_bytes, dtype=torch.uint8, device=dev)
    c_call(p)
    bptrs = [dy.data_ptr(), x.data_ptr(), lnw.data_ptr(), lnb.data_ptr(), w.data_ptr(),
             mean.data_ptr(), rstd.data_ptr(), None] + [t.data_ptr() for t in grads]

    def c_bwd():
        lib.lnl_backward(ctypes.byref(p), *bptrs, bws.data_ptr(), bws_bytes)

    stats2 = torch.empty((2, M), device=dev)
    rows = [
        ("eager F.layer_norm + F.linear", lambda: F.linear(F.layer_norm(x, (K,), lnw, lnb), w, b)),
        ("eager F.linear alone", lambda: F.linear(x, w, b)),
        ("layernorm_linear (no grad)", lambda: lnlinear.layernorm_linear(x, lnw, lnb, w, b)),
        ("forward_body(check=False, lean)",
         lambda: ops.forward_body(x, lnw, lnb, w, b, 1e-5, False, 0, check=False, lean=True)),
        ("lnl_forward via ctypes, buffers given (auto)", c_call),
        ("lnl_forward via ctypes, FUSED", lambda: c_call(p_fused)),
        ("lnl_forward via ctypes, UNFUSED", lambda: c_call(p_unfused)),
        ("lnl_backward via ctypes, buffers given (auto)", c_bwd),
        ("ctypes call of lnl_dtype_size (no work)", lambda: lib.lnl_dtype_size(0)),
        ("lnl_forward_workspace_size", lambda: lib.lnl_forward_workspace_size(ctypes.byref(p))),
        ("check_operands", lambda: ops.check_operands(x, lnw, lnb, w, b)),
        ("eager_fast_path_ok", lambda: ops.eager_fast_path_ok(x, lnw, lnb, w, b)),
        ("_problem (struct + stream)", lambda: ops._problem(x, N, 1e-5, 0)),
        ("torch.cuda.current_stream().cuda_stream",
         lambda: torch.cuda.current_stream(dev).cuda_stream),
        ("torch.empty small (cuda)", lambda: torch.empty((M, N), dtype=dt, device=dev)),
        ("torch.empty small, positional sizes", lambda: torch.empty(M, N, dtype=dt, device=dev)),
        ("x.new_empty small", lambda: x.new_empty((M, N))),
        ("torch.empty 2 x M float32", lambda: torch.empty((2, M), dtype=torch.float32, device=dev)),
        ("unbind(0) of a 2 x M tensor", stats2.unbind),
        ("torch.empty workspace bytes (cuda)",
         lambda: torch.empty(ws_bytes, dtype=torch.uint8, device=dev)),
        ("torch.cuda.current_device", torch.cuda.current_device),
        ("x.contiguous()", x.contiguous),
        ("x.data_ptr()", x.data_ptr),
    ]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        rows.append(("torch._C._cuda_getCurrentRawStream", lambda: raw(0)))
    print(f"host time per call, {args.dtype} M,K,N = {M},{K},{N}, workspace {ws_bytes} bytes")
    for label, fn in ([] if args.fb_only else rows):
        print(f"  {per_call_us(fn):8.2f} us  {label}")

    xg, lnwg, lnbg, wg, bg = (t.detach().clone().requires_grad_() for t in (x, lnw, lnb, w, b))
    leaves = [xg, lnwg, lnbg, wg, bg]
    for label, fwd in (("layernorm_linear", lambda: lnlinear.layernorm_linear(xg, lnwg, lnbg, wg, bg)),
                       ("eager", lambda: F.linear(F.layer_norm(xg, (K,), lnwg, lnbg), wg, bg))):
        print(f"  {per_call_us(fwd, 2000):8.2f} us  {label} forward recording autograd")
        yk = fwd()
        print(f"  {per_call_us(lambda: torch.autograd.grad(yk, leaves, dy, retain_graph=True), 2000):8.2f}"
              f" us  {label} backward alone (autograd.grad, graph kept)")

    def ours_fb():
        lnlinear.layernorm_linear(xg, lnwg, lnbg, wg, bg).backward(dy)

    def eager_fb():
        F.linear(F.layer_norm(xg, (K,), lnwg, lnbg), wg, bg).backward(dy)

    print(f"  {per_call_us(ours_fb, 2000):8.2f} us  layernorm_linear forward+backward")
    print(f"  {per_call_us(eager_fb, 2000):8.2f} us  eager forward+backward")

    # Where a training step's extra time goes: gradients returned (graph freed) or
    # accumulated into .grad, cleared or not, and the autograd engine's device thread
    # (multithreading off runs the backward on the calling thread).
    def training_rows(tag):
        for label, fwd in (("layernorm_linear", lambda: lnlinear.layernorm_linear(xg, lnwg, lnbg, wg, bg)),
                           ("eager", lambda: F.linear(F.layer_norm(xg, (K,), lnwg, lnbg), wg, bg))):
            def grad_only():
                torch.autograd.grad(fwd(), leaves, dy)

            def accumulate():
                fwd().backward(dy)

            def cleared():
                for t in leaves:
                    t.grad = None
                fwd().backward(dy)

            print(f"  {per_call_us(grad_only, 500, 5):8.2f} us  {label}{tag}: forward + autograd.grad")
            print(f"  {per_call_us(accumulate, 500, 5):8.2f} us  {label}{tag}: forward + .backward (accumulate)")
            print(f"  {per_call_us(cleared, 500, 5):8.2f} us  {label}{tag}: forward + .backward (.grad cleared)")
            with torch.autograd.set_multithreading_enabled(False):
                print(f"  {per_call_us(accumulate, 500, 5):8.2f} us  {label}{tag}: forward + .backward, "
                      f"engine on the calling thread")

    training_rows("")
    if args.gil:
        default_lib = _clib.lib
        for mode in ("hold", "release", "hold"):
            _clib.lib = gil_libs[mode]
            training_rows(f" [library calls {mode} the GIL]")
        _clib.lib = default_lib

    if args.profile:
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(5000):
            lnlinear.layernorm_linear(x, lnw, lnb, w, b)
        torch.cuda.synchronize()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(18)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(2000):
            ours_fb()
        torch.cuda.synchronize()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
