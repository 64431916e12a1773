/* cuBLASLt matmuls for the unfused path and the backward's dxhat = dy @ W.
 * One cuBLASLt handle per device, created on first use under a mutex and kept for
 * the process: cuBLASLt handles carry no stream state, so concurrent callers on
 * different streams may share one. The heuristic's choice of algorithm is cached
 * (see "the heuristic's answers" below). Descriptors are still made per call: they
 * are cheap, and the bias pointer lives on the matmul descriptor, so a shared one
 * would need a lock held until the matmul is enqueued. */
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

/* ---- the heuristic's answers ----
 * cublasLtMatmulAlgoGetHeuristic costs tens of microseconds of host time, more than
 * a whole small problem's kernels, and gives the same answer for the same inputs.
 * lt_key holds everything it sees: the shapes, types, transposes, epilogue,
 * alignments and workspace bytes. Pointer values are not in it (the algorithm is
 * chosen from their alignments), but the bias's alignment is, in case an epilogue
 * kernel needs more than cuBLASLt checks. "No algorithm" is cached too, so an
 * epilogue that cuBLASLt cannot serve falls back at once on later calls. */
struct lt_key {
    int device, dtype, epi;
    bool d_f32, ta, tb;
    int64_t m, n, k, lda, ldb, ldd;
    uint32_t align[5]; /* A, B, C, D, bias */
    uint64_t ws_bytes;
};
static bool same_key(const lt_key &x, const lt_key &y) {
    return x.device == y.device && x.dtype == y.dtype && x.epi == y.epi && x.d_f32 == y.d_f32 &&
           x.ta == y.ta && x.tb == y.tb && x.m == y.m && x.n == y.n && x.k == y.k &&
           x.lda == y.lda && x.ldb == y.ldb && x.ldd == y.ldd &&
           std::equal(x.align, x.align + 5, y.align) && x.ws_bytes == y.ws_bytes;
}

struct lt_choice {
    bool found; /* false: no algorithm serves this matmul */
    cublasLtMatmulAlgo_t algo;
};

/* A fixed table with least-recently-used replacement: a model has a handful of
 * shapes, and a linear scan of 64 entries is far cheaper than one heuristic call. */
constexpr int LT_CACHE_ENTRIES = 64;
struct lt_cache_entry {
    lt_key key;
    lt_choice choice;
    uint64_t last_use; /* 0: empty */
};
static std::mutex g_cache_mutex;
static lt_cache_entry g_cache[LT_CACHE_ENTRIES];
static uint64_t g_cache_clock;

static bool cache_get(const lt_key &key, lt_choice *c) {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    for (lt_cache_entry &e : g_cache)
        if (e.last_use && same_key(e.key, key)) {
            e.last_use = ++g_cache_clock;
            *c = e.choice;
            return true;
        }
    return false;
}

/* Replaces key's entry if present (two callers may both have missed), else the
 * least recently used (an empty one first). */
static void cache_put(const lt_key &key, const lt_choice &c) {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    lt_cache_entry *slot = nullptr, *oldest = &g_cache[0];
    for (lt_cache_entry &e : g_cache) {
        if (e.last_use && same_key(e.key, key)) {
            slot = &e;
            break;
        }
        if (e.last_use < oldest->last_use) oldest = &e;
    }
    if (!slot) slot = oldest;
    slot->key = key;
    slot->choice = c;
    slot->last_use = ++g_cache_clock;
}

/* Asks cuBLASLt's heuristic for its best algorithm. SUCCESS with c->found false: no
 * algorithm serves the matmul (an answer, cached by the caller). Otherwise the query
 * itself failed: UNSUPPORTED for an epilogue (the caller does it itself), else
 * DEVICE_ERROR. */
static lnl_status lt_heuristic(cublasLtHandle_t h, lt_descs *ds, const lt_key &key, lt_choice *c) {
    LT_TRY(cublasLtMatmulPreferenceCreate(&ds->pref));
    const uint64_t wsb = key.ws_bytes;
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(ds->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &wsb, sizeof wsb));
    const cublasLtMatmulPreferenceAttributes_t which[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; i++)
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(ds->pref, which[i], &key.align[i],
                                                    sizeof key.align[i]));
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(h, ds->op, ds->a, ds->b, ds->d, ds->d,
                                                             ds->pref, 1, &res, &found);
    if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED) {
        if (key.epi != LT_NONE) return LNL_STATUS_UNSUPPORTED;
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR,
                             "cuBLASLt: heuristic query for %lldx%lldx%lld failed (status %d)",
                             (long long)key.m, (long long)key.n, (long long)key.k, (int)st);
    }
    c->found = st == CUBLAS_STATUS_SUCCESS && found > 0;
    if (c->found) c->algo = res.algo;
    return LNL_STATUS_SUCCESS;
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
        cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
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
    const lt_key key = {device, (int)dt, (int)epi, d_f32, transA, transB, m, n, k, lda, ldb, ldd,
                        {alignment_of(A), alignment_of(B), alignment_of(D), alignment_of(D),
                         epi != LT_NONE ? alignment_of(bias) : 0u},
                        (uint64_t)lt_ws_bytes};
    lt_choice c{};
    if (!cache_get(key, &c)) {
        const lnl_status hs = lt_heuristic(h, &ds, key, &c);
        if (hs != LNL_STATUS_SUCCESS) return hs;
        cache_put(key, c);
    }
    if (!c.found) {
        if (epi != LT_NONE) return LNL_STATUS_UNSUPPORTED; /* caller does the epilogue itself */
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "cuBLASLt: no algorithm for %lldx%lldx%lld",
                             (long long)m, (long long)n, (long long)k);
    }
    const float alpha = 1.f, beta = 0.f;
    const cublasStatus_t st = cublasLtMatmul(h, ds.op, &alpha, A, ds.a, B, ds.b, &beta, D, ds.d, D,
                                             ds.d, &c.algo, lt_ws, lt_ws_bytes, s);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED && epi != LT_NONE) {
        cache_put(key, lt_choice{false, {}}); /* later calls fall back without trying */
        return LNL_STATUS_UNSUPPORTED;
    }
    if (st != CUBLAS_STATUS_SUCCESS)
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR,
                             "cuBLASLt: cublasLtMatmul %lldx%lldx%lld failed (status %d)",
                             (long long)m, (long long)n, (long long)k, (int)st);
    return LNL_STATUS_SUCCESS;
}

} // namespace lnl
