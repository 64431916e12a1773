/* The weight gradient from the raw x, bf16: dW = dy^T LN(x) without LN(x) in memory.
 *
 * With xhat = (x - mean) * rstd per row, LN(x) = xhat * gamma + beta, so
 *
 *   dW[n, k] = gamma[k] * (G[n, k] - u[n]) + beta[k] * v[n],  where
 *   dy'[m, n] = T(rstd[m] * dy[m, n])      (rounded once to bf16),
 *   G = dy'^T x                            (one cuBLAS GEMM of the raw x, float32 out),
 *   u[n] = sum_m dy'[m, n] * mean[m]       (of the rounded dy': see below),
 *   v[n] = sum_m dy[m, n]                  (= dlinear_bias, which it also serves).
 *
 * The backward's other way to get dW when ln_out was not kept writes LN(x) out
 * (M x K, a read and a write of x's size) for cuBLAS to read back; this one reads and
 * writes dy (M x N) instead, so it pays where N < K: at 32768,4096,256 it moves 32 MB
 * instead of 512 MB. It is the backward twin of the Hopper forward's epilogue form
 * (fold_weight.cu) and has its weakness: G carries mean * sum(dy'), which u takes off
 * again, so float32's rounding in G's accumulation over M is multiplied by
 * |mean| * rstd. u is summed from the rounded dy' so that the subtraction cancels
 * exactly what the GEMM multiplied. A numpy model of float32 accumulation over
 * M = 32768 rows (2026-12-01, session 5) gave dW errors of 1.6e-3 at |mean| * rstd = 64
 * (the ln_out way: 1.6e-3), 1.6e-2 at 256 and 1.1 at 1e3. So rows beyond
 * FOLD_MAX_MEAN_RSTD (64, the forward's limit) set a flag, and then
 *  - the fused dW kernel (fused_backward.cu: LN(x) rebuilt while loading it) runs and
 *    writes float32 partials over G's memory, and
 *  - dw_finish sums those partials instead of applying the formula.
 * Without such a row the fused kernel returns at once. Everything is decided on the
 * device, so the host never waits for the flag.
 *
 * bf16 only: in f16, rstd * dy leaves f16's range where a row's spread is large or
 * tiny (rstd up to 1/sqrt(eps)); bf16 has float32's exponent range. */
#include "cuda_common.cuh"

