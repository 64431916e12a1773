/* LayerNorm backward from dxhat = dy @ W, plus the deterministic column
 * reductions (dln_weight, dln_bias, dlinear_bias): every block writes float32
 * partials for its own contiguous rows, and a second kernel sums the partials in
 * block order. No floating-point atomics, so repeated runs are bitwise equal. */
#include <atomic>
#include <type_traits>

#include "cuda_common.cuh"
#include "sm90_primitives.cuh"

/* -DLNL_LN_BWD_RING=D: the Hopper ring kernel keeps up to D rows ahead where it runs
 * (ring_depth); 0 or 1: the register kernel everywhere. */
#ifndef LNL_LN_BWD_RING
#define LNL_LN_BWD_RING 4
#endif
/* -DLNL_LN_BWD_MIN_ROWS=R: every LayerNorm-backward block takes at least R rows (fewer
 * blocks, so fewer rows of dgamma/dbeta partials to write and to add up). H200, bf16
 * 4096,768,768, kernel times without PDL (profile_cuda.py, session 10 call 1): R = 1 or 4
 * (1024 blocks) LayerNorm backward 8.7 us + ordered reduction 3.8 us; R = 8 (512 blocks)
 * 8.8 + 2.7 us; R = 16 12.5 + 2.4 us. */
#ifndef LNL_LN_BWD_MIN_ROWS
#define LNL_LN_BWD_MIN_ROWS 8
#endif

namespace lnl {

/* V elements; 16-byte loads when V * sizeof(T) is a multiple of 16 (a float dxhat
 * rows take two per bf16 chunk). NC: through the read-only path (ld.global.nc), for data
 * no thread of the kernel writes. dxhat where LN(x) is written over it (the LNOUT
 * kernels, launch_ln_backward) is loaded with NC = false: the PTX memory model orders a
 * thread's coherent load before its later store to the same address, and says nothing
 * of .nc loads of data the kernel writes. */
template <typename T, int V, bool NC = true>
__device__ __forceinline__ void ldv(const T *p, T (&v)[V]) {
    if constexpr (V * sizeof(T) % 16 == 0) {
#pragma unroll
        for (int q = 0; q < (int)(V * sizeof(T) / 16); q++) {
            uint4 u;
            if constexpr (NC) u = __ldg(reinterpret_cast<const uint4 *>(p) + q);
            else u = reinterpret_cast<const uint4 *>(p)[q];
            memcpy(reinterpret_cast<char *>(v) + 16 * q, &u, 16);
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) {
            if constexpr (NC) v[j] = __ldg(p + j);
            else v[j] = p[j];
        }
    }
}

/* The same from shared memory (16-byte aligned, V * sizeof(T) a multiple of 16). */
template <typename T, int V> __device__ __forceinline__ void lds(const unsigned char *p, T (&v)[V]) {
#pragma unroll
    for (int q = 0; q < (int)(V * sizeof(T) / 16); q++) {
        const uint4 u = reinterpret_cast<const uint4 *>(p)[q];
        memcpy(reinterpret_cast<char *>(v) + 16 * q, &u, 16);
    }
}

/* Block b owns rows [b*R, min(M,(b+1)*R)). Element k of the partials is only ever
 * touched by the thread that owns k's chunk, so they need no barrier: they live in
 * shared memory when 2*K floats fit, else directly in the block's global slice. */
template <typename T, typename TD, int V, bool LNOUT>
__global__ void ln_bwd_kernel(const TD *dxhat, const T *__restrict__ x,
                              const float *__restrict__ mean, const float *__restrict__ rstd,
                              const float *__restrict__ shift,
                              const T *__restrict__ gamma, T *__restrict__ dx,
                              float *__restrict__ part_g, float *__restrict__ part_b, int64_t M,
                              int64_t K, int smem_parts, const T *__restrict__ beta,
                              T *ln_out) {
    extern __shared__ float sp[];
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    __shared__ float2 red[32];
    const int64_t nchunks = K / V;
    const int64_t R = (M + gridDim.x - 1) / gridDim.x;
    const int64_t r0 = blockIdx.x * R, r1 = min64(M, r0 + R);
    const bool parts = part_g != nullptr;
    float *pg = parts ? (smem_parts ? sp : part_g + blockIdx.x * K) : nullptr;
    float *pb = parts ? (smem_parts ? sp + K : part_b + blockIdx.x * K) : nullptr;
    if (parts)
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x)
#pragma unroll
            for (int j = 0; j < V; j++) pg[c * V + j] = pb[c * V + j] = 0.f;
    for (int64_t row = r0; row < r1; row++) {
        const TD *dr = dxhat + row * K;
        const T *xr = x + row * K;
        /* x - mean as (x - x0) - shift when the exact shift is known (F32) */
        const float x0 = shift ? to_f(xr[0]) : mean[row], dm = shift ? shift[row] : 0.f;
        const float rs = rstd[row];
        float s1 = 0.f, s2 = 0.f;
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x) {
            TD dv[V];
            T xv[V], gv[V];
            ldv<TD, V, !LNOUT>(dr + c * V, dv);
            ldv<T, V>(xr + c * V, xv);
            if (gamma) ldv<T, V>(gamma + c * V, gv);
#pragma unroll
            for (int j = 0; j < V; j++) {
                float dh = to_f(dv[j]), xh = ((to_f(xv[j]) - x0) - dm) * rs;
                float g = dh * (gamma ? to_f(gv[j]) : 1.f);
                s1 += g;
                s2 += g * xh;
                if (parts) {
                    pg[c * V + j] += dh * xh;
                    pb[c * V + j] += dh;
                }
            }
        }
        if (!dx && !ln_out) continue;
        float c1 = 0.f, c2 = 0.f;
        if (dx) {
            const float2 c12 = block_sum2(s1, s2, red);
            c1 = c12.x / (float)K, c2 = c12.y / (float)K;
        }
        /* second pass re-reads the row this block just read (L1/L2 hits) */
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x) {
            TD dv[V];
            T xv[V], gv[V], o[V];
            ldv<TD, V, !LNOUT>(dr + c * V, dv);
            ldv<T, V>(xr + c * V, xv);
            if (gamma) ldv<T, V>(gamma + c * V, gv);
            if (dx) {
#pragma unroll
                for (int j = 0; j < V; j++) {
                    float xh = ((to_f(xv[j]) - x0) - dm) * rs;
                    float g = to_f(dv[j]) * (gamma ? to_f(gv[j]) : 1.f);
                    o[j] = from_f<T>(rs * (g - c1 - xh * c2));
                }
                store_vec<T, V>(dx + row * K + c * V, o);
            }
            if (ln_out) { /* LN(x) for the dW GEMM, as launch_ln_forward writes it */
                T bv[V];
                if (beta) ldv<T, V>(beta + c * V, bv);
                /* ln_value's arithmetic written out: through the helper, ptxas contracted
                 * this kernel's multiply-adds differently (its dx too), and this form is
                 * the one the H200 ran (session 28, call 4) */
#pragma unroll
                for (int j = 0; j < V; j++)
                    o[j] = from_f<T>(((to_f(xv[j]) - x0) - dm) * rs * (gamma ? to_f(gv[j]) : 1.f) +
                                     (beta ? to_f(bv[j]) : 0.f));
                store_vec<T, V>(ln_out + row * K + c * V, o);
            }
        }
    }
    if (parts && smem_parts)
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x)
#pragma unroll
            for (int j = 0; j < V; j++) {
                part_g[blockIdx.x * K + c * V + j] = pg[c * V + j];
                part_b[blockIdx.x * K + c * V + j] = pb[c * V + j];
            }
}

