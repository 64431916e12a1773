"""The CUDA-event timing the one-off scripts in bench/cuda share (time_cuda.py records all
its events back to back instead)."""
import statistics

import torch


def median_ms(fn, reps=50, warmup=5):
    """Median of `reps` calls of fn, each between two CUDA events and waited for, after
    `warmup` untimed calls; in ms."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)
