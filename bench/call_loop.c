/* lnl-call-loop: one CPU problem's forward or backward called in a loop and nothing else,
 * for a profiler to look at (the numbers in docs/cpu-performance-notes.md come from
 * `perf record build/bench/lnl-call-loop ...` then `perf report --sort symbol`).
 *
 *     lnl-call-loop M K N REPS fwd|bwd f32|bf16|f16
 *
 * FUSED, all five gradients, one workspace, inputs with row means near 3. Prints the mean
 * time per call, which includes no warm-up of the backward: use lnl-bench or
 * bench/cpu_ab.py for timings. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lnlinear.h"
#include "bench.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *filled(size_t n, lnl_dtype dt, unsigned seed, double mean) {
    double *v = malloc(n * sizeof(double));
    void *out = malloc(n * lnl_dtype_size(dt));
    if (!v || !out) exit(2);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = mean + (double)((int)(seed >> 9) % 2001 - 1000) / 1000.0;
    }
    bench_from_double(dt, v, out, n);
    free(v);
    return out;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: lnl-call-loop M K N REPS fwd|bwd f32|bf16|f16\n");
        return 2;
    }
    const int64_t M = atoll(argv[1]), K = atoll(argv[2]), N = atoll(argv[3]);
    const int reps = atoi(argv[4]), bwd = strcmp(argv[5], "bwd") == 0;
    const lnl_dtype dt = strcmp(argv[6], "bf16") == 0  ? LNL_DTYPE_BF16
                         : strcmp(argv[6], "f16") == 0 ? LNL_DTYPE_F16
                                                       : LNL_DTYPE_F32;
    lnl_problem p = {.rows = M, .in_features = K, .out_features = N, .eps = 1e-5, .dtype = dt,
                     .device = LNL_DEVICE_CPU, .strategy = LNL_STRATEGY_FUSED};
    const size_t es = lnl_dtype_size(dt);
    void *x = filled((size_t)(M * K), dt, 1, 3.0), *w = filled((size_t)(N * K), dt, 2, 0.0);
    void *dy = filled((size_t)(M * N), dt, 3, 0.0), *g = filled((size_t)K, dt, 4, 1.0);
    void *b = filled((size_t)K, dt, 5, 0.0), *lb = filled((size_t)N, dt, 6, 0.0);
    void *y = malloc((size_t)(M * N) * es), *dx = malloc((size_t)(M * K) * es);
    void *dw = malloc((size_t)(N * K) * es), *dg = malloc((size_t)K * es);
    void *dbt = malloc((size_t)K * es), *db = malloc((size_t)N * es);
    float *mean = malloc((size_t)M * sizeof(float)), *rstd = malloc((size_t)M * sizeof(float));
    size_t ws = lnl_forward_workspace_size(&p), wb = lnl_backward_workspace_size(&p);
    if (wb > ws) ws = wb;
    void *work = calloc(ws ? ws : 1, 1);
    if (!y || !dx || !dw || !dg || !dbt || !db || !mean || !rstd || !work) return 2;
    lnl_status st = lnl_forward(&p, x, g, b, w, lb, y, mean, rstd, NULL, work, ws);
    const double t0 = now_s();
    for (int r = 0; r < reps && st == LNL_STATUS_SUCCESS; r++)
        st = bwd ? lnl_backward(&p, dy, x, g, b, w, mean, rstd, NULL, dx, dg, dbt, dw, db, work, ws)
                 : lnl_forward(&p, x, g, b, w, lb, y, mean, rstd, NULL, work, ws);
    if (st != LNL_STATUS_SUCCESS) {
        fprintf(stderr, "lnl-call-loop: %s (%s)\n", lnl_status_string(st), lnl_last_error());
        return 1;
    }
    printf("%.3f ms/call\n", (now_s() - t0) / (reps > 0 ? reps : 1) * 1e3);
    free(x), free(w), free(dy), free(g), free(b), free(lb), free(y), free(dx), free(dw);
    free(dg), free(dbt), free(db), free(mean), free(rstd), free(work);
    return 0;
}