/* The per-row arithmetic of the register and ring kernels, shared so that both give
 * bitwise the same results: a thread holds chunks threadIdx.x + i * blockDim.x
 * (i < CPT) of its row's dxhat (dv) and x (xv). row_sums adds the thread's share of
 * sum(g) and sum(g * xhat) (g = dxhat * gamma) and its dgamma/dbeta partials, and keeps
 * xhat (xh) for row_dx and row_ln; row_dx writes the thread's chunks of dx from the
 * block's totals c1, c2 (divided by K).
 *
 * These kernels are bound by instruction issue at K <= 1024, not by memory (ncu, bf16
 * 8192,1024,1024: SM throughput 63% against DRAM 50%, a third of the stalls "not
 * selected", and the kernel's time scales with the SM clock; session 32, call 1). So:
 * - xhat is formed once an element and kept in registers. Recomputed in row_dx and row_ln
 *   from the same source expression, ptxas did it three times (unpack, two subtractions,
 *   a multiply): row_sums' copy sits under the chunk guard `c < nchunks`, which does not
 *   dominate the others, so they could not reuse it.
 * - The exact row shift exists for float32 only (launch_ln_forward); 16-bit rows compute
 *   (x - mean) * rstd, bitwise what ((x - mean) - 0) * rstd gave, without the second
 *   subtraction.
 * - The row's two block sums take one barrier (row_sum2), and their means are taken
 *   times 1/K (the kernels' inv_k), not by two divisions.
 * H200, bf16, this kernel's time without PDL (torch.profiler, AUTO; session 32, calls 2
 * and 3; the first two changes gave gradients bitwise equal to the kernel before them,
 * the multiply by 1/K was measured alone): 4096,768,768 10.3 -> 9.5 -> 8.9 us (1/K);
 * 8192,1024,1024 22.7 -> 20.6 -> 20.2; 8192,4096,4096 79.0 -> 74.2; 32768,4096,256
 * 230.8 -> 217.9 -> 212.1. */
template <typename T>
__device__ __forceinline__ float xhat_of(float x, float x0, float dm, float rs) {
    if constexpr (sizeof(T) == 4) return ((x - x0) - dm) * rs;
    else return (x - x0) * rs;
}
template <typename T, typename TD, int V, int CPT>
__device__ __forceinline__ void row_sums(const TD (&dv)[CPT][V], const T (&xv)[CPT][V],
                                         const float (&gam)[CPT][V], float x0, float dm, float rs,
                                         int64_t nchunks, bool parts, float &s1, float &s2,
                                         float (&pg)[CPT][V], float (&pb)[CPT][V],
                                         float (&xh)[CPT][V]) {
#pragma unroll
    for (int i = 0; i < CPT; i++)
        if (threadIdx.x + (int64_t)i * blockDim.x < nchunks)
#pragma unroll
            for (int j = 0; j < V; j++) {
                const float dh = to_f(dv[i][j]);
                xh[i][j] = xhat_of<T>(to_f(xv[i][j]), x0, dm, rs);
                const float g = dh * gam[i][j];
                s1 += g;
                s2 += g * xh[i][j];
                if (parts) {
                    pg[i][j] += dh * xh[i][j];
                    pb[i][j] += dh;
                }
            }
}
template <typename T, typename TD, int V, int CPT>
__device__ __forceinline__ void row_dx(const TD (&dv)[CPT][V], const float (&xh)[CPT][V],
                                       const float (&gam)[CPT][V], float rs, float c1, float c2,
                                       int64_t nchunks, T *__restrict__ dxr) {
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
        if (c >= nchunks) continue;
        T o[V];
#pragma unroll
        for (int j = 0; j < V; j++) o[j] = from_f<T>(rs * (to_f(dv[i][j]) * gam[i][j] - c1 - xh[i][j] * c2));
        store_vec<T, V>(dxr + c * V, o);
    }
}
/* The row's two totals over the block, in a fixed order (deterministic), for little
 * issue: each warp sums its lanes by the shuffle tree and lane 0 stores the warp's pair;
 * after one barrier every thread adds the warps' totals: with nw <= 4 warps from two
 * 16-byte loads, (t0 + t2) + (t1 + t3) with zeros for the missing (red's slots 0-3 start
 * at zero), else by the shuffle tree across the lanes. red has two halves used by
 * alternate rows (parity): a warp can store its totals of row r + 1 while a slower warp
 * still reads row r's, and cannot store row r + 2's before every warp has passed row
 * r + 1's barrier, after its reads of row r; so one barrier a row, not block_sum2's two.
 * (Both sums in one butterfly, the lower half-warp keeping one and the upper the other,
 * halves the shuffles and measured no faster: variant B27, reverted in session 33.) */
__device__ __forceinline__ float2 row_sum2(float a, float b, float2 (*red)[32], int parity) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    const float2 v = warp_sum(make_float2(a, b));
    if (lane == 0) red[parity][warp] = v;
    __syncthreads();
    if (nw <= 4) {
        const float4 t01 = reinterpret_cast<const float4 *>(red[parity])[0];
        const float4 t23 = reinterpret_cast<const float4 *>(red[parity])[1];
        return make_float2((t01.x + t23.x) + (t01.z + t23.z), (t01.y + t23.y) + (t01.w + t23.w));
    }
    return warp_sum(lane < nw ? red[parity][lane] : make_float2(0.f, 0.f));
}
/* red's slots nw..3 of both halves zeroed, for row_sum2 at nw < 4: no warp writes
 * them, and the first row's barrier orders these stores before any read. */
__device__ __forceinline__ void row_sum2_init(float2 (*red)[32]) {
    const int nw = (blockDim.x + 31) >> 5, slot = threadIdx.x & 3;
    if (threadIdx.x < 8 && slot >= nw) red[threadIdx.x >> 2][slot] = make_float2(0.f, 0.f);
}
/* Registers: row_sums' xhat (8 floats a chunk) pushed the 16-bit kernels with one
 * chunk a thread from 57-60 registers to 79-83, which fits 1 block of 512 threads an SM
 * instead of 2 (and 6 of 128 instead of 8). Capped at 64 (2 blocks of 512) they compile
 * without spills and keep their occupancy, grid and partials' layout. The kernels with a
 * float32 dxhat (78 registers before) would spill under the cap and keep none. */
