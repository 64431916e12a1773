/* Plain float32 GEMMs through cuBLAS (not cuBLASLt), used for the float32 backward's
 * dW = dy^T @ LN(x) and dxhat = dy @ W. Why: at M,K,N = 4096,768,768 on the H200,
 * cuBLASLt's heuristic picks a 64x64 SIMT kernel for dW (136 us), where PyTorch's
 * torch.mm (cublasSgemm, default math mode) runs a 256x128 split-K one (100 us), with
 * or without the BGRADB epilogue (docs/results/cuda/2026-11-30-profile-*.log). cuBLAS
 * picks that kernel only when given a scratch as large as its own default pool
 * (BLAS_WORKSPACE, 32 MiB); with 8 MiB it too chose the 64x64 one. Default math mode
 * and CUBLAS_COMPUTE_32F are true fp32 (no tf32), as cuBLASLt's path was.
 *
 * One handle per device, created on first use and kept for the process. Unlike a
 * cuBLASLt handle, a cuBLAS handle carries a stream and a workspace, so the device's
 * mutex is held from cublasSetStream to the GEMM's enqueue: concurrent callers never
 * see each other's stream, and each call gives cuBLAS the caller's own stream-ordered
 * scratch, so no two streams ever share cuBLAS's internal workspace. */
#include <climits>
#include <mutex>

#include <cublas_v2.h>

#include "cuda_common.cuh"

namespace lnl {

constexpr int BLAS_DEVICES = 64;
struct blas_slot {
    std::mutex mutex; /* guards handle and its stream/workspace settings */
    cublasHandle_t handle = nullptr;
};
static blas_slot g_blas[BLAS_DEVICES];

#define BLAS_TRY(call)                                                                         \
    do {                                                                                       \
        cublasStatus_t st_ = (call);                                                           \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cuBLAS: %s failed: %s", #call,      \
                                 cublasGetStatusString(st_));                                  \
    } while (0)

/* Creates the slot's handle if it has none; the caller holds the slot's mutex. */
static lnl_status blas_handle_locked(blas_slot *b, int device) {
    if (b->handle) return LNL_STATUS_SUCCESS;
    cublasHandle_t h = nullptr;
    cublasStatus_t st = cublasCreate(&h);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        if (h) cublasDestroy(h);
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cuBLAS: handle creation on device %d failed: %s",
                             device, cublasGetStatusString(st));
    }
    b->handle = h;
    return LNL_STATUS_SUCCESS;
}

lnl_status blas_sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float *D, int64_t ldd, void *ws,
                      size_t ws_bytes, cudaStream_t s) {
    /* cublasSgemm takes int sizes; larger problems keep to cuBLASLt. */
    const int64_t dims[6] = {m, n, k, lda, ldb, ldd};
    for (int64_t v : dims)
        if (v > INT_MAX) return LNL_STATUS_UNSUPPORTED;
    int device = 0;
    const cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cuBLAS: cudaGetDevice failed: %s",
                             cudaGetErrorString(e));
    }
    if (device < 0 || device >= BLAS_DEVICES) return LNL_STATUS_UNSUPPORTED;
    /* cublasSetWorkspace wants 256-byte alignment; a caller's workspace may start anywhere. */
    const size_t skip = align_up((uintptr_t)ws, 256) - (uintptr_t)ws;
    if (ws_bytes <= skip) return LNL_STATUS_UNSUPPORTED;
    blas_slot *b = &g_blas[device];
    std::lock_guard<std::mutex> lock(b->mutex);
    const lnl_status hs = blas_handle_locked(b, device);
    if (hs != LNL_STATUS_SUCCESS) return hs;
    /* cublasSetStream also resets the workspace to cuBLAS's own pool: ours goes after. */
    BLAS_TRY(cublasSetStream(b->handle, s));
    BLAS_TRY(cublasSetWorkspace(b->handle, (char *)ws + skip, ws_bytes - skip));
    const float alpha = 1.f, beta = 0.f;
    const cublasOperation_t ta = transA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    BLAS_TRY(cublasSgemm(b->handle, ta, tb, (int)m, (int)n, (int)k, &alpha, A, (int)lda, B, (int)ldb,
                         &beta, D, (int)ldd));
    return LNL_STATUS_SUCCESS;
}

} // namespace lnl
