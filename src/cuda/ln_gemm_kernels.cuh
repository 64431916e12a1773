/* The fused GEMM kernels: one GEMM whose normalized operand is LayerNorm(x),
 * rebuilt tile by tile from x, mean, rstd, gamma and beta while it is copied from
 * global memory into shared memory. LN(x) never exists in global memory.
 *
 *  MODE_FWD: y[M,N]  = LN(x)[M,K] @ W[N,K]^T + b    (A = LN(x) K-major, B = W K-major)
 *  MODE_DW : dW[N,K] = dy[M,N]^T @ LN(x)[M,K]        (A = dy, B = LN(x), both M-major;
 *            the reduction runs over rows m, optionally split across gridDim.z with
 *            float partials reduced afterwards in a fixed order)
 *
 * bf16/f16 use tensor cores (mma.sync m16n8k16, fp32 accumulators, ldmatrix with
 * .trans for the M-major tiles); f32 uses a tiled SIMT kernel (true fp32). Both stage
 * the next tile in registers while the current one is multiplied. */
#ifndef LNL_LN_GEMM_KERNELS_CUH
#define LNL_LN_GEMM_KERNELS_CUH

#include <type_traits>

#include "cuda_common.cuh"

namespace lnl {

enum { MODE_FWD = 0, MODE_DW = 1 };

/* ---------------- tensor-core kernel (bf16 / f16) ---------------- */
constexpr int TC_BM = 128, TC_BN = 128, TC_BK = 32, TC_THREADS = 256;
constexpr int TC_KLD = TC_BK + 8;  /* K-major tile row stride: +16 B keeps ldmatrix conflict-free */
constexpr int TC_MLD = TC_BM + 8;  /* M-major tile row stride */
constexpr int TC_TILE = TC_BM * TC_KLD > TC_BK * TC_MLD ? TC_BM * TC_KLD : TC_BK * TC_MLD;

template <typename T> __device__ __forceinline__ T zero_t() { return from_f<T>(0.f); }

/* 8 consecutive elements base[r*ld + c .. c+7], zero outside rows x cols. VEC: the
 * caller guarantees 16-byte alignment and cols % 8 == 0. */
template <typename T, bool VEC>
__device__ __forceinline__ uint4 fetch8(const T *base, int64_t ld, int64_t r, int64_t c,
                                        int64_t rows, int64_t cols) {
    uint4 u = make_uint4(0, 0, 0, 0);
    if (r >= rows || c >= cols) return u;
    const T *p = base + r * ld + c;
    if constexpr (VEC) {
        return __ldg(reinterpret_cast<const uint4 *>(p));
    } else {
        T v[8];
#pragma unroll
        for (int j = 0; j < 8; j++) v[j] = c + j < cols ? p[j] : zero_t<T>();
        memcpy(&u, v, 16);
        return u;
    }
}

/* (x - mu) * rs * gamma + beta for 8 elements, zero where invalid (nvalid < 8 or a
 * row past the end), rounded to T as the unfused ln_out would be. */
template <typename T>
__device__ __forceinline__ uint4 norm8(uint4 raw, float mu, float rs, uint4 g, uint4 b,
                                       bool has_g, bool has_b, int64_t nvalid) {
    T xv[8], gv[8], bv[8], o[8];
    memcpy(xv, &raw, 16);
    memcpy(gv, &g, 16);
    memcpy(bv, &b, 16);
#pragma unroll
    for (int j = 0; j < 8; j++) {
        float v = (to_f(xv[j]) - mu) * rs * (has_g ? to_f(gv[j]) : 1.f) + (has_b ? to_f(bv[j]) : 0.f);
        o[j] = j < nvalid ? from_f<T>(v) : zero_t<T>();
    }
    uint4 u;
    memcpy(&u, o, 16);
    return u;
}

__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Row statistics of x inside the forward kernel (STATS): the 4 threads that load a
 * row's chunks (consecutive lanes) reduce it with the pre-pass's formula (shifted by
 * the row's first element, two passes), so a tiny problem's forward is one launch.
 * Each thread loads its STATS_PER elements of the row at once into registers (one
 * memory round trip). Blocks of the first column tile write mean/rstd for the
 * backward. Only for rows of K <= 4 * STATS_PER (the caller checks; fused_forward.cu
 * has the measurements behind the limit). */
constexpr int STATS_PER = 4;

template <typename T>
__device__ __forceinline__ void row_stats4(const T *__restrict__ x, int64_t row, int64_t M, int64_t K,
                                           float eps, float *mu, float *rs) {
    const int q = threadIdx.x & 3;
    const bool ok = row < M;
    const T *xr = x + (ok ? row : 0) * K;
    float v[STATS_PER];
    const float x0 = ok ? to_f(xr[0]) : 0.f;
#pragma unroll
    for (int i = 0; i < STATS_PER; i++) {
        const int64_t k = q + 4 * i;
        v[i] = ok && k < K ? to_f(xr[k]) - x0 : 0.f;
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < STATS_PER; i++) s += v[i];
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    const float dm = s / (float)K;
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < STATS_PER; i++)
        if (q + 4 * i < K) ss += (v[i] - dm) * (v[i] - dm);
    ss += __shfl_xor_sync(0xffffffffu, ss, 1);
    ss += __shfl_xor_sync(0xffffffffu, ss, 2);
    *mu = x0 + dm;
    *rs = 1.f / sqrtf(ss / (float)K + eps);
}

/* Grid: x = tiles of output rows (M for FWD, N for DW), y = tiles of output columns,
 * z = reduction splits (DW). red_per_split is a multiple of TC_BK. run_if (DW): the
 * block returns at once when *run_if == 0. STATS (FWD only):
 * mean/rstd are computed here (row_stats4) and written to stats_mean/stats_rstd
 * instead of being read from mean/rstd. */
template <typename T, int MODE, bool VEC, bool STATS = false>
__global__ void __launch_bounds__(TC_THREADS, 2)
tc_ln_gemm_kernel(const T *__restrict__ aop, const T *__restrict__ bop,
                  const float *__restrict__ mean, const float *__restrict__ rstd,
                  const T *__restrict__ gamma, const T *__restrict__ beta,
                  const T *__restrict__ bias, T *__restrict__ out, float *__restrict__ part,
                  int64_t M, int64_t K, int64_t N, int64_t red_per_split,
                  float *__restrict__ stats_mean = nullptr, float *__restrict__ stats_rstd = nullptr,
                  float eps = 0.f, const int *__restrict__ run_if = nullptr) {
    static_assert(!STATS || MODE == MODE_FWD, "in-kernel statistics are for the forward");
    /* dw_from_x.cu's fallback: nothing to do unless its flag is set */
    if (MODE == MODE_DW && run_if && *run_if == 0) return;
    constexpr bool KMAJ = MODE == MODE_FWD;
    __shared__ __align__(16) T smA[2][TC_TILE];
    __shared__ __align__(16) T smB[2][TC_TILE];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp >> 2) * 64, wn0 = (warp & 3) * 32;
    const int64_t t0 = (int64_t)blockIdx.x * TC_BM, u0 = (int64_t)blockIdx.y * TC_BN;
    const int64_t out_rows = MODE == MODE_FWD ? M : N, out_cols = MODE == MODE_FWD ? N : K;
    int64_t rbeg = 0, rend = K;
    if (MODE == MODE_DW) {
        rbeg = (int64_t)blockIdx.z * red_per_split;
        rend = min64(M, rbeg + red_per_split);
    }
    const bool has_g = gamma != nullptr, has_b = beta != nullptr;