template <typename T, typename TD, int CPT>
constexpr int LN_BWD_MIN_BLOCKS = CPT == 1 && sizeof(TD) == sizeof(T) ? 2 : 1;

/* LN(x) = xhat * gamma + beta for the thread's chunks of the row, as launch_ln_forward
 * writes it: the dW GEMM's operand in a backward without ln_out, written here beside dx
 * while the row of x is in registers (the LayerNorm pass that wrote it before read x
 * once more, and was one more launch). xh is row_sums' xhat, gamma is gam (1 without
 * it), beta read from L1: xhat * gamma + beta in one fused multiply-add, as ln_value
 * takes it (bitwise this kernel's LN(x) before xhat was kept).
 * Since session 34 the backward passes ln_out = dxhat (its workspace holds one M x K
 * region, not two): every kernel here writes a row's LN(x) only over chunks of that row
 * its own thread has loaded before, the LNOUT kernels load dxhat coherently (ldv's NC),
 * and dxhat and ln_out are not __restrict__ (the compiler keeps each load before the
 * store that may alias it). The ring kernel reads dxhat through the copy engine, a row
 * complete (its mbarrier) before any thread stores over it. The kernels without ln_out
 * compile to the same SASS as before, but for the unaligned fallback (V = 1). */
template <typename T, int V, int CPT>
__device__ __forceinline__ void row_ln(const float (&xh)[CPT][V], const float (&gam)[CPT][V],
                                       const T *__restrict__ beta, int64_t nchunks, T *lnr) {
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
        if (c >= nchunks) continue;
        T bv[V], o[V];
        if (beta) ldv<T, V>(beta + c * V, bv);
#pragma unroll
        for (int j = 0; j < V; j++)
            o[j] = from_f<T>(xh[i][j] * gam[i][j] + (beta ? to_f(bv[j]) : 0.f));
        store_vec<T, V>(lnr + c * V, o);
    }
}
/* The thread's gamma (1 without it) and zeroed partials; and at the end, the partials
 * into the block's slice of part_g / part_b. */
template <typename T, int V, int CPT>
__device__ __forceinline__ void row_setup(const T *__restrict__ gamma, int64_t nchunks,
                                          float (&gam)[CPT][V], float (&pg)[CPT][V],
                                          float (&pb)[CPT][V]) {
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
        T gv[V];
        if (gamma && c < nchunks) ldv<T, V>(gamma + c * V, gv);
#pragma unroll
        for (int j = 0; j < V; j++) {
            gam[i][j] = gamma && c < nchunks ? to_f(gv[j]) : 1.f;
            pg[i][j] = pb[i][j] = 0.f;
        }
    }
}
template <int V, int CPT>
__device__ __forceinline__ void store_partials(const float (&pg)[CPT][V], const float (&pb)[CPT][V],
                                               int64_t nchunks, int64_t K, float *__restrict__ part_g,
                                               float *__restrict__ part_b) {
    static_assert(V % 4 == 0, "partials are stored as float4");
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
        if (c >= nchunks) continue;
        /* 16-byte stores: a thread's V partials are adjacent. Stored one float at a time,
         * each warp-wide store touched 32 sectors for 4 bytes of each, all blocks at once
         * at the very end (ncu, bf16 8192,4096: 22% of the kernel's sectors excess, all
         * here). H200, bf16, this kernel's time without PDL (torch.profiler, AUTO, session
         * 9 call 5, docs/results/cuda/2026-12-01-session9/call5): 4096,768,768 0.0235 vs
         * 0.0104 ms, 8192,4096,4096 0.088 vs 0.074, 32768,4096,256 0.286 vs 0.273 (in a
         * build with other changes, since dropped). part_g/part_b are 16-byte aligned
         * (ln_backward_t checks) and K is a multiple of V where these kernels run. */
        float4 *g4 = reinterpret_cast<float4 *>(part_g + blockIdx.x * K + c * V);
        float4 *b4 = reinterpret_cast<float4 *>(part_b + blockIdx.x * K + c * V);
#pragma unroll
        for (int q = 0; q < V / 4; q++) {
            g4[q] = make_float4(pg[i][4 * q], pg[i][4 * q + 1], pg[i][4 * q + 2], pg[i][4 * q + 3]);
            b4[q] = make_float4(pb[i][4 * q], pb[i][4 * q + 1], pb[i][4 * q + 2], pb[i][4 * q + 3]);
        }
    }
}

/* The common case: each thread keeps CPT chunks of its row (dxhat and x) in
 * registers, so dx needs no second read, and its gamma and its dgamma/dbeta
 * partials stay in registers across all the block's rows. */
