/* The weight gradient from the raw x, bf16, f16 and float32: dW = dy^T LN(x) without LN(x)
 * in memory.
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
 * exactly what the GEMM multiplied. bench/dw_from_x_numerics.py models the GEMM as exact
 * bf16 products added in float32 in row order (M = 32768, K = 64, rows of spread 1): dW's
 * error is 1.4-1.6e-3 for row means 0 to 512 (the ln_out way: 1.6-1.8e-3) and 0.105 at
 * 1e3, where a bf16 row is a few steps of 4 wide and its rstd large. So rows beyond
 * FOLD_MAX_MEAN_RSTD (64, the forward's limit, with that margin for the tensor cores'
 * own accumulation, which this model does not have) set a flag, and then
 *  - the fused dW kernel (fused_backward.cu: LN(x) rebuilt while loading it) runs and
 *    writes float32 partials over G's memory, and
 *  - dw_finish sums those partials instead of applying the formula.
 * Without such a row the fused kernel returns at once. Everything is decided on the
 * device, so the host never waits for the flag.
 *
 * f16 (session 41): rstd * dy can leave f16's range (rstd up to 1/sqrt(eps), so a row of
 * tiny spread takes a gradient of 300 past 65504), and a small gradient falls into f16's
 * subnormals; bf16 has float32's exponent range. So f16's dy' is T(2^e rstd dy), one
 * power of two for the whole call chosen from max |rstd dy| (taken by the dx epilogue's
 * pass over dy and y where that runs, else by dy_absmax_kernel, a pass over dy before the
 * prep; the exponent in dw_scale.cuh), which G and u then carry:
 * dW = gamma * (G - u) 2^-e + beta * v, exact in the scaling. Until then f16 rebuilt LN(x)
 * for cuBLAS at every N, moving M x K twice where this moves M x N. f16's limit on
 * |mean| * rstd is 16 (64 in sessions 42-51; dw_max_mean_rstd has why).
 *
 * float32 (session 16; the figures in cuda_backend.cu): dy' = rstd * dy unrounded
 * and G from cuBLAS's true-fp32 GEMM. The cancellation is float32's, as in the forward's
 * epilogue form (f32_fold.cu). bench/dw_from_x_numerics_f32.py (CPU, float32 matmul, rows
 * of spread 2) puts dW's error at 3.4e-7 |mean| rstd for any shape: 6.2e-7 at a ratio of
 * 1.5 against 3.6e-7 for LN(x) rebuilt, 5.5e-6 at 16, 1.1e-5 at 32. So float32 takes the
 * formula only up to F32_DW_MAX_MEAN_RSTD = 8 (2.8e-6; the forward's limit of 16 would
 * leave half of float32's 1e-5 bound); past it the SIMT dW kernel, with the row shift the
 * float32 backward always computes, redoes dW. */
#include "cuda_common.cuh"

