/* The float32 fused GEMM for problems that fill the GPU: 128x128 output tiles, 8x8
 * outputs per thread, 16-deep reduction slices in double-buffered shared memory,
 * 16-byte global loads. Same two modes and same LayerNorm rebuild as
 * simt_ln_gemm_kernel (ln_gemm_kernels.cuh), which stays the general path (tails of
 * K or N not a multiple of 4, misaligned pointers, grids too small for 128 tiles).
 *
 * Why a second kernel: true fp32 runs on the FMA pipes, and the 64x64 kernel's 4x4
 * outputs per thread spend two 16-byte shared loads per 16 FMAs; here four loads feed
 * 64 FMAs, so the FMA pipes, not shared memory, set the pace. Its forward ran at
 * 1.84-2.94x cuBLAS's fp32 GEMM on the H200.
 *
 *  MODE_FWD: y[M,N] = LN(x)[M,K] @ W[N,K]^T + b. A = LN(x), B = W, both K-major in
 *            global memory, stored transposed (reduction-major) in shared memory.
 *  MODE_DW : dW[N,K] = dy[M,N]^T @ LN(x)[M,K], reduced over rows m (split across
 *            gridDim.z into float partials when part is given). A = dy, B = LN(x),
 *            both already reduction-major in global memory. */
#ifndef LNL_LN_GEMM_SIMT128_CUH
#define LNL_LN_GEMM_SIMT128_CUH

#include "ln_gemm_kernels.cuh"

namespace lnl {

constexpr int S128_BM = 128, S128_BN = 128, S128_BK = 16, S128_THREADS = 256;
constexpr int S128_LD = S128_BM + 4; /* shared row stride: keeps the transposed stores spread */

/* The vectorized kernel's preconditions: 16-byte loads along every operand's rows. */
inline bool simt128_aligned(int mode, int64_t K, int64_t N, const void *aop, const void *bop,
                            const void *gamma, const void *beta) {
    const bool rows4 = mode == MODE_FWD ? K % 4 == 0 : K % 4 == 0 && N % 4 == 0;
    return rows4 && aligned16(aop) && aligned16(bop) && aligned16(gamma) && aligned16(beta);
}

/* LN of 4 consecutive features of one row (zero where the row or feature is out of
 * range, so padding never contributes), with the exact per-row shift when given. */
__device__ __forceinline__ float4 ln4(float4 v, float x0, float dm, float rs, float4 g, float4 b,
                                      bool has_shift, bool has_g, bool has_b, bool row_ok, int64_t nvalid) {
    float in[4] = {v.x, v.y, v.z, v.w}, gg[4] = {g.x, g.y, g.z, g.w}, bb[4] = {b.x, b.y, b.z, b.w};
    float o[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float c = has_shift ? (in[j] - x0) - dm : in[j] - x0;
        const float t = c * rs * (has_g ? gg[j] : 1.f) + (has_b ? bb[j] : 0.f);
        o[j] = row_ok && j < nvalid ? t : 0.f;
    }
    return make_float4(o[0], o[1], o[2], o[3]);
}

__device__ __forceinline__ float4 ld4(const float *p, bool ok) {
    return ok ? __ldg(reinterpret_cast<const float4 *>(p)) : make_float4(0.f, 0.f, 0.f, 0.f);
}

template <int MODE>
__global__ void __launch_bounds__(S128_THREADS, 2)
simt128_ln_gemm_kernel(const float *__restrict__ aop, const float *__restrict__ bop,
                       const float *__restrict__ mean, const float *__restrict__ rstd,
                       const float *__restrict__ shift, const float *__restrict__ gamma,
                       const float *__restrict__ beta, const float *__restrict__ bias,
                       float *__restrict__ out, float *__restrict__ part, int64_t M, int64_t K,
                       int64_t N, int64_t red_per_split, const int *__restrict__ run_if = nullptr) {
    /* the fallbacks of f32_fold.cu and (MODE_DW) dw_from_x.cu: nothing to do unless flagged */
    if (run_if && *run_if == 0) return;
    __shared__ __align__(16) float sA[2][S128_BK][S128_LD];
    __shared__ __align__(16) float sB[2][S128_BK][S128_LD];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int64_t t0 = (int64_t)blockIdx.x * S128_BM, u0 = (int64_t)blockIdx.y * S128_BN;
    const int64_t out_rows = MODE == MODE_FWD ? M : N, out_cols = MODE == MODE_FWD ? N : K;
    int64_t rbeg = 0, rend = K;
    if (MODE == MODE_DW) {
        rbeg = (int64_t)blockIdx.z * red_per_split;
        rend = min64(M, rbeg + red_per_split);
    }
    const bool has_g = gamma != nullptr, has_b = beta != nullptr, has_shift = shift != nullptr;

    /* Each thread loads two 4-wide pieces of each operand slice (FWD: rows lr and
     * lr + 64 of the tile, features lc..lc+3 of the slice; DW: slice rows lr and
     * lr + 8, columns lc..lc+3 of the tile). */
    const int lr = MODE == MODE_FWD ? tid >> 2 : tid >> 5;
    const int lc = MODE == MODE_FWD ? (tid & 3) * 4 : (tid & 31) * 4;
    constexpr int RSTEP = MODE == MODE_FWD ? 64 : 8;

    /* Per-thread constants: FWD rows are fixed (shift/mean, rstd); DW features are
     * fixed (gamma, beta). */
    float x0[2] = {0.f, 0.f}, dm[2] = {0.f, 0.f}, rs[2] = {0.f, 0.f};
    float4 gk = make_float4(0.f, 0.f, 0.f, 0.f), bk = gk;
    if (MODE == MODE_FWD) {
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int64_t m = t0 + lr + j * RSTEP;
            if (m < M) {
                x0[j] = has_shift ? aop[m * K] : mean[m];
                dm[j] = has_shift ? shift[m] : 0.f;
                rs[j] = rstd[m];
            }
        }
    } else {
        const int64_t k = u0 + lc;
        if (has_g) gk = ld4(gamma + k, k < K);
        if (has_b) bk = ld4(beta + k, k < K);
    }

