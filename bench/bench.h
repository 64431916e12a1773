/* Shared pieces of lnl-bench: timing, buffers on either device, dtype conversion,
 * and the GEMM baselines each backend is measured against. */
#ifndef LNL_BENCH_H
#define LNL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "lnlinear.h"

/* Aborts with file:line when a library call fails: the bench is a program, not the library. */
#define BENCH_CHECK(call)                                                                  \
    do {                                                                                   \
        lnl_status s_ = (call);                                                            \
        if (s_ != LNL_STATUS_SUCCESS) bench_die(__FILE__, __LINE__, #call, s_);            \
    } while (0)
void bench_die(const char *file, int line, const char *what, lnl_status s);

/* dtype <-> double for host buffers (bf16/f16 round to nearest even). */
void bench_from_double(lnl_dtype dt, const double *src, void *dst, size_t n);
void bench_to_double(lnl_dtype dt, const void *src, double *dst, size_t n);

/* n normal values of the given mean and scale, rounded to dt, as double (random_fill.c).
 * The same (n, stream) give the same values whatever the host's core count. */
double *bench_random_fill(size_t n, double mean, double scale, lnl_dtype dt, uint64_t stream);
/* The same on a given number of threads (at most 64), for the test that the values do not
 * depend on it (tests/c/test_random_fill.c). */
double *bench_random_fill_threads(size_t n, double mean, double scale, lnl_dtype dt,
                                  uint64_t stream, int threads);

/* Device memory: plain malloc on the CPU, cudaMalloc on CUDA (bench_cuda.c). */
void *bench_alloc(lnl_device dev, size_t bytes);
void bench_free(lnl_device dev, void *ptr);
void bench_upload(lnl_device dev, void *dst, const void *src, size_t bytes);
void bench_download(lnl_device dev, void *dst, const void *src, size_t bytes);

/* Median milliseconds of fn(ctx) over repetitions after warm-up (CUDA events on CUDA). */
typedef void (*bench_fn)(void *ctx);
double bench_median_ms(lnl_device dev, bench_fn fn, void *ctx, double budget_ms);

/* The GEMM baseline of each backend, C[M,N] = A[M,K] B^T, in the problem's dtype;
 * negative when none was built in (no OpenBLAS / no CUDA). */
double bench_cpu_gemm_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K, int threads);
const char *bench_cpu_gemm_name(void);
/* Runs lnl-bench again (argv as given) with OPENBLAS_CORETYPE named from the CPU's flags
 * when OpenBLAS fell back to its generic kernels (bench_cpu.c says why); else returns. */
void bench_cpu_gemm_fix_core(char **argv);
int bench_cuda_available(void);
/* The CUDA baseline, cuBLAS on the problem's own device data: the forward's GEMM
 * y = ln_out W^T on the already-normalized input, and the backward's dxhat = dy W and
 * dW = dy^T ln_out, each a median in ms; y, dxhat and dw are scratch outputs. Also the
 * forward GEMM on constant operands (the baseline before 2026-12-01's session 5), for
 * the record. Non-zero when there is no CUDA. */
typedef struct bench_cuda_gemms {
    double fwd, dgrad, wgrad, fwd_constant;
} bench_cuda_gemms;
int bench_cuda_gemms_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K, const void *ln_out,
                        const void *w, const void *dy, void *y, void *dxhat, void *dw,
                        bench_cuda_gemms *out);
double bench_cuda_time_ms(bench_fn fn, void *ctx, int reps);

#endif