namespace lnl {
namespace {

constexpr int PREP_UNROLL = 4, PREP_THREADS = 256, FINISH_THREADS = 256;

/* One row's V columns (16 bytes of dy): v += dy, p = T(rstd * dy * sc) (dy' as the GEMM
 * will read it), u += p * mean, in that order for every column. */
template <typename T, int V>
__device__ __forceinline__ uint4 prep_vec(uint4 w, float r, float mu, float sc, float *u,
                                          float *v) {
    T e[V], p[V];
    memcpy(e, &w, 16);
#pragma unroll
    for (int j = 0; j < V; j++) {
        const float d = to_f(e[j]);
        v[j] += d;
        p[j] = from_f<T>(r * d * sc); /* sc = 2^e (f16) or 1: exact */
        u[j] += to_f(p[j]) * mu;
    }
    uint4 o;
    memcpy(&o, p, 16);
    return o;
}

/* Block (bx, g) handles rows [g*R, (g+1)*R) of its column range, R = ceil(M / gridDim.y):
 * it writes dy' for them and one row of partial sums of u and v (row g of part_uv, {u, v}
 * pairs). A thread owns V adjacent columns (16-byte accesses when V = 16 / sizeof(T)); the block's
 * blockDim.y row lanes split the rows, lane l adding rows r0 + l, r0 + l + L, ... in
 * order, and the lanes' sums are added in lane order, so the partials depend only on
 * M, N and the grid. Lanes, not more blocks, give narrow problems their parallelism:
 * the first version ran one 32-thread block per 8 rows at N = 256 (4224 partial rows,
 * 30 us at 32768,4096,256 on the H200, ~1 TB/s), and its partials were a quarter of
 * dy's bytes.
 * A lane works through its rows PREP_UNROLL at a time with the next group's loads in
 * flight while it stores the current one, over a grid of one wave of resident blocks
 * (prep_grid). The blocks of column range 0 test their rows for the flag on the mean and
 * rstd they load anyway. Until session 35 those blocks first loaded every row's mean and
 * rstd for the test, a DRAM round trip before their first row of dy, and the grid
 * assumed 8 blocks an SM where the 16-bit kernel's 63 registers fit 4: two waves, each
 * block's rows one round of loads after that test. bf16 AUTO backward, kernel durations
 * (bench/cuda/timeline.py, H200, medians of 5 passes; session 35, call 1), before / after:
 * 32768,4096,256 19.2 / 12.4 us (32 MB moved); 16384,8192,1024 27.9 / 21.7 us (64 MB). */
template <typename T, int V>
__global__ void __launch_bounds__(PREP_THREADS)
dw_prep_kernel(const T *__restrict__ dy, const float *__restrict__ mean,
               const float *__restrict__ rstd, const unsigned *__restrict__ absmax,
               T *__restrict__ dyp, float2 *__restrict__ part_uv, int *__restrict__ off_centre,
               int64_t M, int64_t N) {
    __shared__ float2 lane_sum[PREP_THREADS * V]; /* [lane][j][column thread] */
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const float sc = absmax ? ldexpf(1.f, dw_scale_exp(absmax)) : 1.f;
    const int bx = blockDim.x, L = blockDim.y, tx = threadIdx.x, ly = threadIdx.y;
    const int64_t n0 = ((int64_t)blockIdx.x * bx + tx) * V;
    const int64_t R = (M + gridDim.y - 1) / gridDim.y;
    const int64_t r0 = blockIdx.y * R, r1 = min64(M, r0 + R);
    const bool test = blockIdx.x == 0; /* this block's rows' flag test */
    const float limit = dw_max_mean_rstd<T>();
    bool off = false;
    const int cols = n0 < N ? (int)min64(V, N - n0) : 0;
    float u[V], v[V];
#pragma unroll
    for (int j = 0; j < V; j++) u[j] = v[j] = 0.f;
    int64_t m = r0 + ly;
    if constexpr (V > 1) { /* N % V == 0: cols is V or 0 */
        if (cols == V) {
            constexpr int U = PREP_UNROLL;
            const int64_t step = (int64_t)U * L;
            uint4 w[U], wn[U];
            float r[U], rn[U], mu[U], mun[U];
            /* the group of rows m, m + L, ..., m + (U-1) L that lie before r1 */
            auto load = [&](int64_t g, uint4 (&ww)[U], float (&rr)[U], float (&mm)[U]) {
#pragma unroll
                for (int i = 0; i < U; i++) {
                    const int64_t row = g + (int64_t)i * L;
                    if (row < r1) {
                        ww[i] = __ldg(reinterpret_cast<const uint4 *>(dy + row * N + n0));
                        rr[i] = __ldg(rstd + row);
                        mm[i] = __ldg(mean + row);
                    }
                }
            };
            if (m < r1) load(m, w, r, mu);
            for (; m < r1; m += step) {
                if (m + step < r1) load(m + step, wn, rn, mun);
                /* rows in order: the same arithmetic and order whichever group a row is in */
#pragma unroll
                for (int i = 0; i < U; i++) {
                    const int64_t row = m + (int64_t)i * L;
                    if (row < r1) {
                        *reinterpret_cast<uint4 *>(dyp + row * N + n0) =
                            prep_vec<T, V>(w[i], r[i], mu[i], sc, u, v);
                        if (test) off |= off_centre_row(mu[i], r[i], limit);
                    }
                }
#pragma unroll
                for (int i = 0; i < U; i++) w[i] = wn[i], r[i] = rn[i], mu[i] = mun[i];
            }
        }
    }
    if (cols > 0)
        for (; m < r1; m += L) {
            const float r = rstd[m], mu = mean[m];
            if (test) off |= off_centre_row(mu, r, limit);
            for (int j = 0; j < cols; j++) {
                const float d = to_f(dy[m * N + n0 + j]);
                v[j] += d;
                const T p = from_f<T>(r * d * sc);
                u[j] += to_f(p) * mu;
                dyp[m * N + n0 + j] = p;
            }
        }
    /* one atomic a warp (a warp is one lane's 32 column threads: the block is 32 wide) */
    if (__any_sync(0xffffffffu, off) && tx == 0) atomicOr(off_centre, 1);
    if (L > 1) { /* lane 0 adds the other lanes' sums, in lane order */
#pragma unroll
        for (int j = 0; j < V; j++) lane_sum[(ly * V + j) * bx + tx] = make_float2(u[j], v[j]);
        __syncthreads();
        if (ly == 0)
            for (int l = 1; l < L; l++)
#pragma unroll
                for (int j = 0; j < V; j++) {
                    const float2 t = lane_sum[(l * V + j) * bx + tx];
                    u[j] += t.x, v[j] += t.y;
                }
    }
    if (ly == 0)
        for (int j = 0; j < cols; j++) part_uv[blockIdx.y * N + n0 + j] = make_float2(u[j], v[j]);
}

/* f16's scale: max over the call of |rstd[m] dy[m, n]| into *absmax (its float bits;
 * zeroed by the caller), where the dx epilogue's rows' pass does not take it on its way
 * (dx_epilogue_sm90.cu). Each thread takes 16-byte chunks of dy (V = 8 halves; V = 1 where
 * N % 8 or dy's alignment forbids) grid-strided, UNROLL chunks' loads in flight before it
 * reduces them: a chunk's largest |dy| on the f16 bits, times its row's rstd, then one
 * raise of the word a warp (dw_scale.cuh's helpers, shared with the rows' pass). */
template <int V>
__global__ void __launch_bounds__(256)
dy_absmax_kernel(const __half *__restrict__ dy, const float *__restrict__ rstd,
                 unsigned *__restrict__ absmax, int64_t M, int64_t N) {
    constexpr int UNROLL = 4;
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const unsigned short *d = reinterpret_cast<const unsigned short *>(dy);
    const int64_t chunks = M * N / V, stride = (int64_t)gridDim.x * blockDim.x;
    unsigned best = 0;
    for (int64_t c0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c0 < chunks;
         c0 += UNROLL * stride) {
        unsigned h[UNROLL];
        float r[UNROLL];
#pragma unroll
        for (int i = 0; i < UNROLL; i++) {
            const int64_t c = c0 + i * stride;
            h[i] = 0, r[i] = 0.f;
            if (c < chunks) {
                r[i] = __ldg(rstd + c * V / N);
                if constexpr (V == 8) {
                    const uint4 w = __ldg(reinterpret_cast<const uint4 *>(d) + c);
                    const unsigned ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        h[i] = max(h[i], f16_pair_abs_bits(ws[j]));
                } else {
                    h[i] = d[c] & 0x7fffu;
                }
            }
        }
#pragma unroll
        for (int i = 0; i < UNROLL; i++) {
            const unsigned a = absmax_word(h[i], r[i]);
            if (h[i]) best = max(best, a);
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_xor_sync(0xffffffffu, best, o));
    if (threadIdx.x % 32 == 0 && best != 0) raise_absmax(absmax, best);
}

/* u[n] and v[n] from their G partial rows, in two fixed-order steps. Block (bx, t)
 * owns SUM_COLS adjacent columns (coalesced rows of partials) and chunk t of the G
 * rows, which its SUM_LANES lanes split, lane j adding rows j, j + SUM_LANES, ... of
 * the chunk in order, then the lane sums in lane order; it writes uv[t][n] = {u, v}.
 * dw_finish adds the chunks t = 0 .. S-1 in order. The chunks spread the work over
 * the SMs where N is small: at 32768,4096,256 (then 4224 partial rows, 8 column
 * blocks) one chunk took 41 us on the H200, and the first version, one column per
 * block with strided loads inside dw_finish, 17 us. Runs with the flag set too: v is
 * dlinear_bias. */
constexpr int SUM_COLS = 32, SUM_LANES = 16;
__global__ void __launch_bounds__(SUM_COLS * SUM_LANES)
dw_sums_kernel(const float2 *__restrict__ part_uv, int64_t G, float2 *__restrict__ uv, int64_t N) {
    __shared__ float2 lane_sum[SUM_LANES][SUM_COLS + 1];
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const int64_t n = (int64_t)blockIdx.x * SUM_COLS + threadIdx.x;
    const int64_t C = (G + gridDim.y - 1) / gridDim.y;
    const int64_t g0 = blockIdx.y * C, g1 = min64(G, g0 + C);
    float2 acc = make_float2(0.f, 0.f);
    if (n < N)
        for (int64_t g = g0 + threadIdx.y; g < g1; g += SUM_LANES) {
            const float2 t = part_uv[g * N + n];
            acc.x += t.x, acc.y += t.y;
        }
    lane_sum[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && n < N) {
        float2 t = make_float2(0.f, 0.f);
#pragma unroll
        for (int i = 0; i < SUM_LANES; i++) t.x += lane_sum[i][threadIdx.x].x, t.y += lane_sum[i][threadIdx.x].y;
        uv[blockIdx.y * N + n] = t;
    }
}

/* Block (n, c) writes FINISH_ELEMS adjacent elements a thread of row n of dW, from
 * chunk c of the row: gamma * (G - u) + beta * v, or, with the flag set, the sum of the
 * fused kernel's float32 partials in split order (p_parts: partials of P = dy^T xhat, the
 * fused kernel run without gamma and beta, then gamma * P + beta * v). Block (n, 0) also
 * writes dlinear_bias[n] = v (when asked for): its column sums are v's, and, when uvn is
 * given, uvn[n] = {u, v} (for the dx epilogue's dgamma and dbeta, dx_epilogue_sm90.cu). VEC: K % 4 == 0 and
 * dW, gamma, beta aligned to 4 elements (16-byte float loads of G, 4-element loads and
 * stores of T: 8 bytes in bf16, 16 in float32). */
constexpr int FINISH_ELEMS = 4;
/* FINISH_ELEMS adjacent values of T as one 8- or 16-byte word */
template <typename T> struct quad_word { using type = uint2; };
template <> struct quad_word<float> { using type = uint4; };
template <typename T, bool VEC>
__global__ void __launch_bounds__(FINISH_THREADS)
dw_finish_kernel(const float *__restrict__ part, int splits, const float2 *__restrict__ uv,
                 int chunks, const T *__restrict__ gamma, const T *__restrict__ beta,
                 const int *__restrict__ off_centre, const unsigned *__restrict__ absmax,
                 T *__restrict__ dW, T *__restrict__ dbias, float2 *__restrict__ uvn,
                 bool p_parts, int64_t N, int64_t K) {
    using Q = typename quad_word<T>::type;
    static_assert(sizeof(Q) == FINISH_ELEMS * sizeof(T), "one word a thread's elements");
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const int64_t n = blockIdx.x;
    const int64_t k0 = ((int64_t)blockIdx.y * FINISH_THREADS + threadIdx.x) * FINISH_ELEMS;
    /* u and v: the chunks' sums in chunk order. Lane t loads chunk t and the lanes' values
     * are added in lane order, so the chunks' loads are in flight together: one at a
     * time, as each was added (until session 35), a thread waited on up to DW_SUM_CHUNKS
     * L2 round trips in a row (32 at 32768,4096,256). The order of additions is the
     * same. Before any thread returns: every lane takes part in the shuffles. */
    static_assert(DW_SUM_CHUNKS <= 32 && FINISH_THREADS % 32 == 0, "a chunk a lane");
    const int lane = threadIdx.x & 31;
    const float2 mine = lane < chunks ? uv[lane * N + n] : make_float2(0.f, 0.f);
    float u = 0.f, v = 0.f;
    for (int t = 0; t < chunks; t++) {
        u += __shfl_sync(0xffffffffu, mine.x, t);
        v += __shfl_sync(0xffffffffu, mine.y, t);
    }
    if (k0 >= K) return;
    const bool fallback = *off_centre != 0;
    if (dbias && k0 == 0) dbias[n] = from_f<T>(v);
    if (uvn && k0 == 0) uvn[n] = make_float2(u, v);
    const float *row = part + n * K;
    float r[FINISH_ELEMS] = {}, g[FINISH_ELEMS] = {}, b[FINISH_ELEMS] = {};
    const int cnt = (int)min64(FINISH_ELEMS, K - k0);
    if (fallback) {
        for (int z = 0; z < splits; z++) {
            const float *pz = row + (int64_t)z * N * K + k0;
            if (VEC) {
                const float4 t = *reinterpret_cast<const float4 *>(pz);
                r[0] += t.x, r[1] += t.y, r[2] += t.z, r[3] += t.w;
            } else {
                for (int j = 0; j < cnt; j++) r[j] += pz[j];
            }
        }
        if (p_parts) { /* r holds P: dW = gamma * P + beta * v */
            for (int j = 0; j < cnt; j++) {
                const float gj = gamma ? to_f(gamma[k0 + j]) : 1.f;
                const float bj = beta ? to_f(beta[k0 + j]) : 0.f;
                r[j] = gj * r[j] + bj * v;
            }
        }
    } else {
        if (VEC) {
            const float4 t = *reinterpret_cast<const float4 *>(row + k0);
            r[0] = t.x, r[1] = t.y, r[2] = t.z, r[3] = t.w;
            T gv[FINISH_ELEMS], bv[FINISH_ELEMS];
            if (gamma) {
                const Q w = __ldg(reinterpret_cast<const Q *>(gamma + k0));
                memcpy(gv, &w, sizeof(Q));
            }
            if (beta) {
                const Q w = __ldg(reinterpret_cast<const Q *>(beta + k0));
                memcpy(bv, &w, sizeof(Q));
            }
#pragma unroll
            for (int j = 0; j < FINISH_ELEMS; j++) {
                g[j] = gamma ? to_f(gv[j]) : 1.f;
                b[j] = beta ? to_f(bv[j]) : 0.f;
            }
        } else {
            for (int j = 0; j < cnt; j++) {
                r[j] = row[k0 + j];
                g[j] = gamma ? to_f(gamma[k0 + j]) : 1.f;
                b[j] = beta ? to_f(beta[k0 + j]) : 0.f;
            }
        }
        if (absmax) { /* f16: G and u carry 2^e */
            const float inv = ldexpf(1.f, -dw_scale_exp(absmax));
#pragma unroll
            for (int j = 0; j < FINISH_ELEMS; j++) r[j] = g[j] * ((r[j] - u) * inv) + b[j] * v;
        } else {
#pragma unroll
            for (int j = 0; j < FINISH_ELEMS; j++) r[j] = g[j] * (r[j] - u) + b[j] * v;
        }
    }
    if (VEC) {
        T o[FINISH_ELEMS];
#pragma unroll
        for (int j = 0; j < FINISH_ELEMS; j++) o[j] = from_f<T>(r[j]);
        Q w;
        memcpy(&w, o, sizeof(Q));
        *reinterpret_cast<Q *>(dW + n * K + k0) = w;
    } else {
        for (int j = 0; j < cnt; j++) dW[n * K + k0 + j] = from_f<T>(r[j]);
    }
}

} // namespace

/* The prep kernel's grid: blocks of one warp of column threads (256 columns with 16-byte
 * accesses) by PREP_LANES row lanes, one wave of resident blocks (the occupancy query's
 * count an SM), each lane at least PREP_UNROLL rows where M allows. Each block writes one
 * row of partials, so fewer, taller blocks also mean fewer partial bytes. Before session
 * 15 a block was as wide as the columns (up to 256 threads) with 256 / width lanes, each
 * lane at least one row: at 4096 x 768 that was 1056 blocks of 2 lanes with 2 rows each,
 * whose 6.5 MB of partials outweighed dy's 6 MB, and at 8192 x 3072 528 partial rows,
 * 13 MB against dy's 50. bf16 FUSED backward ms, H200, two rounds, taller vs before
 * (session 16, docs/results/cuda/2026-12-02-session16/call2-f32-dw-x, its "off" build):
 * 4096,768,768 0.065-0.069 vs 0.087-0.090; 8192,1024,1024 0.113-0.114 vs 0.125. Sessions
 * 15-34 sized the grid for 8 blocks an SM, which the 16-bit kernel's registers never
 * allowed (4 fit). */
constexpr int PREP_COLS = 32, PREP_LANES = PREP_THREADS / PREP_COLS;
static_assert(PREP_COLS == 32, "dw_prep_kernel: a warp is one row lane's column threads");
/* the grid for V columns a thread, per_sm blocks resident an SM: column blocks x G
 * partial rows */
static void prep_grid(int64_t M, int64_t N, int64_t V, int per_sm, const device_info &d,
                      int64_t *col_blocks, int64_t *G) {
    const int64_t t = (N + V - 1) / V; /* column threads */
    *col_blocks = (t + PREP_COLS - 1) / PREP_COLS;
    const int64_t want = std::max<int64_t>(1, (int64_t)per_sm * d.sm_count / *col_blocks);
    const int64_t rows = (int64_t)PREP_LANES * PREP_UNROLL;
    *G = std::max<int64_t>(1, std::min<int64_t>({want, (M + rows - 1) / rows, 65535}));
}
/* blocks of the prep kernel (V columns a thread, or 1) resident an SM, asked once per device */
template <typename T> static int prep_per_sm(int64_t V, const device_info &d) {
    static std::atomic<int> occ_vec[64], occ_one[64];
    return V > 1 ? blocks_per_sm(occ_vec, dw_prep_kernel<T, vec_elems<T>()>, PREP_THREADS, d)
                 : blocks_per_sm(occ_one, dw_prep_kernel<T, 1>, PREP_THREADS, d);
}
static int prep_per_sm(lnl_dtype dt, int64_t V, const device_info &d) {
    return dt == LNL_DTYPE_F32   ? prep_per_sm<float>(V, d)
           : dt == LNL_DTYPE_F16 ? prep_per_sm<__half>(V, d)
                                 : prep_per_sm<__nv_bfloat16>(V, d);
}
/* 16 bytes of dy a thread (V columns) where N and the pointers allow, else one column */
static int prep_width(lnl_dtype dt) { return 16 / (int)lnl_dtype_size(dt); }
static int prep_elems(lnl_dtype dt, int64_t N, const void *dy, const void *dyp) {
    const int V = prep_width(dt);
    return N % V == 0 && aligned16(dy) && aligned16(dyp) ? V : 1;
}

int64_t dw_prep_rows(lnl_dtype dt, int64_t M, int64_t N, const device_info &d) {
    /* the larger of the two widths' counts: the workspace is sized before the pointers'
     * alignment is known */
    int64_t cb, g1, gv;
    const int64_t V = N % prep_width(dt) == 0 ? prep_width(dt) : 1;
    prep_grid(M, N, 1, prep_per_sm(dt, 1, d), d, &cb, &g1);
    prep_grid(M, N, V, prep_per_sm(dt, V, d), d, &cb, &gv);
    return std::max(g1, gv);
}

template <typename T>
static cudaError_t dw_prep_t(const T *dy, const float *mean, const float *rstd,
                             const unsigned *absmax, T *dyp, float2 *part_uv, int *off_centre,
                             int64_t M, int64_t N, int V, const device_info &d, cudaStream_t s,
                             int64_t *G) {
    constexpr int VV = vec_elems<T>();
    int64_t col_blocks;
    prep_grid(M, N, V, prep_per_sm<T>(V, d), d, &col_blocks, G);
    const dim3 grid((unsigned)col_blocks, (unsigned)*G), block(PREP_COLS, PREP_LANES);
    return launch_dependent(V > 1 ? dw_prep_kernel<T, VV> : dw_prep_kernel<T, 1>, grid, block, 0, s,
                            dy, mean, rstd, absmax, dyp, part_uv, off_centre, M, N);
}

cudaError_t launch_dy_absmax(const void *dy, const float *rstd, unsigned *absmax, int64_t M,
                             int64_t N, const device_info &d, cudaStream_t s) {
    /* one wave of 8 blocks of 256 threads an SM, fewer where dy has fewer chunks */
    const bool vec = N % 8 == 0 && aligned16(dy);
    const int64_t chunks = M * N / (vec ? 8 : 1);
    const int64_t blocks = std::max<int64_t>(
        1, std::min<int64_t>((chunks + 255) / 256, 8 * (int64_t)d.sm_count));
    return launch_dependent(vec ? dy_absmax_kernel<8> : dy_absmax_kernel<1>,
                            dim3((unsigned)blocks), dim3(256), 0, s, (const __half *)dy, rstd,
                            absmax, M, N);
}

cudaError_t launch_dw_prep(lnl_dtype dt, const void *dy, const float *mean, const float *rstd,
                           const unsigned *absmax, void *dyp, float2 *part_uv, int *off_centre,
                           int64_t M, int64_t N, const device_info &d, cudaStream_t s,
                           int64_t *G) {
    if (dt == LNL_DTYPE_F64) return cudaErrorInvalidValue;
    const int V = prep_elems(dt, N, dy, dyp);
    if (dt == LNL_DTYPE_F32)
        return dw_prep_t((const float *)dy, mean, rstd, nullptr, (float *)dyp, part_uv, off_centre,
                         M, N, V, d, s, G);
    if (dt == LNL_DTYPE_F16)
        return dw_prep_t((const __half *)dy, mean, rstd, absmax, (__half *)dyp, part_uv,
                         off_centre, M, N, V, d, s, G);
    return dw_prep_t((const __nv_bfloat16 *)dy, mean, rstd, nullptr, (__nv_bfloat16 *)dyp,
                     part_uv, off_centre, M, N, V, d, s, G);
}

template <typename T>
static cudaError_t dw_finish_t(const float *part, int splits, const float2 *uv, int chunks,
                               const T *gamma, const T *beta, const int *off_centre,
                               const unsigned *absmax, T *dW, T *dbias, float2 *uvn, bool p_parts,
                               int64_t N, int64_t K, cudaStream_t s) {
    const uintptr_t quad = FINISH_ELEMS * sizeof(T) - 1;
    const auto aq = [&](const void *p) { return ((uintptr_t)p & quad) == 0; };
    const bool vec = K % FINISH_ELEMS == 0 && aq(dW) && aq(gamma) && aq(beta);
    const int64_t per_block = (int64_t)FINISH_THREADS * FINISH_ELEMS;
    const dim3 grid((unsigned)N, (unsigned)((K + per_block - 1) / per_block));
    return launch_dependent(vec ? dw_finish_kernel<T, true> : dw_finish_kernel<T, false>, grid,
                            dim3(FINISH_THREADS), 0, s, part, splits, uv, chunks, gamma, beta,
                            off_centre, absmax, dW, dbias, uvn, p_parts, N, K);
}

cudaError_t launch_dw_finish(lnl_dtype dt, const float *part, int splits, const float2 *part_uv,
                             int64_t G, float2 *uv, const void *gamma, const void *beta,
                             const int *off_centre, const unsigned *absmax, void *dW,
                             void *dbias, int64_t N, int64_t K, const device_info &d,
                             cudaStream_t s, float2 *uvn, bool p_parts) {
    if (dt == LNL_DTYPE_F64) return cudaErrorInvalidValue;
    /* chunks of the partial rows: about two blocks an SM, at most DW_SUM_CHUNKS */
    const int64_t bx = (N + SUM_COLS - 1) / SUM_COLS;
    const int chunks = (int)std::max<int64_t>(
        1, std::min<int64_t>({DW_SUM_CHUNKS, G, (2 * (int64_t)d.sm_count + bx - 1) / bx}));
    cudaError_t e = launch_dependent(dw_sums_kernel, dim3((unsigned)bx, (unsigned)chunks),
                                     dim3(SUM_COLS, SUM_LANES), 0, s, part_uv, G, uv, N);
    if (e != cudaSuccess) return e;
    const float2 *cuv = uv;
    if (dt == LNL_DTYPE_F32)
        return dw_finish_t(part, splits, cuv, chunks, (const float *)gamma, (const float *)beta,
                           off_centre, nullptr, (float *)dW, (float *)dbias, uvn, p_parts, N, K,
                           s);
    if (dt == LNL_DTYPE_F16)
        return dw_finish_t(part, splits, cuv, chunks, (const __half *)gamma, (const __half *)beta,
                           off_centre, absmax, (__half *)dW, (__half *)dbias, uvn, p_parts, N, K,
                           s);
    return dw_finish_t(part, splits, cuv, chunks, (const __nv_bfloat16 *)gamma,
                       (const __nv_bfloat16 *)beta, off_centre, nullptr, (__nv_bfloat16 *)dW,
                       (__nv_bfloat16 *)dbias, uvn, p_parts, N, K, s);
}

} // namespace lnl
