"""The CUDA-event timing the one-off scripts in bench/cuda share (time_cuda.py records all
its events back to back instead)."""
import statistics

import torch


def median_ms(fn, reps=50, warmup=5, batch=1):
    """Median of `reps` timings of fn, each of `batch` calls back to back between two CUDA
    events and waited for (per call: divided by batch), after `warmup` untimed calls; in ms."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / batch)
    return statistics.median(times)
