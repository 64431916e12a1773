/* CPU side of lnl-bench: host buffers, wall-clock medians, and the OpenBLAS GEMM
 * baseline (only when CMake found OpenBLAS; the library itself never needs it). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

void bench_die(const char *file, int line, const char *what, lnl_status s) {
    fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, what, lnl_status_string(s),
            lnl_last_error());
    exit(2);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Warm up, pick a repetition count that fits the budget, time each call, take the median. */
double bench_median_ms(lnl_device dev, bench_fn fn, void *ctx, double budget_ms) {
    if (dev == LNL_DEVICE_CUDA) {
        double one = bench_cuda_time_ms(fn, ctx, 3);
        int reps = one > 0 ? (int)(budget_ms / one) : 50;
        reps = reps < 5 ? 5 : reps > 200 ? 200 : reps;
        return bench_cuda_time_ms(fn, ctx, reps);
    }
    double t0 = now_ms();
    fn(ctx);
    double one = now_ms() - t0;
    int reps = one > 0 ? (int)(budget_ms / one) : 1000;
    reps = reps < 5 ? 5 : reps > 2000 ? 2000 : reps;
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!t) return -1;
    for (int i = 0; i < 2 && one < 50; i++) fn(ctx);
    for (int i = 0; i < reps; i++) {
        double a = now_ms();
        fn(ctx);
        t[i] = now_ms() - a;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    double med = t[reps / 2];
    free(t);
    return med;
}

void *bench_alloc(lnl_device dev, size_t bytes);
void bench_free(lnl_device dev, void *ptr);

#ifdef LNL_BENCH_OPENBLAS
/* Declared here rather than through cblas.h so the build needs no header package. */
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double *, int, const double *, int,
                 double, double *, int);
void openblas_set_num_threads(int);
char *openblas_get_corename(void);

typedef struct gemm_ctx {
    lnl_dtype dt;
    int M, N, K;
    void *a, *b, *c;
} gemm_ctx;

static void run_gemm(void *p) {
    gemm_ctx *g = p;
    if (g->dt == LNL_DTYPE_F64)
        cblas_dgemm(ROW_MAJOR, NO_TRANS, TRANS, g->M, g->N, g->K, 1.0, g->a, g->K, g->b, g->K, 0.0,
                    g->c, g->N);
    else
        cblas_sgemm(ROW_MAJOR, NO_TRANS, TRANS, g->M, g->N, g->K, 1.0f, g->a, g->K, g->b, g->K,
                    0.0f, g->c, g->N);
}

double bench_cpu_gemm_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K, int threads) {
    if (dt != LNL_DTYPE_F32 && dt != LNL_DTYPE_F64) return -1;
    size_t es = dt == LNL_DTYPE_F64 ? 8 : 4;
    gemm_ctx g = {dt, (int)M, (int)N, (int)K, malloc(es * (size_t)(M * K)),
                  malloc(es * (size_t)(N * K)), malloc(es * (size_t)(M * N))};
    double ms = -1;
    if (g.a && g.b && g.c) {
        /* Random-ish, non-zero data: some CPUs are faster on zeros. */
        for (int64_t i = 0; i < M * K; i++) {
            if (dt == LNL_DTYPE_F64) ((double *)g.a)[i] = (double)(i % 13) * 0.1 - 0.6;
            else ((float *)g.a)[i] = (float)(i % 13) * 0.1f - 0.6f;
        }
        for (int64_t i = 0; i < N * K; i++) {
            if (dt == LNL_DTYPE_F64) ((double *)g.b)[i] = (double)(i % 7) * 0.1 - 0.3;
            else ((float *)g.b)[i] = (float)(i % 7) * 0.1f - 0.3f;
        }
        openblas_set_num_threads(threads);
        ms = bench_median_ms(LNL_DEVICE_CPU, run_gemm, &g, 1500);
    }
    free(g.a);
    free(g.b);
    free(g.c);
    return ms;
}
const char *bench_cpu_gemm_name(void) {
    static char name[64];
    const char *core = openblas_get_corename();
    snprintf(name, sizeof name, "OpenBLAS gemm (%s kernels)", core ? core : "?");
    return name;
}

/* OpenBLAS picks its kernels when it loads, from the CPU's model, and falls back to its
 * oldest x86-64 ones (Prescott: SSE3) on a model it does not know. It did on this
 * project's machine of 2026-12-01, a virtual "Intel(R) Xeon(R) Processor" with AVX-512:
 * 37 GF/s at 2048,768,768 against 194 with its SkylakeX kernels, a baseline 5x too slow
 * that made lnlinear look 3-5x faster than it is. In that case only (the fallback, and no
 * OPENBLAS_CORETYPE given) the core is named from the CPU's own flags and lnl-bench runs
 * itself again, since OpenBLAS reads the variable only when it loads. */
void bench_cpu_gemm_fix_core(char **argv) {
#if defined(__linux__) && defined(__x86_64__)
    const char *core = openblas_get_corename();
    if (getenv("OPENBLAS_CORETYPE") || !core || strcmp(core, "Prescott") != 0) return;
    __builtin_cpu_init();
    const char *want = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        want = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want = "Haswell";
    if (!want) return;
    fprintf(stderr, "lnl-bench: OpenBLAS took its Prescott kernels on this CPU; running again "
                    "with OPENBLAS_CORETYPE=%s, which its flags support\n", want);
    fflush(NULL);
    if (setenv("OPENBLAS_CORETYPE", want, 1) == 0) execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* exec failed: go on with the fallback, named in the header */
#else
    (void)argv;
#endif
}
#else
void bench_cpu_gemm_fix_core(char **argv) { (void)argv; }
double bench_cpu_gemm_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K, int threads) {
    (void)dt, (void)M, (void)N, (void)K, (void)threads;
    return -1;
}
const char *bench_cpu_gemm_name(void) { return "none (OpenBLAS not found at build time)"; }
#endif