template <typename T, typename TD, int V, int CPT, bool LNOUT>
__global__ void __launch_bounds__(512, LN_BWD_MIN_BLOCKS<T, TD, CPT>) ln_bwd_reg_kernel(const TD *dxhat, const T *__restrict__ x,
                                  const float *__restrict__ mean, const float *__restrict__ rstd,
                                  const float *__restrict__ shift, const T *__restrict__ gamma,
                                  T *__restrict__ dx, float *__restrict__ part_g,
                                  float *__restrict__ part_b, int64_t M, int64_t K,
                                  const T *__restrict__ beta, T *ln_out) {
    __shared__ __align__(16) float2 red[2][32]; /* row_sum2's */
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const int64_t nchunks = K / V;
    const int64_t R = (M + gridDim.x - 1) / gridDim.x;
    const int64_t r0 = blockIdx.x * R, r1 = min64(M, r0 + R);
    const bool parts = part_g != nullptr;
    float gam[CPT][V], pg[CPT][V], pb[CPT][V];
    row_setup<T, V, CPT>(gamma, nchunks, gam, pg, pb);
    row_sum2_init(red);
    /* the means of the row's sums: times 1/K, not two IEEE divisions a row (~20
     * instructions of ~250; within 1 ulp, exact where K is a power of two) */
    const float inv_k = 1.f / (float)K;
    /* Row `row` is worked on while row + 1 is already being loaded: one row in flight
     * per thread left the kernel latency-bound (about 2.2 TB/s at K = 4096 bf16 on
     * the H200), since each row ends in two block-wide reductions. Three rows ahead
     * through a cp.async ring in shared memory instead (each thread copying and
     * reading its own chunks, no register cost) was slower: 0.359 vs 0.243 ms at
     * 32768,4096 and 0.109 vs 0.078 at 8192,4096 (H200, session 6, call 2). On Hopper
     * ln_bwd_ring_kernel (below) keeps more rows in flight through the copy engine.
     * Rows 2..P ahead prefetched into L2 by the copy engine (thread 0, one
     * cp.async.bulk.prefetch.L2 a row of dxhat and of x) were slower too: AUTO backward
     * ms, bf16, medians of three rounds in turn, none / P = 3 / P = 6: 32768,4096,256
     * 0.5108 / 0.5403 / 0.5964; 65536,1024,256 0.2759 / 0.2913 / 0.3227; 8192,1024,1024
     * 0.0907 / 0.0932 / 0.0972 (session 38, call 3; docs/results/cuda/2026-12-04-session38,
     * with the patch). */
    TD dv[CPT][V], ndv[CPT][V];
    T xv[CPT][V], nxv[CPT][V];
    auto load_row = [&](int64_t row, TD (&d)[CPT][V], T (&xx)[CPT][V]) {
#pragma unroll
        for (int i = 0; i < CPT; i++) {
            const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
            if (c < nchunks) {
                ldv<TD, V, !LNOUT>(dxhat + row * K + c * V, d[i]);
                ldv<T, V>(x + row * K + c * V, xx[i]);
            }
        }
    };
    if (r0 < r1) load_row(r0, dv, xv);
    for (int64_t row = r0; row < r1; row++) {
        if (row + 1 < r1) load_row(row + 1, ndv, nxv);
        const bool sh = sizeof(T) == 4 && shift; /* the exact shift: float32 only */
        const float x0 = sh ? to_f(x[row * K]) : mean[row], dm = sh ? shift[row] : 0.f;
        const float rs = rstd[row];
        float s1 = 0.f, s2 = 0.f, xh[CPT][V];
        row_sums<T, TD, V, CPT>(dv, xv, gam, x0, dm, rs, nchunks, parts, s1, s2, pg, pb, xh);
        if (dx) {
            const float2 c12 = row_sum2(s1, s2, red, (int)((row - r0) & 1));
            row_dx<T, TD, V, CPT>(dv, xh, gam, rs, c12.x * inv_k, c12.y * inv_k, nchunks, dx + row * K);
        }
        if constexpr (LNOUT) row_ln<T, V, CPT>(xh, gam, beta, nchunks, ln_out + row * K);
#pragma unroll
        for (int i = 0; i < CPT; i++)
#pragma unroll
            for (int j = 0; j < V; j++) {
                dv[i][j] = ndv[i][j];
                xv[i][j] = nxv[i][j];
            }
    }
    if (parts) store_partials<V, CPT>(pg, pb, nchunks, K, part_g, part_b);
}

/* Hopper: the same rows, arithmetic and partials as ln_bwd_reg_kernel (so bitwise the
 * same results), but the rows reach shared memory through the copy engine, `depth`
 * rows ahead: one thread issues two bulk copies a row (dxhat's and x's row, contiguous
 * in memory) into a ring of `depth` slots, each completing on its own mbarrier, and
 * every thread reads its chunks from the slot into registers. The register kernel keeps
 * one row ahead in registers; where only one of its blocks fits an SM (K = 8192 bf16:
 * 32 KB a row), that is too few bytes in flight for the H200's bandwidth (Little's law:
 * ~4 TB/s x ~1.5 us / 132 SMs is ~45 KB an SM), and more rows in registers would not
 * fit. With two blocks an SM (K = 4096 bf16) the ring gained nothing (ring_depth has
 * the figures), so it runs only where one block fits. A slot is refilled once
 * every thread has read it: after the row's block reduction, whose barrier all threads
 * pass after their reads (a plain __syncthreads without dx). */
constexpr int RING_MAX_DEPTH = 8;
template <typename T, typename TD, int V, int CPT, bool LNOUT>
__global__ void __launch_bounds__(512, LN_BWD_MIN_BLOCKS<T, TD, CPT>) ln_bwd_ring_kernel(const TD *dxhat, const T *__restrict__ x,
                                   const float *__restrict__ mean, const float *__restrict__ rstd,
                                   const float *__restrict__ shift, const T *__restrict__ gamma,
                                   T *__restrict__ dx, float *__restrict__ part_g,
                                   float *__restrict__ part_b, int64_t M, int64_t K, int depth,
                                   const T *__restrict__ beta, T *ln_out) {
#if LNL_SM90A
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(16) float2 red[2][32]; /* row_sum2's */
    __shared__ uint64_t full[RING_MAX_DEPTH];
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const int64_t nchunks = K / V;
    const int64_t R = (M + gridDim.x - 1) / gridDim.x;
    const int64_t r0 = blockIdx.x * R, r1 = min64(M, r0 + R);
    const bool parts = part_g != nullptr;
    const uint32_t dbytes = (uint32_t)(K * sizeof(TD)), xbytes = (uint32_t)(K * sizeof(T));
    const uint32_t xoff = (dbytes + 127) / 128 * 128, slot_bytes = xoff + (xbytes + 127) / 128 * 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < depth; s++) mbar_init(&full[s], 1);
        mbar_init_fence();
    }
    __syncthreads();
    auto issue = [&](int64_t row) { /* thread 0: row into its slot */
        const int s = (int)((row - r0) % depth);
        unsigned char *slot = ring + (size_t)s * slot_bytes;
        mbar_arrive_expect_tx(&full[s], dbytes + xbytes);
        bulk_load(slot, dxhat + row * K, dbytes, &full[s]);
        bulk_load(slot + xoff, x + row * K, xbytes, &full[s]);
    };
    if (threadIdx.x == 0)
        for (int64_t row = r0; row < r1 && row < r0 + depth; row++) issue(row);
    float gam[CPT][V], pg[CPT][V], pb[CPT][V];
    row_setup<T, V, CPT>(gamma, nchunks, gam, pg, pb);
    row_sum2_init(red);
    /* the means of the row's sums: times 1/K, not two IEEE divisions a row (~20
     * instructions of ~250; within 1 ulp, exact where K is a power of two) */
    const float inv_k = 1.f / (float)K;
    for (int64_t row = r0; row < r1; row++) {
        const int64_t n = row - r0;
        const int s = (int)(n % depth);
        const unsigned char *slot = ring + (size_t)s * slot_bytes;
        mbar_wait(&full[s], (uint32_t)(n / depth) & 1);
        TD dv[CPT][V];
        T xv[CPT][V];
#pragma unroll
        for (int i = 0; i < CPT; i++) {
            const int64_t c = threadIdx.x + (int64_t)i * blockDim.x;
            if (c < nchunks) {
                lds<TD, V>(slot + c * V * sizeof(TD), dv[i]);
                lds<T, V>(slot + xoff + c * V * sizeof(T), xv[i]);
            }
        }
        const bool sh = sizeof(T) == 4 && shift; /* the exact shift: float32 only */
        const float x0 = sh ? to_f(*(const T *)(slot + xoff)) : mean[row];
        const float dm = sh ? shift[row] : 0.f;
        const float rs = rstd[row];
        float s1 = 0.f, s2 = 0.f, xh[CPT][V];
        row_sums<T, TD, V, CPT>(dv, xv, gam, x0, dm, rs, nchunks, parts, s1, s2, pg, pb, xh);
        float2 c12 = make_float2(0.f, 0.f);
        if (dx) c12 = row_sum2(s1, s2, red, (int)(n & 1));
        else __syncthreads();
        if (threadIdx.x == 0 && row + depth < r1) {
            fence_proxy_async(); /* the slot's reads (generic proxy) before the copy into it */
            issue(row + depth);
        }
        if (dx) row_dx<T, TD, V, CPT>(dv, xh, gam, rs, c12.x * inv_k, c12.y * inv_k, nchunks, dx + row * K);
        if constexpr (LNOUT) row_ln<T, V, CPT>(xh, gam, beta, nchunks, ln_out + row * K);
    }
    if (parts) store_partials<V, CPT>(pg, pb, nchunks, K, part_g, part_b);
