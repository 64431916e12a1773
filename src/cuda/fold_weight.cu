/* The folded weight of the Hopper forward's epilogue form (fused_forward_sm90.cu):
 *
 *   LN(x) W^T + b = rstd * (x W'^T - mean * c) + d,  with
 *   W'[n, k] = T(W[n, k] * gamma[k])   (the product rounded once to the io dtype),
 *   c[n]     = sum_k W'[n, k]          (float32, of the rounded values),
 *   d[n]     = sum_k W[n, k] beta[k] + bias[n]   (float32).
 *
 * c must be summed from the rounded W': the GEMM multiplies by the rounded values, and
 * the subtraction of mean * c cancels x's row mean only if both sides use the same
 * weights. Summed from W * gamma before rounding, the rounding error of W' is
 * multiplied by |mean| / std (bench/epilogue_form_numerics.py: y's error 0.5 instead of
 * 2e-3 at row means of 1e3).
 *
 * One block of 128 threads per row of W, 16-byte chunks, block sums in a fixed order
 * (deterministic). cd holds {c[n], d[n]} pairs; its pairs past N up to a multiple of 8
 * are zero, since the epilogue reads two columns' pairs as 16 bytes. Block 0 also
 * zeroes off_centre, which the statistics pass then sets (see launch_ln_forward). */
#include "cuda_common.cuh"
#include "fused_sm90.cuh"

namespace lnl {
namespace {

constexpr int FOLD_THREADS = 128;

template <typename T>
__global__ void __launch_bounds__(FOLD_THREADS)
fold_weight_kernel(const T *__restrict__ W, const T *__restrict__ gamma, const T *__restrict__ beta,
                   const T *__restrict__ bias, T *__restrict__ wfold, float *__restrict__ cd,
                   int *__restrict__ off_centre, int64_t N, int64_t K) {
    __shared__ float red[2][FOLD_THREADS / 32];
    pdl_launch_dependents(); /* the GEMM kernel behind may be set up now; it waits for us */
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) *off_centre = 0;
        const int64_t padded = (N + 7) / 8 * 8;
        for (int64_t n = N + threadIdx.x; n < padded; n += FOLD_THREADS)
            cd[2 * n] = cd[2 * n + 1] = 0.f;
    }
    for (int64_t n = blockIdx.x; n < N; n += gridDim.x) {
        const T *wr = W + n * K;
        T *fr = wfold + n * K;
        float c = 0.f, d = 0.f;
        for (int64_t k = 8 * (int64_t)threadIdx.x; k < K; k += 8 * FOLD_THREADS) {
            const uint4 wu = __ldg((const uint4 *)(wr + k));
            const uint4 gu = gamma ? __ldg((const uint4 *)(gamma + k)) : uint4{};
            const uint4 bu = beta ? __ldg((const uint4 *)(beta + k)) : uint4{};
            const T *wv = (const T *)&wu, *gv = (const T *)&gu, *bv = (const T *)&bu;
            uint4 fu;
            T *fv = (T *)&fu;
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const float w = to_f(wv[j]);
                fv[j] = from_f<T>(gamma ? w * to_f(gv[j]) : w);
                c += to_f(fv[j]);
                if (beta) d = fmaf(w, to_f(bv[j]), d);
            }
            *(uint4 *)(fr + k) = fu;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            c += __shfl_down_sync(0xffffffffu, c, o);
            d += __shfl_down_sync(0xffffffffu, d, o);
        }
        const int warp = threadIdx.x / 32;
        if (threadIdx.x % 32 == 0) red[0][warp] = c, red[1][warp] = d;
        __syncthreads();
        if (threadIdx.x == 0) {
            float cs = 0.f, ds = bias ? to_f(bias[n]) : 0.f;
            for (int w = 0; w < FOLD_THREADS / 32; w++) cs += red[0][w], ds += red[1][w];
            cd[2 * n] = cs;
            cd[2 * n + 1] = ds;
        }
        __syncthreads(); /* red is reused by the next row */
    }
}

} // namespace

cudaError_t launch_fold_weight(lnl_dtype dt, const void *W, const void *gamma, const void *beta,
                               const void *bias, void *wfold, float *cd, int *off_centre,
                               int64_t N, int64_t K, cudaStream_t s) {
    const unsigned grid = (unsigned)std::min<int64_t>(N, (int64_t)1 << 30);
    if (dt == LNL_DTYPE_BF16)
        fold_weight_kernel<__nv_bfloat16><<<grid, FOLD_THREADS, 0, s>>>(
            (const __nv_bfloat16 *)W, (const __nv_bfloat16 *)gamma, (const __nv_bfloat16 *)beta,
            (const __nv_bfloat16 *)bias, (__nv_bfloat16 *)wfold, cd, off_centre, N, K);
    else if (dt == LNL_DTYPE_F16)
        fold_weight_kernel<__half><<<grid, FOLD_THREADS, 0, s>>>(
            (const __half *)W, (const __half *)gamma, (const __half *)beta, (const __half *)bias,
            (__half *)wfold, cd, off_centre, N, K);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

} // namespace lnl