    float4 ra[2], rb[2];
    auto fetch = [&](int64_t kt) {
        if (MODE == MODE_FWD) {
            const int64_t k = kt + lc;
            const bool kok = k < K;
            float4 g = make_float4(0.f, 0.f, 0.f, 0.f), b = g;
            if (has_g) g = ld4(gamma + k, kok);
            if (has_b) b = ld4(beta + k, kok);
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int64_t m = t0 + lr + j * RSTEP, n = u0 + lr + j * RSTEP;
                const bool mok = m < M && kok;
                ra[j] = ln4(ld4(aop + m * K + k, mok), x0[j], dm[j], rs[j], g, b, has_shift, has_g,
                            has_b, mok, K - k);
                rb[j] = ld4(bop + n * K + k, n < N && kok);
            }
        } else {
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int64_t m = kt + lr + j * RSTEP, n = t0 + lc, k = u0 + lc;
                const bool mok = m < rend;
                ra[j] = ld4(aop + m * N + n, mok && n < N);
                float mx0 = 0.f, mdm = 0.f, mrs = 0.f;
                if (mok) {
                    mx0 = has_shift ? bop[m * K] : mean[m];
                    mdm = has_shift ? shift[m] : 0.f;
                    mrs = rstd[m];
                }
                const bool ok = mok && k < K;
                rb[j] = ln4(ld4(bop + m * K + k, ok), mx0, mdm, mrs, gk, bk, has_shift, has_g, has_b,
                            ok, K - k);
            }
        }
    };
    auto commit = [&](int buf) {
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int r = lr + j * RSTEP;
            if (MODE == MODE_FWD) { /* transpose: feature-major rows of the tile */
                const float a[4] = {ra[j].x, ra[j].y, ra[j].z, ra[j].w};
                const float b[4] = {rb[j].x, rb[j].y, rb[j].z, rb[j].w};
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    sA[buf][lc + q][r] = a[q];
                    sB[buf][lc + q][r] = b[q];
                }
            } else {
                *reinterpret_cast<float4 *>(&sA[buf][r][lc]) = ra[j];
                *reinterpret_cast<float4 *>(&sB[buf][r][lc]) = rb[j];
            }
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    const int64_t ntiles = rend > rbeg ? (rend - rbeg + S128_BK - 1) / S128_BK : 0;
    if (ntiles > 0) {
        fetch(rbeg);
        commit(0);
    }
    __syncthreads();
    for (int64_t t = 0; t < ntiles; t++) {
        const int buf = (int)(t & 1);
        const bool more = t + 1 < ntiles;
        if (more) fetch(rbeg + (t + 1) * S128_BK); /* in flight during the FMAs below */
#pragma unroll
        for (int k = 0; k < S128_BK; k++) {
            const float4 a0 = *reinterpret_cast<const float4 *>(&sA[buf][k][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4 *>(&sA[buf][k][64 + ty * 4]);
            const float4 b0 = *reinterpret_cast<const float4 *>(&sB[buf][k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4 *>(&sB[buf][k][64 + tx * 4]);
            const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) commit(buf ^ 1);
        __syncthreads();
    }

    /* Output (i, j) of this thread: row (i < 4 ? ty*4 + i : 64 + ty*4 + i-4), column
     * (j < 4 ? tx*4 + j : 64 + tx*4 + j-4) of the tile. */
    float *pz = part ? part + (int64_t)blockIdx.z * N * K : nullptr;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const int64_t r = t0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (r >= out_rows) continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int64_t c = u0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (c < out_cols) simt_store<MODE>(out, pz, bias, r, c, out_cols, acc[i][j]);
        }
    }
}

} // namespace lnl

#endif
