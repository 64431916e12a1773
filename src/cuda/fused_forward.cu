/* FUSED forward GEMM: y = LN(x) @ W^T + b with LN(x) formed while loading x tiles
 * (kernels in ln_gemm_kernels.cuh; on Hopper, fused_forward_sm90.cu). mean/rstd come
 * from the stats pre-pass. */
#include "fused_sm90.cuh"
#include "ln_gemm_kernels.cuh"
#include "ln_gemm_simt128.cuh"

namespace lnl {

template <typename T>
static cudaError_t fused_forward_t(const T *x, const float *mean, const float *rstd,
                                   const float *shift, const T *gamma,
                                   const T *beta, const T *W, const T *bias, T *y, int64_t M,
                                   int64_t K, int64_t N, int sm_count, cudaStream_t s,
                                   const int *run_if) {
    if constexpr (std::is_same<T, float>::value) {
        /* the 128x128 kernel once its tiles alone fill every SM */
        const int64_t tiles = ((M + S128_BM - 1) / S128_BM) * ((N + S128_BN - 1) / S128_BN);
        if (tiles >= sm_count && simt128_aligned(MODE_FWD, K, N, x, W, gamma, beta)) {
            dim3 grid((unsigned)((M + S128_BM - 1) / S128_BM), (unsigned)((N + S128_BN - 1) / S128_BN));
            simt128_ln_gemm_kernel<MODE_FWD><<<grid, S128_THREADS, 0, s>>>(
                x, W, mean, rstd, shift, gamma, beta, bias, y, nullptr, M, K, N, 0, run_if);
            return cudaGetLastError();
        }
        dim3 grid((unsigned)((M + SG_BM - 1) / SG_BM), (unsigned)((N + SG_BN - 1) / SG_BN));
        simt_ln_gemm_kernel<MODE_FWD><<<grid, SG_THREADS, 0, s>>>(x, W, mean, rstd, shift, gamma, beta,
                                                                  bias, y, nullptr, M, K, N, 0, run_if);
    } else {
        (void)run_if; /* float32's epilogue form only */
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

/* Small bf16/f16 problems (the tiny ones, up to 2^15 multiply-adds, take tiny_forward.cuh
 * first, since session 15): one launch, the statistics computed in the GEMM kernel
 * (row_stats4). A second launch costs host time (~2.5 us) and GPU time, more than such
 * a problem's arithmetic. H200, lnl-bench forward, one launch vs stats pre-pass + GEMM:
 * 16,8,16: 11.1 vs 12.5 us; but 128,64,128: 19.2 vs 14.8 us, 64,128,256: 18.4 vs
 * 17.2, 256,128,256: 21.6 vs 19.9 (every column tile reads its rows again, and the
 * prologue delays the main loop), hence rows of at most 16 elements. */
static bool inline_stats_fit(lnl_dtype dt, int64_t M, int64_t K, int64_t N) {
    return (dt == LNL_DTYPE_BF16 || dt == LNL_DTYPE_F16) && K <= 4 * STATS_PER && N <= 2 * TC_BN &&
           (double)M * (double)K * (double)N <= (double)(1 << 24);
}

template <typename T>
static cudaError_t fused_forward_stats_t(const T *x, float *mean, float *rstd, float eps, const T *gamma,
                                         const T *beta, const T *W, const T *bias, T *y, int64_t M,
                                         int64_t K, int64_t N, cudaStream_t s) {
    dim3 grid((unsigned)((M + TC_BM - 1) / TC_BM), (unsigned)((N + TC_BN - 1) / TC_BN));
    const bool vec = K % 8 == 0 && aligned16(x) && aligned16(W) && aligned16(gamma) && aligned16(beta);
    if (vec)
        tc_ln_gemm_kernel<T, MODE_FWD, true, true><<<grid, TC_THREADS, 0, s>>>(
            x, W, nullptr, nullptr, gamma, beta, bias, y, nullptr, M, K, N, 0, mean, rstd, eps);
    else
        tc_ln_gemm_kernel<T, MODE_FWD, false, true><<<grid, TC_THREADS, 0, s>>>(
            x, W, nullptr, nullptr, gamma, beta, bias, y, nullptr, M, K, N, 0, mean, rstd, eps);
    return cudaGetLastError();
}

cudaError_t launch_fused_forward_with_stats(lnl_dtype dt, const void *x, float *mean, float *rstd,
                                            float eps, const void *gamma, const void *beta,
                                            const void *W, const void *bias, void *y, int64_t M,
                                            int64_t K, int64_t N, cudaStream_t s, bool *done) {
    *done = false;
    if (M == 0 || !inline_stats_fit(dt, M, K, N)) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    /* bf16 and f16 by hand: LNL_DISPATCH would also instantiate the kernel for float,
     * which inline_stats_fit never admits */
    if (dt == LNL_DTYPE_BF16)
        e = fused_forward_stats_t<__nv_bfloat16>((const __nv_bfloat16 *)x, mean, rstd, eps,
                                                 (const __nv_bfloat16 *)gamma, (const __nv_bfloat16 *)beta,
                                                 (const __nv_bfloat16 *)W, (const __nv_bfloat16 *)bias,
                                                 (__nv_bfloat16 *)y, M, K, N, s);
    else
        e = fused_forward_stats_t<__half>((const __half *)x, mean, rstd, eps, (const __half *)gamma,
                                          (const __half *)beta, (const __half *)W, (const __half *)bias,
                                          (__half *)y, M, K, N, s);
    *done = e == cudaSuccess;
    return e;
}

cudaError_t launch_fused_forward_gemm(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const float *shift, const void *gamma,
                                      const void *beta,
                                      const void *W, const void *bias, const sm90_fold *fold,
                                      void *y, int64_t M, int64_t K, int64_t N,
                                      const device_info &d, cudaStream_t s, const int *run_if) {
    if (M == 0) return cudaSuccess;
    bool done = false;
    const sm90_fold none{nullptr, nullptr, nullptr, nullptr, 0, false, 0.f, nullptr, nullptr};
    cudaError_t e = launch_fused_forward_sm90(dt, x, mean, rstd, gamma, beta, W, bias,
                                              fold ? *fold : none, y, M, K, N, d, s, &done);
    if (e != cudaSuccess || done) return e;
    /* the Hopper kernel declined after all: the statistics it would have computed */
    if (fold && fold->stats_inside) {
        e = launch_ln_forward(dt, x, nullptr, nullptr, nullptr, (float *)mean, (float *)rstd,
                              nullptr, M, K, fold->eps, d, s);
        if (e != cudaSuccess) return e;
    }
    LNL_DISPATCH(dt, T,
                 e = fused_forward_t<T>((const T *)x, mean, rstd, shift, (const T *)gamma,
                                        (const T *)beta, (const T *)W, (const T *)bias, (T *)y, M,
                                        K, N, d.sm_count, s, run_if));
    return e;
}

} // namespace lnl