    /* This thread's two 8-element chunks of each operand tile. */
    int cr[2], cc[2];
#pragma unroll
    for (int j = 0; j < 2; j++) {
        int i = tid + j * TC_THREADS;
        cr[j] = KMAJ ? i >> 2 : i >> 4;
        cc[j] = KMAJ ? (i & 3) * 8 : (i & 15) * 8;
    }
    /* Per-chunk constants: FWD rows are fixed (mean/rstd), DW features are fixed
     * (gamma/beta); the other pair is fetched with each tile. */
    float mu[2] = {0.f, 0.f}, rs[2] = {0.f, 0.f};
    uint4 gr[2], br[2];
#pragma unroll
    for (int j = 0; j < 2; j++) {
        gr[j] = br[j] = make_uint4(0, 0, 0, 0);
        if constexpr (STATS) {
            const int64_t row = t0 + cr[j];
            row_stats4<T>(aop, row, M, K, eps, &mu[j], &rs[j]);
            if (blockIdx.y == 0 && (tid & 3) == 0 && row < M) {
                stats_mean[row] = mu[j];
                stats_rstd[row] = rs[j];
            }
            if (row >= M) mu[j] = rs[j] = 0.f;
        } else if (MODE == MODE_FWD) {
            if (t0 + cr[j] < M) {
                mu[j] = mean[t0 + cr[j]];
                rs[j] = rstd[t0 + cr[j]];
            }
        } else {
            if (has_g) gr[j] = fetch8<T, VEC>(gamma, 0, 0, u0 + cc[j], 1, K);
            if (has_b) br[j] = fetch8<T, VEC>(beta, 0, 0, u0 + cc[j], 1, K);
        }
    }