namespace lnl {
namespace {

using bf16 = __nv_bfloat16;
constexpr int PREP_UNROLL = 4, FINISH_THREADS = 256;

/* Block (bx, g) handles rows [g*R, (g+1)*R) of its column range, R = ceil(M / gridDim.y):
 * writes dy' for them and their partial sums of u and v (row g of part_u, part_v),
 * adding rows in order, so the partials depend only on M, N and the grid. A thread
 * owns V adjacent columns (16-byte accesses when V = 8). Thread 0 of the blocks of
 * column range 0 tests every row for the flag. */
template <int V>
__global__ void dw_prep_kernel(const bf16 *__restrict__ dy, const float *__restrict__ mean,
                               const float *__restrict__ rstd, bf16 *__restrict__ dyp,
                               float *__restrict__ part_u, float *__restrict__ part_v,
                               int *__restrict__ off_centre, int64_t M, int64_t N) {
    const int64_t n0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V;
    const int64_t R = (M + gridDim.y - 1) / gridDim.y;
    const int64_t r0 = blockIdx.y * R, r1 = min64(M, r0 + R);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        bool off = false;
        for (int64_t m = r0; m < r1; m++) off |= off_centre_row(mean[m], rstd[m]);
        if (off) atomicOr(off_centre, 1);
    }
    if (n0 >= N) return;
    const int cols = (int)min64(V, N - n0);
    float u[V], v[V];
#pragma unroll
    for (int j = 0; j < V; j++) u[j] = v[j] = 0.f;
    int64_t m = r0;
    if constexpr (V > 1) { /* N % V == 0: cols == V */
        for (; m + PREP_UNROLL <= r1; m += PREP_UNROLL) {
            uint4 w[PREP_UNROLL];
            float r[PREP_UNROLL], mu[PREP_UNROLL];
#pragma unroll
            for (int i = 0; i < PREP_UNROLL; i++) {
                w[i] = __ldg(reinterpret_cast<const uint4 *>(dy + (m + i) * N + n0));
                r[i] = __ldg(rstd + m + i);
                mu[i] = __ldg(mean + m + i);
            }
#pragma unroll
            for (int i = 0; i < PREP_UNROLL; i++) {
                bf16 e[V], p[V];
                memcpy(e, &w[i], 16);
#pragma unroll
                for (int j = 0; j < V; j++) {
                    const float d = __bfloat162float(e[j]);
                    v[j] += d;
                    p[j] = __float2bfloat16_rn(r[i] * d);
                    u[j] += __bfloat162float(p[j]) * mu[i];
                }
                uint4 o;
                memcpy(&o, p, 16);
                *reinterpret_cast<uint4 *>(dyp + (m + i) * N + n0) = o;
            }
        }
    }
    for (; m < r1; m++) {
        const float r = rstd[m], mu = mean[m];
        for (int j = 0; j < cols; j++) {
            const float d = __bfloat162float(dy[m * N + n0 + j]);
            v[j] += d;
            const bf16 p = __float2bfloat16_rn(r * d);
            u[j] += __bfloat162float(p) * mu;
            dyp[m * N + n0 + j] = p;
        }
    }
    for (int j = 0; j < cols; j++) {
        part_u[blockIdx.y * N + n0 + j] = u[j];
        part_v[blockIdx.y * N + n0 + j] = v[j];
    }
}

/* Block n writes row n of dW: from G and the sums of u[n], v[n] over the G2 partial rows
 * (thread t adds rows t, t + 256, ... in order, then the fixed block tree), or, with
 * the flag set, the sum of the fused kernel's float32 partials in split order. */
__global__ void __launch_bounds__(FINISH_THREADS)
dw_finish_kernel(const float *__restrict__ part, int splits, const float *__restrict__ part_u,
                 const float *__restrict__ part_v, int64_t G2, const bf16 *__restrict__ gamma,
                 const bf16 *__restrict__ beta, const int *__restrict__ off_centre,
                 bf16 *__restrict__ dW, int64_t N, int64_t K) {
    __shared__ float2 red[32];
    const int64_t n = blockIdx.x;
    const bool fallback = *off_centre != 0;
    float u = 0.f, v = 0.f;
    if (!fallback) {
        float su = 0.f, sv = 0.f;
        for (int64_t g = threadIdx.x; g < G2; g += FINISH_THREADS) {
            su += part_u[g * N + n];
            sv += part_v[g * N + n];
        }
        const float2 t = block_sum2(su, sv, red);
        u = t.x, v = t.y;
    }
    const float *row = part + n * K;
    for (int64_t k = threadIdx.x; k < K; k += FINISH_THREADS) {
        float r;
        if (fallback) {
            r = 0.f;
            for (int z = 0; z < splits; z++) r += row[(int64_t)z * N * K + k];
        } else {
            const float g = gamma ? __bfloat162float(gamma[k]) : 1.f;
            const float b = beta ? __bfloat162float(beta[k]) : 0.f;
            r = g * (row[k] - u) + b * v;
        }
        dW[n * K + k] = __float2bfloat16_rn(r);
    }
}

} // namespace

cudaError_t launch_dw_prep(const void *dy, const float *mean, const float *rstd, void *dyp,
                           float *part_u, float *part_v, int *off_centre, int64_t M, int64_t N,
                           int64_t G2, cudaStream_t s) {
    constexpr int V = 8;
    const bool vec = N % V == 0 && aligned16(dy) && aligned16(dyp);
    const int64_t per_block = vec ? V : 1;
    const int64_t t = (N + per_block - 1) / per_block;
    const int threads = (int)std::min<int64_t>(256, std::max<int64_t>(32, (t + 31) / 32 * 32));
    const dim3 grid((unsigned)((t + threads - 1) / threads), (unsigned)G2);
    if (vec)
        dw_prep_kernel<V><<<grid, threads, 0, s>>>((const bf16 *)dy, mean, rstd, (bf16 *)dyp, part_u,
                                                   part_v, off_centre, M, N);
    else
        dw_prep_kernel<1><<<grid, threads, 0, s>>>((const bf16 *)dy, mean, rstd, (bf16 *)dyp, part_u,
                                                   part_v, off_centre, M, N);
    return cudaGetLastError();
}

cudaError_t launch_dw_finish(const float *part, int splits, const float *part_u, const float *part_v,
                             int64_t G2, const void *gamma, const void *beta, const int *off_centre,
                             void *dW, int64_t N, int64_t K, cudaStream_t s) {
    dw_finish_kernel<<<(unsigned)N, FINISH_THREADS, 0, s>>>(part, splits, part_u, part_v, G2,
                                                           (const bf16 *)gamma, (const bf16 *)beta,
                                                           off_centre, (bf16 *)dW, N, K);
    return cudaGetLastError();
}

} // namespace lnl