#endif
}

/* The register kernel's launch for a row of K elements: CPT chunks of V per thread,
 * `threads` threads; use = false when the row does not fit (the generic kernel runs). */
struct reg_plan {
    bool use;
    int cpt, threads;
};
template <typename T> static reg_plan plan_reg(int64_t K) {
    constexpr int V = vec_elems<T>();
    const int64_t nchunks = K / V;
    if (K % V != 0 || nchunks > 1024) return {false, 0, 0}; /* <= 512 threads of <= 128 registers */
    /* One chunk per thread up to 512 threads: CPT = 2 needs 114 registers (2 blocks of
     * 256 threads per SM), CPT = 1 58 (2 blocks of 512), and the doubled occupancy keeps
     * more rows in flight. H200, bf16 K = 4096 (512 chunks): 92 -> 79 us at M = 8192,
     * 292 -> 243 us at M = 32768 (profile_cuda.py, 2026-12-01). Session 35 (call 3, an
     * override of 8b3cb4a since removed) timed two chunks a thread again at every K, on
     * the leaner kernel of sessions 32-33: lnl-bench AUTO backward ms, three rounds in turn,
     * one / two chunks: bf16 32768,4096,256 0.4980 / 0.4961 / 0.4929 vs 0.4904 / 0.5018 /
     * 0.4898; 8192,4096,4096 0.8781 / 0.8785 / 0.8849 vs 0.8727 / 0.8980 / 0.8738;
     * 8192,1024,1024 0.0930 / 0.0955 / 0.0935 vs 0.0929 / 0.0977 / 0.0930; 4096,768,768
     * 0.0485 / 0.0473 / 0.0473 vs 0.0453 / 0.0489 / 0.0501; f16 32768,4096,256 (LN(x)
     * written too) 0.5663 / 0.5693 vs 0.6033 / 0.6119. Within the noise in bf16, 6% slower
     * in f16: one chunk stays. */
    const int cpt = nchunks <= 512 ? 1 : 2;
    return {true, cpt, (int)(((nchunks + cpt - 1) / cpt + 31) / 32 * 32)};
}
template <typename T, typename TD, bool LNOUT = false> static auto reg_kernel(int cpt) {
    constexpr int V = vec_elems<T>();
    return cpt == 1 ? ln_bwd_reg_kernel<T, TD, V, 1, LNOUT> : ln_bwd_reg_kernel<T, TD, V, 2, LNOUT>;
}
template <typename T, typename TD, bool LNOUT = false> static auto ring_kernel(int cpt) {
    constexpr int V = vec_elems<T>();
    return cpt == 1 ? ln_bwd_ring_kernel<T, TD, V, 1, LNOUT> : ln_bwd_ring_kernel<T, TD, V, 2, LNOUT>;
}
/* One slot of the ring: a row of dxhat and one of x, each padded to 128 bytes. */
template <typename T, typename TD> static size_t ring_slot_bytes(int64_t K) {
    return align_up((size_t)K * sizeof(TD), 128) + align_up((size_t)K * sizeof(T), 128);
}
/* The ring's depth where the register kernel's plan runs `per_sm` blocks an SM, 0 where
 * the register kernel runs. The ring runs only where the register kernel fits one block
 * an SM (its rows of more than 512 chunks, two chunks a thread: K > 4096 in bf16/f16,
 * K > 2048 in f32), and then with as many slots (up to LNL_LN_BWD_RING) as an SM's
 * shared memory holds, so it keeps the register kernel's grid and partials.
 * H200, bf16, AUTO's backward in lnl-bench, two rounds each in turn, ring (depth 4 at
 * every K) against the register kernel (session 8, call 2, docs/results/cuda/
 * 2026-12-01-session8/call2): 16384,8192,1024 (one block an SM) 1.133 / 1.135 vs
 * 1.174 / 1.170 ms; with two blocks an SM no gain: 8192,4096,4096 0.897 / 0.889 vs
 * 0.894 / 0.892, 32768,4096,256 0.557 / 0.561 vs 0.535 / 0.548, 8192,1024,1024
 * 0.117 / 0.114 vs 0.114 / 0.114. Gradients bitwise equal in every case of
 * bench/cuda/ln_backward_ab.py at depths 2, 4 and 8. 0 also off Hopper's sm_90a code.
 * Session 35 (call 1, docs/results/cuda/2026-12-03-session35) timed it again at two blocks
 * an SM, after sessions 32-33 had cut the kernels' instructions, through an override
 * (LNL_CUDA_LN_BWD_RING_PER_SM=2 in c7f92b8, since removed) against the register kernel
 * in one build (lnl-bench AUTO backward ms, three rounds in turn): bf16 32768,4096,256
 * 0.5315 / 0.5141 / 0.5149 vs 0.5014 / 0.5028 / 0.4928; 8192,4096,4096 0.8987 / 0.8845 /
 * 0.9008 vs 0.8843 / 0.8886 / 0.8936; f16 32768,4096,256 0.5846 / 0.5954 vs 0.5778 /
 * 0.5757. Still no gain; the gradients were bitwise the register kernel's in every case
 * of ln_backward_ab.py. */
template <typename T, typename TD> static int ring_depth(int64_t K, int per_sm, const device_info &d) {
    if (LNL_LN_BWD_RING < 2 || d.major != 9 || d.minor != 0 || per_sm != 1) return 0;
    /* an SM's shared memory: a block may opt in to all of it but the 1 KB the SM
     * reserves for each block; the kernel's static part (red, barriers) is under 512 B */
    const size_t per_block = (d.max_smem_optin + 1024) / (size_t)per_sm;
    if (per_block < 1024 + 512) return 0;
    const size_t slots = (per_block - 1024 - 512) / ring_slot_bytes<T, TD>(K);
    const int depth = (int)std::min<size_t>({slots, (size_t)LNL_LN_BWD_RING, (size_t)RING_MAX_DEPTH});
    return depth >= 2 ? depth : 0;
}

