/* float32's epilogue form (on unless built with -DLNL_F32_FOLD=0): the FUSED float32
 * forward as
 *
 *   LN(x) W^T + b = rstd * (x W'^T - mean * c) + d,
 *   W' = W * gamma (float32), c[n] = sum_k W'[n, k], d[n] = sum_k W[n, k] beta[k] + b[n],
 *
 * so that its GEMM is cuBLAS's own true-fp32 GEMM of the raw x (the SIMT kernel it would
 * replace runs at 1.45-1.54x cuBLAS on the H200), followed by one pass over y. The order
 * of a call (cuda_backend.cu's forward): the fold below (it clears the off-centre flag),
 * the statistics pass (it sets the flag for a row of |mean| rstd > F32_FOLD_MAX_MEAN_RSTD),
 * cuBLAS into y, the epilogue below (returns at once when flagged), and the SIMT kernel
 * (returns at once unless flagged: it then redoes y whole). c is summed from W' as the
 * GEMM multiplies it, so the cancellation of the mean uses the same weights on both
 * sides (fold_weight.cu says why that matters).
 *
 * Measured on the H200 (session 15, docs/results/cuda/2026-12-02-session15/call2-f32-fold):
 * 1.035x the cuBLAS GEMM at 8192,4096,4096 and 1.06-1.15x at the other large shapes,
 * against 1.35-1.57x for the SIMT kernel; the float32 CUDA table (26310 checks) and the
 * float32 Python tests passed with it. Its price: y's error against float64 grows as
 * 2.6e-7 |mean| rstd (bench/epilogue_form_numerics_f32.py), 4.8e-7 at a ratio of 1.5
 * where the SIMT kernel's order gives 2.8e-7, and 4.2e-6 at the limit of 16, under the
 * float32 bound of 1e-5. AUTO picks UNFUSED for such float32 problems anyway (its time
 * is 1.00-1.05x the GEMM); FUSED is what a caller asks for to keep no M x K activation. */
#include "cuda_common.cuh"

namespace lnl {
namespace {

constexpr int F32_FOLD_THREADS = 256, F32_FOLD_WARPS = F32_FOLD_THREADS / 32;

/* A warp a row of W: W' and the row's c and d, summed lane-strided and then by a fixed
 * shuffle tree (deterministic). */
__global__ void __launch_bounds__(F32_FOLD_THREADS)
f32_fold_kernel(const float *__restrict__ W, const float *__restrict__ gamma,
                const float *__restrict__ beta, const float *__restrict__ bias,
                float *__restrict__ wfold, float *__restrict__ cd, int *__restrict__ off_centre,
                int64_t N, int64_t K) {
    pdl_wait();
    if (blockIdx.x == 0 && threadIdx.x == 0) *off_centre = 0;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * F32_FOLD_WARPS;
    for (int64_t n = (int64_t)blockIdx.x * F32_FOLD_WARPS + (threadIdx.x >> 5); n < N; n += warps) {
        const float *w = W + n * K;
        float *wp = wfold + n * K;
        float c = 0.f, dsum = 0.f;
        for (int64_t k = lane; k < K; k += 32) {
            const float v = w[k], p = gamma ? v * gamma[k] : v;
            wp[k] = p;
            c += p;
            if (beta) dsum += v * beta[k];
        }
        c = warp_sum(c);
        dsum = warp_sum(dsum);
        if (lane == 0) {
            cd[2 * n] = c;
            cd[2 * n + 1] = dsum + (bias ? bias[n] : 0.f);
        }
    }
}

/* A thread a column n (its c and d in registers), down rows strided by the grid's rows. */
__global__ void __launch_bounds__(F32_FOLD_THREADS)
f32_fold_epilogue_kernel(float *__restrict__ y, const float *__restrict__ mean,
                         const float *__restrict__ rstd, const float *__restrict__ cd,
                         const int *__restrict__ off_centre, int64_t M, int64_t N) {
    pdl_wait();
    if (*off_centre) return; /* the SIMT kernel redoes y */
    const int64_t n = (int64_t)blockIdx.x * F32_FOLD_THREADS + threadIdx.x;
    if (n >= N) return;
    const float c = cd[2 * n], dn = cd[2 * n + 1];
    for (int64_t m = blockIdx.y; m < M; m += gridDim.y) {
        float *p = y + m * N + n;
        *p = rstd[m] * (*p - mean[m] * c) + dn;
    }
}

} // namespace

cudaError_t launch_f32_fold(const float *W, const float *gamma, const float *beta,
                            const float *bias, float *wfold, float *cd, int *off_centre,
                            int64_t N, int64_t K, const device_info &d, cudaStream_t s) {
    const int64_t blocks = std::max<int64_t>(
        1, std::min<int64_t>((N + F32_FOLD_WARPS - 1) / F32_FOLD_WARPS, (int64_t)d.sm_count * 8));
    return launch_dependent(f32_fold_kernel, dim3((unsigned)blocks), dim3(F32_FOLD_THREADS), 0, s,
                            W, gamma, beta, bias, wfold, cd, off_centre, N, K);
}

cudaError_t launch_f32_fold_epilogue(float *y, const float *mean, const float *rstd,
                                     const float *cd, const int *off_centre, int64_t M,
                                     int64_t N, const device_info &d, cudaStream_t s) {
    const int64_t gx = (N + F32_FOLD_THREADS - 1) / F32_FOLD_THREADS;
    /* ~16 blocks an SM in all, each thread then a few rows apart */
    const int64_t gy = std::max<int64_t>(
        1, std::min<int64_t>({M, (int64_t)65535, ((int64_t)d.sm_count * 16 + gx - 1) / gx}));
    return launch_dependent(f32_fold_epilogue_kernel, dim3((unsigned)gx, (unsigned)gy),
                            dim3(F32_FOLD_THREADS), 0, s, y, mean, rstd, cd, off_centre, M, N);
}

} // namespace lnl