    uint4 ra[2], rb[2];
    auto fetch = [&](int64_t kt) {
#pragma unroll
        for (int j = 0; j < 2; j++) {
            if (MODE == MODE_FWD) {
                ra[j] = fetch8<T, VEC>(aop, K, t0 + cr[j], kt + cc[j], M, K);
                rb[j] = fetch8<T, VEC>(bop, K, u0 + cr[j], kt + cc[j], N, K);
                if (has_g) gr[j] = fetch8<T, VEC>(gamma, 0, 0, kt + cc[j], 1, K);
                if (has_b) br[j] = fetch8<T, VEC>(beta, 0, 0, kt + cc[j], 1, K);
            } else {
                const int64_t m = kt + cr[j];
                ra[j] = fetch8<T, VEC>(aop, N, m, t0 + cc[j], rend, N);
                rb[j] = fetch8<T, VEC>(bop, K, m, u0 + cc[j], rend, K);
                mu[j] = m < rend ? mean[m] : 0.f;
                rs[j] = m < rend ? rstd[m] : 0.f;
            }
        }
    };
    auto commit = [&](int buf, int64_t kt) {
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const int off = KMAJ ? cr[j] * TC_KLD + cc[j] : cr[j] * TC_MLD + cc[j];
            if (MODE == MODE_FWD) {
                int64_t nv = t0 + cr[j] < M ? K - (kt + cc[j]) : 0;
                *reinterpret_cast<uint4 *>(&smA[buf][off]) =
                    norm8<T>(ra[j], mu[j], rs[j], gr[j], br[j], has_g, has_b, nv);
                *reinterpret_cast<uint4 *>(&smB[buf][off]) = rb[j];
            } else {
                int64_t nv = kt + cr[j] < rend ? K - (u0 + cc[j]) : 0;
                *reinterpret_cast<uint4 *>(&smA[buf][off]) = ra[j];
                *reinterpret_cast<uint4 *>(&smB[buf][off]) =
                    norm8<T>(rb[j], mu[j], rs[j], gr[j], br[j], has_g, has_b, nv);
            }
        }
    };

    float acc[4][4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[a][b][c] = 0.f;

    const int64_t ntiles = rend > rbeg ? (rend - rbeg + TC_BK - 1) / TC_BK : 0;
    if (ntiles > 0) {
        fetch(rbeg);
        commit(0, rbeg);
    }
    __syncthreads();
    for (int64_t t = 0; t < ntiles; t++) {
        const int buf = (int)(t & 1);
        const bool more = t + 1 < ntiles;
        if (more) fetch(rbeg + (t + 1) * TC_BK); /* in flight during the MMAs below */
        const T *As = smA[buf], *Bs = smB[buf];
#pragma unroll
        for (int kk = 0; kk < TC_BK; kk += 16) {
            uint32_t af[4][4], bf[4][2];
            const int g = lane >> 3;
#pragma unroll
            for (int mi = 0; mi < 4; mi++) {
                if (KMAJ)
                    ldsm_x4(af[mi], As + (wm0 + mi * 16 + (lane & 15)) * TC_KLD + kk + (lane >> 4) * 8);
                else
                    ldsm_x4_t(af[mi], As + (kk + (g >> 1) * 8 + (lane & 7)) * TC_MLD + wm0 + mi * 16 +
                                          (g & 1) * 8);
            }
#pragma unroll
            for (int p = 0; p < 2; p++) {
                uint32_t r[4];
                if (KMAJ)
                    ldsm_x4(r, Bs + (wn0 + p * 16 + (g >> 1) * 8 + (lane & 7)) * TC_KLD + kk + (g & 1) * 8);
                else
                    ldsm_x4_t(r, Bs + (kk + (g & 1) * 8 + (lane & 7)) * TC_MLD + wn0 + p * 16 + (g >> 1) * 8);
                bf[2 * p][0] = r[0];
                bf[2 * p][1] = r[1];
                bf[2 * p + 1][0] = r[2];
                bf[2 * p + 1][1] = r[3];
            }
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
#pragma unroll
                for (int nj = 0; nj < 4; nj++) mma16816<T>(acc[mi][nj], af[mi], bf[nj][0], bf[nj][1]);
        }
        if (more) commit(buf ^ 1, rbeg + (t + 1) * TC_BK);
        __syncthreads();
    }

    /* Epilogue: accumulator (mi, nj, e) sits at row wm0+mi*16+lane/4 (+8 for e>=2),
     * column wn0+nj*8+2*(lane%4) (+1 for odd e). */
    float *pz = part ? part + (int64_t)blockIdx.z * N * K : nullptr;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int nj = 0; nj < 4; nj++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int64_t r = t0 + wm0 + mi * 16 + (lane >> 2) + (e >= 2 ? 8 : 0);
                const int64_t c = u0 + wn0 + nj * 8 + 2 * (lane & 3) + (e & 1);
                if (r >= out_rows || c >= out_cols) continue;
                float v = acc[mi][nj][e];
                if (MODE == MODE_FWD && bias) v += to_f(bias[c]);
                if (pz)
                    pz[r * out_cols + c] = v;
                else
                    out[r * out_cols + c] = from_f<T>(v);
            }
}

