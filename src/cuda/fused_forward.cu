/* FUSED forward GEMM: y = LN(x) @ W^T + b with LN(x) formed while loading x tiles
 * (kernels in ln_gemm_kernels.cuh; on Hopper, fused_forward_sm90.cu). mean/rstd come
 * from the stats pre-pass. */
#include "fused_sm90.cuh"
#include "ln_gemm_kernels.cuh"

namespace lnl {

template <typename T>
static cudaError_t fused_forward_t(const T *x, const float *mean, const float *rstd,
                                   const float *shift, const T *gamma,
                                   const T *beta, const T *W, const T *bias, T *y, int64_t M,
                                   int64_t K, int64_t N, cudaStream_t s) {
    if constexpr (std::is_same<T, float>::value) {
        dim3 grid((unsigned)((M + SG_BM - 1) / SG_BM), (unsigned)((N + SG_BN - 1) / SG_BN));
        simt_ln_gemm_kernel<MODE_FWD><<<grid, SG_THREADS, 0, s>>>(x, W, mean, rstd, shift, gamma, beta,
                                                                  bias, y, nullptr, M, K, N, 0);
    } else {
        dim3 grid((unsigned)((M + TC_BM - 1) / TC_BM), (unsigned)((N + TC_BN - 1) / TC_BN));
        const bool vec = K % 8 == 0 && aligned16(x) && aligned16(W) && aligned16(gamma) && aligned16(beta);
        if (vec)
            tc_ln_gemm_kernel<T, MODE_FWD, true><<<grid, TC_THREADS, 0, s>>>(
                x, W, mean, rstd, gamma, beta, bias, y, nullptr, M, K, N, 0);
        else
            tc_ln_gemm_kernel<T, MODE_FWD, false><<<grid, TC_THREADS, 0, s>>>(
                x, W, mean, rstd, gamma, beta, bias, y, nullptr, M, K, N, 0);
    }
    return cudaGetLastError();
}

cudaError_t launch_fused_forward_gemm(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const float *shift, const void *gamma,
                                      const void *beta,
                                      const void *W, const void *bias, void *y, int64_t M,
                                      int64_t K, int64_t N, const device_info &d,
                                      cudaStream_t s) {
    if (M == 0) return cudaSuccess;
    bool done = false;
    cudaError_t e = launch_fused_forward_sm90(dt, x, mean, rstd, gamma, beta, W, bias, y, M, K, N,
                                              d, s, &done);
    if (e != cudaSuccess || done) return e;
    LNL_DISPATCH(dt, T,
                 e = fused_forward_t<T>((const T *)x, mean, rstd, shift, (const T *)gamma,
                                        (const T *)beta, (const T *)W, (const T *)bias, (T *)y, M,
                                        K, N, s));
    return e;
}

} // namespace lnl
