/* FUSED backward's weight gradient: dW = dy^T @ LN(x), LN(x) rebuilt from x, mean,
 * rstd, gamma and beta while loading the B operand, so no M x K activation exists.
 * When the N x K output has too few tiles to fill the GPU, the reduction over rows
 * is split across gridDim.z into float partials that one more kernel sums in split
 * order (deterministic, no atomics). */
#include "ln_gemm_kernels.cuh"
#include "ln_gemm_simt128.cuh"

namespace lnl {

/* Splits of the row reduction: enough blocks for ~2 per SM, each split at least
 * 512 rows, partials at most 1 GiB. Depends only on the problem and the device. */
int dw_splits(lnl_dtype dt, int64_t M, int64_t N, int64_t K, const device_info &d) {
    const bool f32 = dt == LNL_DTYPE_F32;
    const int64_t bm = f32 ? SG_BM : TC_BM, bn = f32 ? SG_BN : TC_BN;
    const int64_t tiles = ((N + bm - 1) / bm) * ((K + bn - 1) / bn);
    int64_t s = (2 * (int64_t)d.sm_count + tiles - 1) / tiles;
    s = std::min<int64_t>(s, std::max<int64_t>(1, M / 512));
    s = std::min<int64_t>(s, 32);
    while (s > 1 && (double)s * N * K * 4 > (double)(1ull << 30)) s--;
    return (int)std::max<int64_t>(1, s);
}

template <typename T>
static cudaError_t fused_dw_t(const T *dy, const T *x, const float *mean, const float *rstd,
                              const float *shift, const T *gamma, const T *beta, T *dW, float *part, int splits,
                              int64_t M, int64_t K, int64_t N, int sm_count, cudaStream_t s,
                              const int *run_if) {
    const bool f32 = std::is_same<T, float>::value;
    const int64_t bk = f32 ? SG_BK : TC_BK;
    const int64_t per = ((M + splits - 1) / splits + bk - 1) / bk * bk;
    float *pz = splits > 1 || run_if ? part : nullptr;
    if constexpr (std::is_same<T, float>::value) {
        static_assert(S128_BK == SG_BK, "per-split row counts are multiples of both kernels' depth");
        const int64_t tiles = ((N + S128_BM - 1) / S128_BM) * ((K + S128_BN - 1) / S128_BN) * splits;
        if (tiles >= sm_count && simt128_aligned(MODE_DW, K, N, dy, x, gamma, beta)) {
            dim3 grid((unsigned)((N + S128_BM - 1) / S128_BM), (unsigned)((K + S128_BN - 1) / S128_BN),
                      splits);
            simt128_ln_gemm_kernel<MODE_DW><<<grid, S128_THREADS, 0, s>>>(
                dy, x, mean, rstd, shift, gamma, beta, nullptr, dW, pz, M, K, N, per, run_if);
        } else {
        dim3 grid((unsigned)((N + SG_BM - 1) / SG_BM), (unsigned)((K + SG_BN - 1) / SG_BN), splits);
        simt_ln_gemm_kernel<MODE_DW><<<grid, SG_THREADS, 0, s>>>(dy, x, mean, rstd, shift, gamma, beta,
                                                                 nullptr, dW, pz, M, K, N, per, run_if);
        }
    } else {
        dim3 grid((unsigned)((N + TC_BM - 1) / TC_BM), (unsigned)((K + TC_BN - 1) / TC_BN), splits);
        const bool vec = K % 8 == 0 && N % 8 == 0 && aligned16(dy) && aligned16(x) &&
                         aligned16(gamma) && aligned16(beta);
        if (vec)
            tc_ln_gemm_kernel<T, MODE_DW, true><<<grid, TC_THREADS, 0, s>>>(
                dy, x, mean, rstd, gamma, beta, nullptr, dW, pz, M, K, N, per, nullptr, nullptr, 0.f,
                run_if);
        else
            tc_ln_gemm_kernel<T, MODE_DW, false><<<grid, TC_THREADS, 0, s>>>(
                dy, x, mean, rstd, gamma, beta, nullptr, dW, pz, M, K, N, per, nullptr, nullptr, 0.f,
                run_if);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || splits == 1 || run_if) return e;
    return launch_reduce_partials(std::is_same<T, float>::value        ? LNL_DTYPE_F32
                                  : std::is_same<T, __half>::value     ? LNL_DTYPE_F16
                                                                       : LNL_DTYPE_BF16,
                                  part, splits, N * K, dW, s);
}

cudaError_t launch_fused_dw_gemm(lnl_dtype dt, const void *dy, const void *x, const float *mean,
                                 const float *rstd, const float *shift, const void *gamma,
                                 const void *beta, void *dW,
                                 float *part, int splits, int64_t M, int64_t K, int64_t N,
                                 const device_info &d, cudaStream_t s, const int *run_if) {
    cudaError_t e = cudaSuccess;
    LNL_DISPATCH(dt, T,
                 e = fused_dw_t<T>((const T *)dy, (const T *)x, mean, rstd, shift, (const T *)gamma,
                                   (const T *)beta, (T *)dW, part, splits, M, K, N, d.sm_count, s,
                                   run_if));
    return e;
}

} // namespace lnl