/* ---------------- SIMT fp32 kernel (f32) ---------------- */
constexpr int SG_BM = 64, SG_BN = 64, SG_BK = 16, SG_THREADS = 256;

/* One float32 output of the SIMT kernels (this file's and ln_gemm_simt128.cuh's): y plus
 * the bias in the forward; dW, or this split's partial of it (pz), in the backward. */
template <int MODE>
__device__ __forceinline__ void simt_store(float *out, float *pz, const float *bias, int64_t r,
                                           int64_t c, int64_t out_cols, float v) {
    if (MODE == MODE_FWD && bias) v += bias[c];
    (pz ? pz : out)[r * out_cols + c] = v;
}

/* Same modes and grid as the tensor-core kernel; 64x64 output tile, 4x4 per thread.
 * Both smem tiles are stored reduction-major so each thread reads float4 rows. */
template <int MODE>
__global__ void __launch_bounds__(SG_THREADS)
simt_ln_gemm_kernel(const float *__restrict__ aop, const float *__restrict__ bop,
                    const float *__restrict__ mean, const float *__restrict__ rstd,
                    const float *__restrict__ shift, const float *__restrict__ gamma, const float *__restrict__ beta,
                    const float *__restrict__ bias, float *__restrict__ out,
                    float *__restrict__ part, int64_t M, int64_t K, int64_t N,
                    int64_t red_per_split, const int *__restrict__ run_if = nullptr) {
    /* the fallbacks of f32_fold.cu and (MODE_DW) dw_from_x.cu: nothing to do unless flagged */
    if (run_if && *run_if == 0) return;
    __shared__ __align__(16) float sA[2][SG_BK][SG_BM + 4];
    __shared__ __align__(16) float sB[2][SG_BK][SG_BN + 4];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int64_t t0 = (int64_t)blockIdx.x * SG_BM, u0 = (int64_t)blockIdx.y * SG_BN;
    const int64_t out_rows = MODE == MODE_FWD ? M : N, out_cols = MODE == MODE_FWD ? N : K;
    int64_t rbeg = 0, rend = K;
    if (MODE == MODE_DW) {
        rbeg = (int64_t)blockIdx.z * red_per_split;
        rend = min64(M, rbeg + red_per_split);
    }
    float ra[4], rb[4];
    /* element e = tid + 256*j: FWD tiles are read along k (16 per row), DW tiles
     * along the 64 output columns of one row m. */
    auto fetch = [&](int64_t kt) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int e = tid + j * SG_THREADS;
            if (MODE == MODE_FWD) {
                const int r = e >> 4, k = e & 15;
                const int64_t gk = kt + k, gm = t0 + r, gn = u0 + r;
                float xv = gm < M && gk < K ? aop[gm * K + gk] : 0.f;
                ra[j] = gm < M && gk < K
                            ? (shift ? (xv - aop[gm * K]) - shift[gm] : xv - mean[gm]) * rstd[gm] * (gamma ? gamma[gk] : 1.f) + (beta ? beta[gk] : 0.f)
                            : 0.f;
                rb[j] = gn < N && gk < K ? bop[gn * K + gk] : 0.f;
            } else {
                const int r = e >> 6, c = e & 63;
                const int64_t m = kt + r, gn = t0 + c, gk = u0 + c;
                ra[j] = m < rend && gn < N ? aop[m * N + gn] : 0.f;
                float xv = m < rend && gk < K ? bop[m * K + gk] : 0.f;
                rb[j] = m < rend && gk < K
                            ? (shift ? (xv - bop[m * K]) - shift[m] : xv - mean[m]) * rstd[m] * (gamma ? gamma[gk] : 1.f) + (beta ? beta[gk] : 0.f)
                            : 0.f;
            }
        }
    };
    auto commit = [&](int buf) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int e = tid + j * SG_THREADS;
            if (MODE == MODE_FWD) {
                sA[buf][e & 15][e >> 4] = ra[j];
                sB[buf][e & 15][e >> 4] = rb[j];
            } else {
                sA[buf][e >> 6][e & 63] = ra[j];
                sB[buf][e >> 6][e & 63] = rb[j];
            }
        }
    };
    float acc[4][4] = {};
    const int64_t ntiles = rend > rbeg ? (rend - rbeg + SG_BK - 1) / SG_BK : 0;
    if (ntiles > 0) {
        fetch(rbeg);
        commit(0);
    }
    __syncthreads();
    for (int64_t t = 0; t < ntiles; t++) {
        const int buf = (int)(t & 1);
        const bool more = t + 1 < ntiles;
        if (more) fetch(rbeg + (t + 1) * SG_BK);
#pragma unroll
        for (int k = 0; k < SG_BK; k++) {
            float4 a = *reinterpret_cast<const float4 *>(&sA[buf][k][ty * 4]);
            float4 b = *reinterpret_cast<const float4 *>(&sB[buf][k][tx * 4]);
            float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (more) commit(buf ^ 1);
        __syncthreads();
    }
    float *pz = part ? part + (int64_t)blockIdx.z * N * K : nullptr;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int64_t r = t0 + ty * 4 + i, c = u0 + tx * 4 + j;
            if (r < out_rows && c < out_cols) simt_store<MODE>(out, pz, bias, r, c, out_cols, acc[i][j]);
        }
}

} // namespace lnl

#endif