/* One block per resident slot, so the whole grid runs in a single wave: with a fixed
 * 4 blocks per SM and only 2-3 of them resident (register-bound), a second, mostly
 * empty wave cost a third of the kernel's time. The grid fixes the partials' layout
 * and the summation order, so it depends only on the device, dtype, M and K.
 * The occupancy query costs host time on every backward call, and its answer depends
 * only on the device and the kernel's launch (dtype, dxhat dtype, CPT, threads): it is
 * kept per device in occ_cache, 0 meaning not asked yet. Racing callers store the same
 * value, so relaxed atomics suffice. A failed query is not kept. */
constexpr int OCC_DEVICES = 64, OCC_THREAD_STEPS = 512 / 32;
static std::atomic<int> occ_cache[OCC_DEVICES][3][2][2][OCC_THREAD_STEPS];

/* The number of row chunks (blocks, and rows of partials) for M rows split into at most
 * `want` chunks of at least `min_rows` rows each: G = ceil(M / R), R = ceil(M / want).
 * Asking for G = want blocks outright left trailing blocks without a row that still
 * wrote a row of zero partials (at 4096 rows and 1320 blocks, R = 4 and 296 of them:
 * 1.8 MB of zeros written and read again at K = 768). */
static int64_t chunks_for(int64_t M, int64_t want, int64_t min_rows) {
    want = std::max<int64_t>(1, std::min<int64_t>(want, (M + min_rows - 1) / min_rows));
    const int64_t R = std::max<int64_t>(1, (M + want - 1) / want);
    return std::max<int64_t>(1, (M + R - 1) / R);
}
template <typename T, typename TD> static int blocks_per_sm(int64_t K, int device) {
    const reg_plan rp = plan_reg<T>(K);
    if (!rp.use) return 4;
    constexpr int dt_slot = sizeof(T) == 4 ? 0 : std::is_same<T, __half>::value ? 2 : 1;
    constexpr int td_slot = std::is_same<TD, float>::value ? 1 : 0;
    std::atomic<int> *slot = nullptr;
    if (device >= 0 && device < OCC_DEVICES && rp.threads >= 32 && rp.threads <= 512)
        slot = &occ_cache[device][dt_slot][td_slot][rp.cpt - 1][rp.threads / 32 - 1];
    int occ = slot ? slot->load(std::memory_order_relaxed) : 0;
    if (occ > 0) return occ;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, reg_kernel<T, TD>(rp.cpt), rp.threads, 0) !=
            cudaSuccess ||
        occ <= 0) {
        (void)cudaGetLastError();
        return 4;
    }
    if (slot) slot->store(occ, std::memory_order_relaxed);
    return occ;
}
int64_t ln_bwd_grid(lnl_dtype dt, int64_t M, int64_t K, const device_info &d) {
    int per_sm = 4;
    const bool f32 = dxhat_f32(dt, K);
    LNL_DISPATCH(dt, T,
                 per_sm = f32 ? blocks_per_sm<T, float>(K, d.device) : blocks_per_sm<T, T>(K, d.device));
    return chunks_for(M, (int64_t)d.sm_count * per_sm, LNL_LN_BWD_MIN_ROWS);
}

template <typename T, typename TD>
static cudaError_t ln_backward_t(const TD *dxhat, const T *x, const float *mean, const float *rstd,
                                 const float *shift, const T *gamma, T *dx, float *part_g,
                                 float *part_b, int64_t M, int64_t K, int64_t G, const device_info &d,
                                 cudaStream_t s, const T *beta, T *ln_out) {
    constexpr int V = vec_elems<T>();
    /* ln_out is written by 16-bit backwards with dxhat in their own dtype only (launch_ln_backward) */
    constexpr bool CAN_LNOUT = std::is_same<T, TD>::value && sizeof(T) == 2;
    if (!CAN_LNOUT && ln_out) return cudaErrorInvalidValue;
    bool vec = K % V == 0 && aligned16(dxhat) && aligned16(x) && aligned16(gamma) && aligned16(dx) &&
               aligned16(part_g) && aligned16(part_b) &&
               (!ln_out || (aligned16(beta) && aligned16(ln_out))); /* beta: read for ln_out only */
    int64_t nchunks = vec ? K / V : K;
    const reg_plan rp = plan_reg<T>(K);
    if (vec && rp.use) {
        /* the grid (G) and the ring's depth are those of the kernel without ln_out, which
         * fixes the partials' layout whichever kernel runs */
        const int depth = ring_depth<T, TD>(K, blocks_per_sm<T, TD>(K, d.device), d);
        if (depth > 0) {
            auto *kern = ring_kernel<T, TD>(rp.cpt);
            if constexpr (CAN_LNOUT)
                if (ln_out) kern = ring_kernel<T, TD, true>(rp.cpt);
            const size_t smem = (size_t)depth * ring_slot_bytes<T, TD>(K);
            auto launch = [&] {
                return launch_dependent(kern, dim3((unsigned)G), dim3(rp.threads), smem, s, dxhat, x,
                                        mean, rstd, shift, gamma, dx, part_g, part_b, M, K, depth,
                                        beta, ln_out);
            };
            /* the limit raised once per device, kernel and size (raise_smem_limit); set
             * again and tried once more if the launch fails (a cudaDeviceReset since) */
            cudaError_t e = raise_smem_limit((const void *)kern, smem, d.device, false);
            if (e == cudaSuccess) e = launch();
            if (e == cudaSuccess) return e;
            (void)cudaGetLastError();
            e = raise_smem_limit((const void *)kern, smem, d.device, true);
            return e != cudaSuccess ? e : launch();
        }
        auto *kern = reg_kernel<T, TD>(rp.cpt);
        if constexpr (CAN_LNOUT)
            if (ln_out) kern = reg_kernel<T, TD, true>(rp.cpt);
        return launch_dependent(kern, dim3((unsigned)G), dim3(rp.threads), 0, s, dxhat, x, mean, rstd,
                                shift, gamma, dx, part_g, part_b, M, K, beta, ln_out);
    }
    int threads = (int)std::min<int64_t>(512, std::max<int64_t>(32, (nchunks + 31) / 32 * 32));
    size_t pbytes = 2 * (size_t)K * sizeof(float);
    int smem_parts = part_g && pbytes <= d.max_smem_optin;
    size_t smem = smem_parts ? pbytes : 0;
    auto kern = vec ? ln_bwd_kernel<T, TD, V, false> : ln_bwd_kernel<T, TD, 1, false>;
    if constexpr (CAN_LNOUT)
        if (ln_out) kern = vec ? ln_bwd_kernel<T, TD, V, true> : ln_bwd_kernel<T, TD, 1, true>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess) return e;
    }
    return launch_dependent(kern, dim3((unsigned)G), dim3(threads), smem, s, dxhat, x, mean, rstd, shift,
                            gamma, dx, part_g, part_b, M, K, smem_parts, beta, ln_out);
}

