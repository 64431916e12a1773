/* cuBLASLt matmuls for the unfused path and the backward's dxhat = dy @ W.
 * One cuBLASLt handle per device, created on first use under a mutex and kept for
 * the process: cuBLASLt handles carry no stream state, so concurrent callers on
 * different streams may share one. */
#include <mutex>

#include "cuda_common.cuh"

namespace lnl {

static std::mutex g_lt_mutex;
static cublasLtHandle_t g_lt_handles[64];

static cublasLtHandle_t lt_handle(int device) {
    if (device < 0 || device >= 64) return nullptr;
    std::lock_guard<std::mutex> lock(g_lt_mutex);
    if (!g_lt_handles[device] && cublasLtCreate(&g_lt_handles[device]) != CUBLAS_STATUS_SUCCESS)
        g_lt_handles[device] = nullptr;
    return g_lt_handles[device];
}

/* Destroys the descriptors whatever path leaves lt_matmul. */
struct lt_descs {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~lt_descs() {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (d) cublasLtMatrixLayoutDestroy(d);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (op) cublasLtMatmulDescDestroy(op);
    }
};

#define LT_TRY(call)                                                                           \
    do {                                                                                       \
        cublasStatus_t st_ = (call);                                                           \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cuBLASLt: %s failed (status %d)",   \
                                 #call, (int)st_);                                             \
    } while (0)

/* Largest power of two (<= 256) dividing the address: cuBLASLt must be told, or it
 * may pick a kernel that needs 16-byte alignment and fail on a misaligned view. */
static uint32_t alignment_of(const void *p) {
    uint32_t a = 256;
    while (a > 1 && ((uintptr_t)p % a) != 0) a >>= 1;
    return a;
}

lnl_status lt_matmul(lnl_dtype dt, bool d_f32, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                     const void *A, int64_t lda, const void *B, int64_t ldb, void *D, int64_t ldd,
                     lt_epilogue epi, void *bias, void *lt_ws, size_t lt_ws_bytes,
                     cudaStream_t s) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess)
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cudaGetDevice failed");
    cublasLtHandle_t h = lt_handle(device);
    if (!h) return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cublasLtCreate failed on device %d", device);
    const cudaDataType_t ty = cuda_type(dt);
    /* CUBLAS_COMPUTE_32F without a _FAST_ variant is true fp32 for float inputs
     * (no tf32), and fp32 accumulation for bf16/f16 inputs. */
    lt_descs ds;
    LT_TRY(cublasLtMatmulDescCreate(&ds.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = transA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_TRY(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_TRY(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (epi != LT_NONE) {
        cublasLtEpilogue_t e = epi == LT_BIAS ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_BGRADB;
        LT_TRY(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
        LT_TRY(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                              sizeof bias));
        int32_t bty = (int32_t)ty;
        LT_TRY(cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bty,
                                              sizeof bty));
    }
    LT_TRY(cublasLtMatrixLayoutCreate(&ds.a, ty, transA ? k : m, transA ? m : k, lda));
    LT_TRY(cublasLtMatrixLayoutCreate(&ds.b, ty, transB ? n : k, transB ? k : n, ldb));
    LT_TRY(cublasLtMatrixLayoutCreate(&ds.d, d_f32 ? CUDA_R_32F : ty, m, n, ldd));
    LT_TRY(cublasLtMatmulPreferenceCreate(&ds.pref));
    uint64_t wsb = lt_ws_bytes;
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(ds.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &wsb, sizeof wsb));
    const uint32_t al[4] = {alignment_of(A), alignment_of(B), alignment_of(D), alignment_of(D)};
    const cublasLtMatmulPreferenceAttributes_t which[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; i++)
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(ds.pref, which[i], &al[i], sizeof al[i]));
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, ds.op, ds.a, ds.b, ds.d, ds.d, ds.pref, 1,
                                                       &res, &found);
    if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
        if (epi != LT_NONE) return LNL_STATUS_UNSUPPORTED; /* caller does the epilogue itself */
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR,
                             "cuBLASLt: no algorithm for %lldx%lldx%lld (status %d)", (long long)m,
                             (long long)n, (long long)k, (int)st);
    }
    const float alpha = 1.f, beta = 0.f;
    st = cublasLtMatmul(h, ds.op, &alpha, A, ds.a, B, ds.b, &beta, D, ds.d, D, ds.d, &res.algo,
                        lt_ws, lt_ws_bytes, s);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED && epi != LT_NONE) return LNL_STATUS_UNSUPPORTED;
    if (st != CUBLAS_STATUS_SUCCESS)
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR,
                             "cuBLASLt: cublasLtMatmul %lldx%lldx%lld failed (status %d)",
                             (long long)m, (long long)n, (long long)k, (int)st);
    return LNL_STATUS_SUCCESS;
}

} // namespace lnl
