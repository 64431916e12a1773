/* CUDA side of lnl-bench: device buffers, CUDA-event medians, and the cuBLAS GEMM
 * alone (true fp32 for F32: the default math mode, no tf32) as the baseline. */
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

typedef struct gemm_ctx {
    cublasHandle_t h;
    cudaDataType_t type;
    cublasComputeType_t compute;
    int M, N, K;
    void *a, *b, *c;
} gemm_ctx;

/* Row-major C[M,N] = A[M,K] B[N,K]^T is column-major C^T = B^T(op T) A: cuBLAS's TN. */
static void run_gemm(void *p) {
    gemm_ctx *g = p;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->N, g->M, g->K, &one, g->b,
                                    g->type, g->K, g->a, g->type, g->K, &zero, g->c, g->type, g->N,
                                    g->compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasGemmEx failed: %d\n", (int)s);
        exit(2);
    }
}

double bench_cuda_gemm_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K) {
    gemm_ctx g;
    size_t es;
    switch (dt) {
    case LNL_DTYPE_F32: g.type = CUDA_R_32F, g.compute = CUBLAS_COMPUTE_32F, es = 4; break;
    case LNL_DTYPE_BF16: g.type = CUDA_R_16BF, g.compute = CUBLAS_COMPUTE_32F, es = 2; break;
    case LNL_DTYPE_F16: g.type = CUDA_R_16F, g.compute = CUBLAS_COMPUTE_32F, es = 2; break;
    default: return -1;
    }
    if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS) return -1;
    g.M = (int)M, g.N = (int)N, g.K = (int)K;
    g.a = bench_alloc(LNL_DEVICE_CUDA, es * (size_t)(M * K));
    g.b = bench_alloc(LNL_DEVICE_CUDA, es * (size_t)(N * K));
    g.c = bench_alloc(LNL_DEVICE_CUDA, es * (size_t)(M * N));
    /* Small non-zero values (0x3c00 is 1.0 in f16, ~0.0078 in bf16 high bits): never time zeros. */
    CUDA_OK(cudaMemset(g.a, 0x3c, es * (size_t)(M * K)));
    CUDA_OK(cudaMemset(g.b, 0x3c, es * (size_t)(N * K)));
    double ms = bench_median_ms(LNL_DEVICE_CUDA, run_gemm, &g, 300);
    bench_free(LNL_DEVICE_CUDA, g.a);
    bench_free(LNL_DEVICE_CUDA, g.b);
    bench_free(LNL_DEVICE_CUDA, g.c);
    cublasDestroy(g.h);
    return ms;
}
