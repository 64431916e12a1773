/* CUDA side of lnl-bench: device buffers, CUDA-event medians, and the cuBLAS GEMMs
 * (true fp32 for F32: the default math mode, no tf32) on the problem's own data as the
 * baseline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench.h"

#define CUDA_OK(call)                                                                      \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                    cudaGetErrorString(e_));                                               \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

int bench_cuda_available(void) {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

void *bench_alloc(lnl_device dev, size_t bytes) {
    if (dev == LNL_DEVICE_CPU) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    CUDA_OK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}
void bench_free(lnl_device dev, void *ptr) {
    if (dev == LNL_DEVICE_CPU) free(ptr);
    else if (ptr) CUDA_OK(cudaFree(ptr));
}
void bench_upload(lnl_device dev, void *dst, const void *src, size_t bytes) {
    if (dev == LNL_DEVICE_CPU) memcpy(dst, src, bytes);
    else CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
void bench_download(lnl_device dev, void *dst, const void *src, size_t bytes) {
    if (dev == LNL_DEVICE_CPU) memcpy(dst, src, bytes);
    else CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double bench_cuda_time_ms(bench_fn fn, void *ctx, int reps) {
    cudaEvent_t ev[2];
    CUDA_OK(cudaEventCreate(&ev[0]));
    CUDA_OK(cudaEventCreate(&ev[1]));
    for (int i = 0; i < 3; i++) fn(ctx); /* warm-up */
    CUDA_OK(cudaDeviceSynchronize());
    float *t = malloc(sizeof(float) * (size_t)reps);
    for (int i = 0; i < reps; i++) {
        CUDA_OK(cudaEventRecord(ev[0], 0));
        fn(ctx);
        CUDA_OK(cudaEventRecord(ev[1], 0));
        CUDA_OK(cudaEventSynchronize(ev[1]));
        CUDA_OK(cudaEventElapsedTime(&t[i], ev[0], ev[1]));
    }
    qsort(t, (size_t)reps, sizeof(float), cmp_float);
    double med = t[reps / 2];
    free(t);
    CUDA_OK(cudaEventDestroy(ev[0]));
    CUDA_OK(cudaEventDestroy(ev[1]));
    return med;
}

/* One cublasGemmEx, column-major D[m,n] = op(A)[m,k] op(B)[k,n], in the problem's dtype
 * with float32 accumulation (true fp32 for F32: the default math mode, no tf32). */
typedef struct gemm_ctx {
    cublasHandle_t h;
    cudaDataType_t type;
    cublasComputeType_t compute;
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldd;
    const void *a, *b;
    void *d;
} gemm_ctx;

static void run_gemm(void *p) {
    gemm_ctx *g = p;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasGemmEx(g->h, g->ta, g->tb, g->m, g->n, g->k, &one, g->a, g->type,
                                    g->lda, g->b, g->type, g->ldb, &zero, g->d, g->type, g->ldd,
                                    g->compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasGemmEx failed: %d\n", (int)s);
        exit(2);
    }
}

/* g with the operation and operands set, timed as a median over ~300 ms. */
static double time_gemm(gemm_ctx g, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                        int k, const void *a, int lda, const void *b, int ldb, void *d, int ldd) {
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k;
    g.a = a, g.lda = lda, g.b = b, g.ldb = ldb, g.d = d, g.ldd = ldd;
    return bench_median_ms(LNL_DEVICE_CUDA, run_gemm, &g, 300);
}

int bench_cuda_gemms_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K, const void *ln_out,
                        const void *w, const void *dy, void *y, void *dxhat, void *dw,
                        bench_cuda_gemms *out) {
    gemm_ctx g;
    memset(&g, 0, sizeof g);
    size_t es;
    switch (dt) {
    case LNL_DTYPE_F32: g.type = CUDA_R_32F, g.compute = CUBLAS_COMPUTE_32F, es = 4; break;
    case LNL_DTYPE_BF16: g.type = CUDA_R_16BF, g.compute = CUBLAS_COMPUTE_32F, es = 2; break;
    case LNL_DTYPE_F16: g.type = CUDA_R_16F, g.compute = CUBLAS_COMPUTE_32F, es = 2; break;
    default: return -1;
    }
    if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS) return -1;
    const int m = (int)M, n = (int)N, k = (int)K;
    const cublasOperation_t T = CUBLAS_OP_T, NO = CUBLAS_OP_N;
    /* Row-major y[M,N] = ln_out[M,K] W[N,K]^T is column-major y^T = (W^T)^T-op ln_out^T: TN. */
    out->fwd = time_gemm(g, T, NO, n, m, k, w, k, ln_out, k, y, n);
    /* dxhat[M,K] = dy[M,N] W[N,K]: column-major dxhat^T[K,M] = W^T[K,N] dy^T[N,M]: NN. */
    out->dgrad = time_gemm(g, NO, NO, k, m, n, w, k, dy, n, dxhat, k);
    /* dW[N,K] = dy^T[N,M] ln_out[M,K]: column-major dW^T[K,N] = ln_out^T[K,M] (dy^T[N,M])^T: NT. */
    out->wgrad = time_gemm(g, NO, T, k, n, m, ln_out, k, dy, n, dw, k);
    /* The forward GEMM again on constant operands (every element the same small value), as
     * this baseline was timed up to 2026-12-01: the same instructions with fewer bits
     * toggling in the tensor cores, kept to show what the data alone changes. */
    void *a = bench_alloc(LNL_DEVICE_CUDA, es * (size_t)(M * K));
    void *b = bench_alloc(LNL_DEVICE_CUDA, es * (size_t)(N * K));
    CUDA_OK(cudaMemset(a, 0x3c, es * (size_t)(M * K)));
    CUDA_OK(cudaMemset(b, 0x3c, es * (size_t)(N * K)));
    out->fwd_constant = time_gemm(g, T, NO, n, m, k, b, k, a, k, y, n);
    bench_free(LNL_DEVICE_CUDA, a);
    bench_free(LNL_DEVICE_CUDA, b);
    cublasDestroy(g.h);
    return 0;
}