cudaError_t launch_ln_backward(lnl_dtype dt, const void *dxhat, const void *x, const float *mean,
                               const float *rstd, const float *shift, const void *gamma, void *dx,
                               float *part_g, float *part_b, int64_t M, int64_t K, int64_t G,
                               const device_info &d, cudaStream_t s, const void *beta,
                               void *ln_out) {
    if (M == 0) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    const bool f32 = dxhat_f32(dt, K);
    LNL_DISPATCH(dt, T,
                 e = f32 ? ln_backward_t<T, float>((const float *)dxhat, (const T *)x, mean, rstd, shift,
                                                   (const T *)gamma, (T *)dx, part_g, part_b, M, K, G,
                                                   d, s, (const T *)beta, (T *)ln_out)
                         : ln_backward_t<T, T>((const T *)dxhat, (const T *)x, mean, rstd, shift,
                                               (const T *)gamma, (T *)dx, part_g, part_b, M, K, G, d,
                                               s, (const T *)beta, (T *)ln_out));
    return e;
}

/* ---- ordered reduction of partials ----
 * out[l] = sum over g of part[g*L + l]. A block owns 32 adjacent columns (coalesced
 * 128-byte rows) and splits the G partial rows among RED_LANES lanes: lane j sums rows
 * j, j + RED_LANES, ... in order, then lane 0 adds the lane sums in lane order. The
 * order is fixed by G and the lane count, so results are bitwise repeatable. One thread
 * per column walking all G rows (the first version) was latency-bound: with G = 4 x SMs
 * = 528 it took ~90 us per call at K = 4096 on the H200, more than the LayerNorm
 * backward. With 16 lanes (until session 30) each lane still waited on a few rounds of
 * DRAM latency. Kernel time without PDL (H200, bf16, AUTO, session 30 call 6), 16 lanes /
 * 32 lanes / 32 lanes with 16 loads in flight: 8192,1024,1024 7.2 / 5.5 / 6.3 us;
 * 4096,768,768 3.2 / 2.8 / 5.4; 32768,4096,256 4.0 / 4.1 / 5.7. Results differ bitwise
 * from the 16-lane builds'. Session 31 (docs/results/cuda/2026-12-03-session31): blocks
 * of 16 columns x 64 lanes (twice the blocks) and 8 x 128 were slower (call 3, against
 * 32 x 32's 5.4 / 2.7 / 4.1 us: 5.3 / 4.2 / 7.7 and 7.1 / 4.9 / 10.4); a quarter of the
 * partial rows (the LayerNorm backward's blocks working on 4-5 rows at once, branch
 * s31-ln-lanes) took it to 3.1 us at 8192,1024,1024 but made the LayerNorm backward
 * 0.4-0.7 us slower (call 2). */
constexpr int RED_COLS = 32, RED_LANES = 32, RED_UNROLL = 8;

/* Up to MAX_REDUCE_JOBS reductions in one launch (the backward's dgamma, dbeta and db:
 * at small sizes each launch costs more host time than its work). Job j owns blocks
 * [first[j], first[j+1]); the arithmetic per column is the same whatever the batching. */
template <typename T> struct reduce_batch {
    const float *part[MAX_REDUCE_JOBS];
    int64_t G[MAX_REDUCE_JOBS], L[MAX_REDUCE_JOBS];
    T *out[MAX_REDUCE_JOBS];
    int64_t first[MAX_REDUCE_JOBS + 1];
    int n;
};

template <typename T>
__global__ void __launch_bounds__(RED_COLS * RED_LANES) reduce_partials_kernel(const reduce_batch<T> b) {
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    __shared__ float lane_sum[RED_LANES][RED_COLS + 1];
    int j = 0;
    while (j + 1 < b.n && (int64_t)blockIdx.x >= b.first[j + 1]) j++;
    const float *__restrict__ part = b.part[j];
    const int64_t G = b.G[j], L = b.L[j];
    const int64_t l = ((int64_t)blockIdx.x - b.first[j]) * RED_COLS + threadIdx.x;
    float acc = 0.f;
    if (l < L) {
#pragma unroll RED_UNROLL
        for (int64_t g = threadIdx.y; g < G; g += RED_LANES) acc += part[g * L + l];
    }
    lane_sum[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && l < L) {
        float t = 0.f;
#pragma unroll
        for (int i = 0; i < RED_LANES; i++) t += lane_sum[i][threadIdx.x];
        b.out[j][l] = from_f<T>(t);
    }
}

cudaError_t launch_reduce_partials(lnl_dtype dt, const reduce_job *jobs, int n, cudaStream_t s) {
    if (n <= 0) return cudaSuccess;
    if (n > MAX_REDUCE_JOBS) return cudaErrorInvalidValue;
    const dim3 block(RED_COLS, RED_LANES);
    cudaError_t e = cudaSuccess;
    LNL_DISPATCH(dt, T, {
        reduce_batch<T> b{};
        b.n = n;
        for (int j = 0; j < n; j++) {
            b.part[j] = jobs[j].part;
            b.G[j] = jobs[j].G;
            b.L[j] = jobs[j].L;
            b.out[j] = (T *)jobs[j].out;
            b.first[j + 1] = b.first[j] + (jobs[j].L + RED_COLS - 1) / RED_COLS;
        }
        e = launch_dependent(reduce_partials_kernel<T>, dim3((unsigned)b.first[n]), block, 0, s, b);
    });
    return e;
}

cudaError_t launch_reduce_partials(lnl_dtype dt, const float *part, int64_t G, int64_t L, void *out,
                                   cudaStream_t s) {
    const reduce_job job{part, G, L, out};
    return launch_reduce_partials(dt, &job, 1, s);
}

