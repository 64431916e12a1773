/* The one-launch forward and backward of tiny problems: one block each, whose bodies are
 * tiny_forward.cuh and tiny_backward.cuh. */
#include "cuda_common.cuh"
#include "tiny_backward.cuh"
#include "tiny_forward.cuh"

namespace lnl {
namespace {

struct block_sync {
    __device__ void operator()() const { __syncthreads(); }
};

template <typename T>
__global__ void __launch_bounds__(TINY_THREADS) tiny_forward_kernel(tiny_fwd_args<T> a) {
    extern __shared__ float sm[];
    tiny_forward_body(a, sm, (int)threadIdx.x, (int)blockDim.x, block_sync{});
}

template <typename T>
__global__ void __launch_bounds__(TINY_THREADS) tiny_backward_kernel(tiny_bwd_args<T> a) {
    extern __shared__ float sm[];
    tiny_backward_body(a, sm, (int)threadIdx.x, (int)blockDim.x, block_sync{});
}

} // namespace

/* Every dtype: for bf16/f16 this one launch also beat the mma.sync one-launch kernel (rows
 * of at most 16) and the statistics pass + mma.sync GEMM (longer rows), H200, FUSED
 * forward ms, three same-run rounds (docs/results/cuda/2026-12-02-session15/call1):
 * 16,8,16 0.0072-0.0082 vs 0.0105-0.0108; 16,32,40 0.0105-0.0115 vs 0.0140-0.0174;
 * 1,3,257 0.0078-0.0093 vs 0.0128-0.0154. It rounds only y to T (LN(x) stays float). */
bool tiny_forward_serves(int64_t M, int64_t K, int64_t N) { return tiny_forward_fits(M, K, N); }

cudaError_t launch_tiny_forward(lnl_dtype dt, const void *x, const void *gamma, const void *beta,
                                const void *W, const void *bias, void *y, float *mean,
                                float *rstd, int64_t M, int64_t K, int64_t N, float eps,
                                cudaStream_t s) {
    const size_t smem = (size_t)tiny_forward_floats(M, K, N) * sizeof(float);
    LNL_DISPATCH(dt, T, {
        const tiny_fwd_args<T> a{(const T *)x, (const T *)gamma, (const T *)beta,
                                 (const T *)W, (const T *)bias,  (T *)y,
                                 mean,         rstd,             (int)M,
                                 (int)K,       (int)N,           eps};
        tiny_forward_kernel<T><<<1, TINY_THREADS, smem, s>>>(a);
    });
    return cudaGetLastError();
}

bool tiny_backward_serves(int64_t M, int64_t K, int64_t N) { return tiny_backward_fits(M, K, N); }

cudaError_t launch_tiny_backward(lnl_dtype dt, const void *x, const void *dy, const void *W,
                                 const void *gamma, const void *beta, void *dx, void *dgamma,
                                 void *dbeta, void *dW, void *db, int64_t M, int64_t K, int64_t N,
                                 float eps, cudaStream_t s) {
    const size_t smem = (size_t)tiny_backward_floats(M, K, N) * sizeof(float);
    LNL_DISPATCH(dt, T, {
        const tiny_bwd_args<T> a{(const T *)x,  (const T *)dy,     (const T *)W,
                                 (const T *)gamma, (const T *)beta, (T *)dx,
                                 (T *)dgamma,   (T *)dbeta,        (T *)dW,
                                 (T *)db,       (int)M,            (int)K,
                                 (int)N,        eps};
        tiny_backward_kernel<T><<<1, TINY_THREADS, smem, s>>>(a);
    });
    return cudaGetLastError();
}

} // namespace lnl
