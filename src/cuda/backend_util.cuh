/* What each file that orders a call's kernels needs (cuda_backend.cu, mixed_backend.cu):
 * the library-owned workspace and the mapping of CUDA errors to a status and message. */
#ifndef LNL_CUDA_BACKEND_UTIL_CUH
#define LNL_CUDA_BACKEND_UTIL_CUH

#include "cuda_common.cuh"

namespace lnl {

/* Library-owned workspace, allocated stream-ordered and freed after the last use. */
struct scoped_ws {
    void *ptr = nullptr;
    cudaStream_t s = nullptr;
    ~scoped_ws() {
        if (ptr) cudaFreeAsync(ptr, s);
    }
};
inline lnl_status acquire_ws(void *given, size_t bytes, cudaStream_t s, scoped_ws *own,
                             void **base) {
    if (given) {
        *base = given;
        return LNL_STATUS_SUCCESS;
    }
    cudaError_t e = cudaMallocAsync(&own->ptr, bytes, s);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        own->ptr = nullptr;
        return lnl_set_error(LNL_STATUS_OUT_OF_MEMORY,
                             "CUDA backend: cudaMallocAsync of %zu workspace bytes failed: %s",
                             bytes, cudaGetErrorString(e));
    }
    own->s = s;
    *base = own->ptr;
    return LNL_STATUS_SUCCESS;
}

#define CU_TRY(what, call)                                                                     \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "CUDA backend: %s failed: %s", what, \
                                 cudaGetErrorString(e_));                                      \
    } while (0)
#define ST_TRY(call)                                                                           \
    do {                                                                                       \
        lnl_status s_ = (call);                                                                \
        if (s_ != LNL_STATUS_SUCCESS) return s_;                                               \
    } while (0)

/* UNFUSED's GEMM (cuda_backend.cu): y = ln_out @ W^T + bias (bias may be null), through
 * cuBLASLt, its bias epilogue where it serves; lt: LT_WORKSPACE bytes of scratch. */
lnl_status linear_of_ln_out(lnl_dtype dt, const void *W, const void *ln_out, const void *bias, void *y,
                            int64_t M, int64_t K, int64_t N, void *lt, cudaStream_t s);

/* ln_float32 (mixed_backend.cu): the whole call, whatever the strategy; M > 0. */
lnl_status mixed_forward(const lnl_fwd_args *a, const device_info &d);
lnl_status mixed_backward(const lnl_bwd_args *a, const device_info &d);
size_t mixed_forward_workspace_size(const lnl_problem *p);
size_t mixed_backward_workspace_size(const lnl_problem *p, const device_info &d);

} // namespace lnl

#endif