/* ---- column sums of dy (dlinear_bias) ----
 * Block (bx, g) sums rows [g*R, (g+1)*R) of its tx*V columns into partial row g; the
 * ordered reduction above then adds the G partial rows. A thread owns V adjacent
 * columns (one 16-byte load per row when N % V == 0 and dy is aligned; V = 1
 * otherwise), and the block's ty thread rows split the chunk's rows between them
 * (thread row y takes rows y, y + ty, ...), keeping UNROLL loads in flight; the ty
 * sums are then added in shared memory. Why thread rows: with one thread per column
 * block, the grid needed one partial row per 3 rows of dy at 4096 x 768 (1408 of them,
 * 4.3 MB of partials against dy's 6.3 MB, written one float at a time and read again
 * by the reduction). With ty = 5 there, G = 274 (0.8 MB). H200, bf16, kernel times without
 * PDL (bench/cuda/profile_cuda.py, session 10 call 2, against one thread row): 4096 x 768
 * 3.6 us (was 7.9) and the ordered reduction 2.7 (was 7.0, with LNL_LN_BWD_MIN_ROWS);
 * 8192 x 3072 15.2 (15.3); 8192 x 12288, 201 MB, 53 us (55; 3.8 TB/s), where cuBLASLt's
 * BGRADB epilogue kernel, which this replaces for bf16/f16, took 88 us. The order of
 * additions depends only on dtype, M, N and G, not on which variant (V) runs. */
constexpr int COLSUM_THREADS = 512; /* tx * ty at most */
/* V adjacent elements of dy: one 16-byte load (V > 1), else one element */
template <typename T, int V> __device__ __forceinline__ void load_cols(const T *p, T (&v)[V]) {
    if constexpr (V > 1) {
        const uint4 w = __ldg(reinterpret_cast<const uint4 *>(p));
        memcpy(v, &w, 16);
    } else {
        v[0] = p[0];
    }
}
template <typename T, int V>
__global__ void colsum_partials_kernel(const T *__restrict__ dy, int64_t M, int64_t N,
                                       float *__restrict__ part) {
    /* rows whose loads a thread issues together; 8 was no faster (session 31, call 1,
     * kernel times without PDL: 4096 x 768 3.8 vs 4.5 us, 8192 x 1024 8.0 vs 7.8) */
    constexpr int UNROLL = 4;
    __shared__ float sums[COLSUM_THREADS * V];
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const int tx = (int)blockDim.x, ty = (int)blockDim.y, width = tx * V;
    const int64_t nb = (int64_t)blockIdx.x * width; /* the block's first column */
    const int64_t n0 = nb + (int64_t)threadIdx.x * V;
    const int64_t R = (M + gridDim.y - 1) / gridDim.y;
    const int64_t r0 = blockIdx.y * R, r1 = min64(M, r0 + R);
    float acc[V];
#pragma unroll
    for (int j = 0; j < V; j++) acc[j] = 0.f;
    if (n0 < N) { /* N % V == 0 where V > 1, so a thread's columns are all inside */
        /* whole groups of UNROLL rows with their loads issued together, then one group
         * of the rest with its loads predicated (zeros added for absent rows). Every
         * group predicated ran 5-10% slower at N >= 4096 (session 10, call 1). */
        const int64_t step = ty;
        int64_t m = r0 + threadIdx.y;
        for (; m + (UNROLL - 1) * step < r1; m += UNROLL * step) {
            T v[UNROLL][V];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) load_cols<T, V>(dy + (m + u * step) * N + n0, v[u]);
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += to_f(v[u][j]);
        }
        if (m < r1) { /* fewer than UNROLL rows left: their loads still issued together */
            T v[UNROLL][V];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                if (m + u * step < r1) load_cols<T, V>(dy + (m + u * step) * N + n0, v[u]);
                else
#pragma unroll
                    for (int j = 0; j < V; j++) v[u][j] = T(0.f);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += to_f(v[u][j]);
        }
    }
    float *mine = sums + threadIdx.y * width + threadIdx.x * V;
#pragma unroll
    for (int j = 0; j < V; j++) mine[j] = acc[j];
    __syncthreads();
    /* one column a thread, the thread rows' sums in order; consecutive threads store
     * consecutive floats */
    for (int c = threadIdx.y * tx + threadIdx.x; c < width; c += tx * ty) {
        if (nb + c >= N) break;
        float s = 0.f;
        for (int y = 0; y < ty; y++) s += sums[y * width + c];
        part[blockIdx.y * N + nb + c] = s;
    }
}

/* The block shape of the column sums: V elements a thread (16 bytes of dtype), tx up to
 * 256 threads across the columns (fewer for narrow outputs) and ty = 512 / tx thread rows
 * (bf16: N = 768 gives 96 x 5, N = 4096 256 x 2).
 * It depends on dtype and N only, so the row chunks (colsum_grid), the workspace carve
 * and the order of additions are the same whichever kernel variant runs. */
struct colsum_shape {
    int V, tx, ty;
};
static colsum_shape colsum_plan(lnl_dtype dt, int64_t N) {
    const int V = 16 / (int)lnl_dtype_size(dt);
    const int64_t t = (N + V - 1) / V, nbx = (t + 255) / 256;
    /* the columns split evenly between the blocks of a row chunk (N = 3072 bf16: two of
     * 192 threads, not 256 and a half-idle 256) */
    const int64_t per = (t + nbx - 1) / nbx;
    const int tx = (int)std::min<int64_t>(256, std::max<int64_t>(32, (per + 31) / 32 * 32));
    return {V, tx, COLSUM_THREADS / tx};
}

/* G row chunks: enough blocks for about 1024 threads per SM. Twice that (and twice the
 * partial rows) was slower: H200, bf16, kernel times without PDL (session 32, call 3)
 * 4096 x 768 5.5 vs 3.8 us, 8192 x 1024 8.8 vs 7.8, 8192 x 3072 22.7 vs 21.3. */
int64_t colsum_grid(lnl_dtype dt, int64_t M, int64_t N, const device_info &d) {
    const colsum_shape c = colsum_plan(dt, N);
    const int64_t nbx = (N + (int64_t)c.tx * c.V - 1) / ((int64_t)c.tx * c.V);
    const int64_t g = (int64_t)d.sm_count * 1024 / ((int64_t)c.tx * c.ty * nbx);
    return chunks_for(M, std::min<int64_t>(g, 65535), 1);
}

cudaError_t launch_colsum_partials(lnl_dtype dt, const void *dy, int64_t M, int64_t N, int64_t G,
                                   float *part, cudaStream_t s) {
    const colsum_shape c = colsum_plan(dt, N);
    /* 16-byte loads where N and dy allow them; otherwise one element a thread over the
     * same row chunks and thread rows */
    const int V = N % c.V == 0 && aligned16(dy) ? c.V : 1;
    const unsigned bx = (unsigned)((N + (int64_t)c.tx * V - 1) / ((int64_t)c.tx * V));
    const dim3 grid(bx, (unsigned)G), block((unsigned)c.tx, (unsigned)c.ty);
    cudaError_t e = cudaSuccess;
    LNL_DISPATCH(dt, T, {
        constexpr int VT = vec_elems<T>();
        e = launch_dependent(V > 1 ? colsum_partials_kernel<T, VT> : colsum_partials_kernel<T, 1>, grid,
                             block, 0, s, (const T *)dy, M, N, part);
    });
    return e;
}

} // namespace lnl
