/* The Hopper forward's epilogue form (fused_forward_sm90.cu) needs, before its GEMM
 * kernel runs, the folded weight and the rows' statistics:
 *
 *   LN(x) W^T + b = rstd * (x W'^T - mean * c) + d,  with
 *   W'[n, k] = T(W[n, k] * gamma[k])   (the product rounded once to the io dtype),
 *   c[n]     = sum_k W'[n, k]          (float32, of the rounded values),
 *   d[n]     = sum_k W[n, k] beta[k] + bias[n]   (float32),
 *   mean[m], rstd[m] of each row of x.
 *
 * c must be summed from the rounded W': the GEMM multiplies by the rounded values, and
 * the subtraction of mean * c cancels x's row mean only if both sides use the same
 * weights. Summed from W * gamma before rounding, the rounding error of W' is
 * multiplied by |mean| / std (bench/epilogue_form_numerics.py: y's error 0.5 instead of
 * 2e-3 at row means of 1e3).
 *
 * Up to K = fold_prep_max_stats_k() (8192), one launch does both (fold_prep_kernel): the
 * rows of x (statistics) and then those of W (folding) as one list, walked by a persistent
 * grid, so the two jobs share the GPU instead of following each other.
 *  - Up to K = 2048, a warp a row, and no block waits at a barrier. Each lane loads all of
 *    its 16-byte chunks of a row before it uses any, and those of its next row before it
 *    sums this one; the sums are warp shuffles in a fixed order (deterministic). Where
 *    rows are short that is what the two kernels before it lacked, a block a row each: a
 *    block finished its row and the memory idled until the next wave of blocks was
 *    resident (H200, bf16, profile_cuda.py, session 7 call 2: 0.009 ms at 8192,768,3072
 *    against 0.0055 + 0.011).
 *  - Up to K = 8192, a block of 128 a row.
 *  - Longer rows fold with a block a row (fold_weight_kernel) and take their statistics
 *    from launch_ln_forward (the caller).
 *
 * cd holds {c[n], d[n]} pairs; its pairs past N up to fold_cd_columns(N) are zero, since
 * the epilogue reads a whole tile's pairs, two columns' as 16 bytes.
 *
 * Rows too far off centre for the epilogue form (|mean| * rstd > FOLD_MAX_MEAN_RSTD):
 * each block of the prep kernels writes into block_flags[block] whether one of its rows
 * is, every call, so no flag needs clearing first (a cleared flag set by other blocks of
 * the same launch would race with the clearing). The GEMM kernel reads the grid's
 * block_flags. Every prep kernel clears off_centre, the word the GEMM kernel sets (for the
 * transform form, which then redoes the call), and launch_ln_forward's statistics set
 * when they follow. */
#include <atomic>

#include "cuda_common.cuh"
#include "fused_sm90.cuh"

namespace lnl {
namespace {

constexpr int PREP_THREADS = 256; /* the warp kernel's block: eight rows at a time */

/* The 8 values of a 16-byte chunk as float. */
template <typename T> __device__ __forceinline__ void chunk_to_f(const uint4 &u, float (&f)[8]) {
    const T *e = (const T *)&u;
#pragma unroll
    for (int j = 0; j < 8; j++) f[j] = to_f(e[j]);
}

/* The element pairs of two 16-byte chunks multiplied, each product rounded once to T:
 * bitwise from_f<T>(to_f(a) * to_f(b)), since the float32 product of two 16-bit values is
 * exact (outside float32's subnormal range), in one instruction a pair instead of six. */
template <typename T> struct pair_of;
template <> struct pair_of<__half> { using type = __half2; };
template <> struct pair_of<__nv_bfloat16> { using type = __nv_bfloat162; };
template <typename T> __device__ __forceinline__ uint4 mul_chunk(const uint4 &a, const uint4 &b) {
    using P = typename pair_of<T>::type;
    uint4 r;
    const P *pa = (const P *)&a, *pb = (const P *)&b;
    P *pr = (P *)&r;
#pragma unroll
    for (int j = 0; j < 4; j++) pr[j] = __hmul2_rn(pa[j], pb[j]);
    return r;
}

/* 8 columns of a row of W (chunk w) with those of gamma and beta (gu, bu; unused when
 * absent): returns the 8 of W' and adds their share to c and d. An overflowed W' makes
 * c infinite or NaN; the caller checks c once a row (chunk_overflows), not each element. */
template <typename T>
__device__ __forceinline__ uint4 fold_chunk(const uint4 &w, const uint4 &gu, const uint4 &bu,
                                            bool has_gamma, bool has_beta, float &c, float &d) {
    const uint4 fu = has_gamma ? mul_chunk<T>(w, gu) : w;
    float ff[8];
    chunk_to_f<T>(fu, ff);
#pragma unroll
    for (int j = 0; j < 8; j++) c += ff[j];
    if (has_beta) {
        float wf[8], bf[8];
        chunk_to_f<T>(w, wf);
        chunk_to_f<T>(bu, bf);
#pragma unroll
        for (int j = 0; j < 8; j++) d = fmaf(wf[j], bf[j], d);
    }
    return fu;
}

/* Whether a W' of this chunk rounded to inf from finite factors. f16's range ends at
 * 65504: W * gamma of finite values can round to inf, where LN(x) W^T itself may be
 * finite (W' has no meaning there; the transform form, which multiplies by W itself,
 * redoes the call). Asked only of a thread whose c is not finite, which every such W'
 * makes it (and which inf or NaN in W or gamma, or a sum past float32's range, also do:
 * those are not overflows, and this test tells them apart). */
template <typename T>
__device__ __forceinline__ bool chunk_overflows(const uint4 &w, const uint4 &gu) {
    float wf[8], gf[8], ff[8];
    chunk_to_f<T>(w, wf);
    chunk_to_f<T>(gu, gf);
    chunk_to_f<T>(mul_chunk<T>(w, gu), ff);
    bool overflow = false;
#pragma unroll
    for (int j = 0; j < 8; j++) overflow |= isinf(ff[j]) && !isinf(wf[j]) && !isinf(gf[j]);
    return overflow;
}

/* 16 bytes of base from element e, or zeros when !in or base is absent (gamma, beta).
 * The base is tested, not base + e: that sum is not null for e > 0 (a null gamma took
 * the first version, which tested the sum, into an illegal address on the H200). */
template <typename T>
__device__ __forceinline__ uint4 ldg16_or0(const T *base, int64_t e, bool in) {
    return in && base ? __ldg((const uint4 *)(base + e)) : make_uint4(0, 0, 0, 0);
}

/* Clears off_centre and the {c, d} pairs past N (block 0 of either kernel). */
__device__ __forceinline__ void clear_flag_and_pad(int *off_centre, float *cd, int64_t N) {
    if (threadIdx.x == 0) *off_centre = 0;
    const int64_t padded = fold_cd_columns(N);
    for (int64_t n = N + threadIdx.x; n < padded; n += blockDim.x) cd[2 * n] = cd[2 * n + 1] = 0.f;
}

/* The prep kernel: the list of rows (x's, then W's) walked by groups of G threads, a row
 * a group: a warp (G = 32, eight a block) up to K = PREP_WARP_MAX_K, or a block of 128
 * (G = 128) up to PREP_BLOCK_MAX_K. Thread t of a group holds chunks t + G i, i < CPL, of
 * its row in registers; its sums are in a fixed order (deterministic): shuffles within the
 * warp, then, for a block, across its warps through shared memory.
 *
 * A group issues the loads of its next row before the sums of this one, so that the memory
 * has work while it waits at its shuffles and barriers. The folding multiplies W by gamma
 * two elements an instruction and checks for overflow once a row (variant B29, session
 * 33: the kernel at 8192,4096,4096 43.1 -> 38.4-38.9 us). Before session 26 rows of more
 * than 2048 elements took two launches, the folding (fold_weight_kernel) and then
 * launch_ln_forward's statistics, a block a row each. H200, bf16, session 26 call 1
 * (docs/results/cuda/2026-12-03-session26): at 8192,4096,4096 this kernel took 43.1 us
 * against 25.4 + 21.9 (torch.profiler; ~3.0 TB/s), and the FUSED forward 0.4792-0.4802 ms
 * against 0.4865-0.4870 back to back at the power cap (8192,4096,12288: 1.379-1.384 vs
 * 1.387); the folding alone at K = 8192 (16384,8192,1024, statistics in the GEMM kernel)
 * was no faster, 0.4541-0.4547 vs 0.4538-0.4539 ms. */
constexpr int PREP_BLOCK_THREADS = 128;
constexpr int64_t PREP_WARP_MAX_K = 2048, PREP_BLOCK_MAX_K = 8192;
template <int G> __host__ __device__ constexpr int prep_threads() {
    return G == 32 ? PREP_THREADS : G;
}

template <int G> __device__ __forceinline__ float group_sum(float v, float2 *red) {
    if constexpr (G == 32) return warp_sum(v);
    else return block_sum(v, (float *)red);
}
template <int G> __device__ __forceinline__ float2 group_sum2(float a, float b, float2 *red) {
    if constexpr (G == 32) return warp_sum(make_float2(a, b));
    else return block_sum2(a, b, red);
}

/* Thread t's chunks of a row (zeros past its end, or all zeros when !in). Chunk counts
 * are 32-bit here (K <= PREP_BLOCK_MAX_K): their 64-bit compares and address sums had
 * been tens of instructions a row (SASS, session 33). */
template <typename T, int CPL, int G>
__device__ __forceinline__ void load_row_chunks(const T *row, int nchunks, bool in, int t,
                                                uint4 (&v)[CPL]) {
    const uint4 *p = (const uint4 *)row + t;
#pragma unroll
    for (int i = 0; i < CPL; i++)
        v[i] = in && t + G * i < nchunks ? __ldg(p + G * i) : make_uint4(0, 0, 0, 0);
}

/* A row of x's mean and rstd from its chunks in registers: two passes over them, the sums
 * taken about the row's first element x0 so that a row like 1e3 + randn keeps float32
 * precision (as launch_ln_forward), each in two interleaved partial sums (half the
 * dependency chain); the means times inv_k = 1/K, not divided by K (at most an ulp apart,
 * and nothing where K is a power of two). Keeping each x - x0 of the first pass in
 * registers for the second (32 floats a lane at K = 1024) cost the warp kernel a block an
 * SM (80 registers) and was no faster (session 33, call 2). Returns whether the row is
 * off centre (the same in every thread). */
template <typename T, int CPL, int G>
__device__ __forceinline__ bool stats_row(const uint4 (&v)[CPL], float x0, int t, int nchunks,
                                          float inv_k, float eps, float *mean, float *rstd,
                                          float2 *red) {
    float s[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < CPL; i++) {
        if (t + G * i >= nchunks) continue;
        float f[8];
        chunk_to_f<T>(v[i], f);
#pragma unroll
        for (int j = 0; j < 8; j++) s[j & 1] += f[j] - x0;
    }
    const float dm = group_sum<G>(s[0] + s[1], red) * inv_k;
    float ss[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < CPL; i++) {
        if (t + G * i >= nchunks) continue;
        float f[8];
        chunk_to_f<T>(v[i], f);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const float e = (f[j] - x0) - dm;
            ss[j & 1] = fmaf(e, e, ss[j & 1]);
        }
    }
    const float var = group_sum<G>(ss[0] + ss[1], red) * inv_k;
    const float mu = x0 + dm, rs = 1.f / sqrtf(var + eps);
    if (t == 0) {
        *mean = mu;
        *rstd = rs;
    }
    return off_centre_row(mu, rs);
}

/* Row n of W from its chunks in registers: its row of W' and {c, d}. Returns whether one
 * of this thread's W' overflowed. */
template <typename T, int CPL, int G>
__device__ __forceinline__ bool fold_row(const uint4 (&w)[CPL], const T *__restrict__ gamma,
                                         const T *__restrict__ beta, const T *__restrict__ bias,
                                         T *__restrict__ fr, float *__restrict__ cdn, int64_t n,
                                         int t, int nchunks, float2 *red) {
    float c = 0.f, d = 0.f;
#pragma unroll
    for (int i = 0; i < CPL; i++) {
        const int k = t + G * i;
        if (k >= nchunks) continue;
        /* gamma and beta: the same few KB for every row, from L1 */
        *(uint4 *)(fr + 8 * k) = fold_chunk<T>(w[i], ldg16_or0(gamma, 8 * k, true),
                                               ldg16_or0(beta, 8 * k, true), gamma, beta, c, d);
    }
    bool overflow = false;
    if (gamma && !isfinite(c)) { /* rare: see chunk_overflows */
#pragma unroll
        for (int i = 0; i < CPL; i++) {
            const int k = t + G * i;
            if (k < nchunks) overflow |= chunk_overflows<T>(w[i], ldg16_or0(gamma, 8 * k, true));
        }
    }
    const float2 cs = group_sum2<G>(c, d, red);
    if (t == 0) {
        cdn[0] = cs.x;
        cdn[1] = cs.y + (bias ? to_f(bias[n]) : 0.f);
    }
    return overflow;
}

template <typename T, int CPL, int G>
__global__ void __launch_bounds__(prep_threads<G>())
fold_prep_kernel(const T *__restrict__ x, float *__restrict__ mean, float *__restrict__ rstd,
                 int64_t stats_rows, float eps, const T *__restrict__ W,
                 const T *__restrict__ gamma, const T *__restrict__ beta,
                 const T *__restrict__ bias, T *__restrict__ wfold, float *__restrict__ cd,
                 int *__restrict__ off_centre, int *__restrict__ block_flags, int64_t N,
                 int64_t K) {
    __shared__ float2 red[32]; /* the block's sums (G = 128) */
    pdl_launch_dependents(); /* the GEMM kernel behind may be set up now; it waits for us */
    constexpr int GROUPS = prep_threads<G>() / G;
    const int t = threadIdx.x % G;
    const int64_t rows = stats_rows + N, step = (int64_t)gridDim.x * GROUPS;
    const int nchunks = (int)(K / 8);
    const float inv_k = 1.f / (float)K;
    if (blockIdx.x == 0) clear_flag_and_pad(off_centre, cd, N);
    auto row_of = [&](int64_t r) { return r < stats_rows ? x + r * K : W + (r - stats_rows) * K; };
    bool off = false;
    /* row r from its chunks v (x0: its first element, for a row of x) */
    auto do_row = [&](int64_t r, const uint4 (&v)[CPL], float x0) {
        if (r < stats_rows) { /* the same branch in every thread of the group */
            off |= stats_row<T, CPL, G>(v, x0, t, nchunks, inv_k, eps, mean + r, rstd + r, red);
        } else {
            const int64_t n = r - stats_rows;
            off |= fold_row<T, CPL, G>(v, gamma, beta, bias, wfold + n * K, cd + 2 * n, n, t,
                                       nchunks, red);
        }
    };
    int64_t r = (int64_t)blockIdx.x * GROUPS + threadIdx.x / G;
    /* A group loads its next row before it reduces this one (x0: the first element of a
     * row of x, loaded with its chunks), so that each warp has a row's loads in flight
     * while it waits at its shuffles and barriers.
     *  - The warp kernel loaded each row when it started it until session 33: with the
     *    lighter rows of variant B29 the loads ahead are faster (torch.profiler, H200,
     *    bf16, FUSED forward; call 3, docs/results/cuda/2026-12-03-session33): 4.64 vs
     *    4.77 us at 4096,768,768, 9.47 vs 9.79 at 8192,768,3072, 18.56 vs 19.84 at
     *    8192,2048,2048, 8.45 vs 8.22 at 8192,1024,1024; the rows of B29 without them
     *    were slower still at K = 2048 (21.22 us). Session 26 had measured them slower
     *    with the heavier rows (9.7 vs 9.4 us at 8192,768,3072: 79 instead of 57
     *    registers, three blocks an SM instead of four).
     *  - Rows through a ring of shared memory instead (each thread copying its chunks of
     *    the next three rows by cp.async, 56 registers instead of 72, two rows in flight a
     *    block during the sums) were slower in the block kernel: 48.6 vs 43.8 us at
     *    8192,4096,4096 and 95.7 vs 83.9 at 8192,4096,12288 (torch.profiler), the FUSED
     *    forward 0.4724-0.4739 vs 0.4748-0.4755 ms and 1.3642-1.3682 vs 1.3498-1.3581
     *    back to back at the power cap (session 27, call 2), as the LayerNorm backward's
     *    cp.async ring was in session 6 (ln_backward.cu).
     *  - W's rows first (the folding's stores under the statistics' loads, not at the
     *    end) were no faster: bf16 FUSED forward ms, old / W first, two rounds in turn
     *    (session 42, call 2; the patch in docs/results/cuda/2026-12-04-session42):
     *    8192,1024,1024 0.0443, 0.0460 / 0.0463, 0.0447; 8192,768,3072 0.0814, 0.0834 /
     *    0.0848, 0.0849; 16384,2048,1024 0.1309, 0.1333 / 0.1371, 0.1370. */
    auto first_of = [&](int64_t q) { return q < stats_rows ? to_f(__ldg(x + q * K)) : 0.f; };
    uint4 v[CPL];
    load_row_chunks<T, CPL, G>(row_of(r), nchunks, r < rows, t, v);
    float x0 = r < rows ? first_of(r) : 0.f;
    for (; r < rows; r += step) {
        const int64_t rn = r + step;
        uint4 nv[CPL];
        load_row_chunks<T, CPL, G>(row_of(rn), nchunks, rn < rows, t, nv);
        const float nx0 = rn < rows ? first_of(rn) : 0.f;
        do_row(r, v, x0);
#pragma unroll
        for (int i = 0; i < CPL; i++) v[i] = nv[i];
        x0 = nx0;
    }
    off = __syncthreads_or(off);
    if (threadIdx.x == 0) block_flags[blockIdx.x] = off ? 1 : 0;
}

/* Rows of W longer than the warp kernel takes (K > fold_prep_max_stats_k()): a block
 * of 128 threads a row, its sums in a fixed order (deterministic). */
constexpr int FOLD_THREADS = 128;
template <typename T>
__global__ void __launch_bounds__(FOLD_THREADS)
fold_weight_kernel(const T *__restrict__ W, const T *__restrict__ gamma, const T *__restrict__ beta,
                   const T *__restrict__ bias, T *__restrict__ wfold, float *__restrict__ cd,
                   int *__restrict__ off_centre, int *__restrict__ block_flags, int64_t N,
                   int64_t K) {
    __shared__ float red[2][FOLD_THREADS / 32];
    pdl_launch_dependents(); /* the kernels behind may be set up now; they wait for us */
    if (blockIdx.x == 0) clear_flag_and_pad(off_centre, cd, N);
    bool overflow = false;
    for (int64_t n = blockIdx.x; n < N; n += gridDim.x) {
        const T *wr = W + n * K;
        T *fr = wfold + n * K;
        float c = 0.f, d = 0.f;
        for (int64_t k = 8 * (int64_t)threadIdx.x; k < K; k += 8 * FOLD_THREADS)
            *(uint4 *)(fr + k) = fold_chunk<T>(__ldg((const uint4 *)(wr + k)),
                                               ldg16_or0(gamma, k, true), ldg16_or0(beta, k, true),
                                               gamma, beta, c, d);
        if (gamma && !isfinite(c)) /* rare: see chunk_overflows */
            for (int64_t k = 8 * (int64_t)threadIdx.x; k < K; k += 8 * FOLD_THREADS)
                overflow |= chunk_overflows<T>(__ldg((const uint4 *)(wr + k)),
                                               __ldg((const uint4 *)(gamma + k)));
        c = warp_sum(c);
        d = warp_sum(d);
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
    /* every call, as fold_prep_kernel's flags: an overflowed W' sends the call to the
     * transform form (the GEMM kernel reads these words) */
    overflow = __syncthreads_or(overflow);
    if (threadIdx.x == 0) block_flags[blockIdx.x] = overflow ? 1 : 0;
}

/* A persistent grid for rows_per_block rows a block (a warp's or a block's each): no more
 * blocks than the rows need, than are resident at once, or than block_flags has words. */
template <typename Kernel>
unsigned prep_grid(std::atomic<int> (&cache)[64], Kernel k, int threads, int64_t rows,
                   int rows_per_block, const device_info &d) {
    const int64_t resident = (int64_t)blocks_per_sm(cache, k, threads, d) * d.sm_count;
    const int64_t want = std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, resident);
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>(want, FOLD_PREP_MAX_BLOCKS));
}

template <typename T, int CPL, int G>
cudaError_t launch_prep(const T *x, float *mean, float *rstd, int64_t stats_rows, float eps,
                        const T *W, const T *gamma, const T *beta, const T *bias, T *wfold,
                        float *cd, int *off_centre, int *block_flags, int64_t N, int64_t K,
                        const device_info &d, cudaStream_t s, int *blocks) {
    static std::atomic<int> occ[64];
    constexpr int threads = prep_threads<G>();
    const unsigned grid =
        prep_grid(occ, fold_prep_kernel<T, CPL, G>, threads, stats_rows + N, threads / G, d);
    fold_prep_kernel<T, CPL, G><<<grid, threads, 0, s>>>(x, mean, rstd, stats_rows, eps, W, gamma,
                                                         beta, bias, wfold, cd, off_centre,
                                                         block_flags, N, K);
    *blocks = (int)grid;
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_prep_t(const T *x, float *mean, float *rstd, int64_t stats_rows, float eps,
                          const T *W, const T *gamma, const T *beta, const T *bias, T *wfold,
                          float *cd, int *off_centre, int *block_flags, int64_t N, int64_t K,
                          int64_t max_k, const device_info &d, cudaStream_t s, int *blocks) {
    const int64_t nchunks = K / 8;
    if (K > max_k) {
        /* the folding alone: a block a row, at most FOLD_PREP_MAX_BLOCKS blocks striding
         * over the rows, so that each has a word of block_flags for its overflow */
        const unsigned grid = (unsigned)std::min<int64_t>(N, FOLD_PREP_MAX_BLOCKS);
        fold_weight_kernel<T><<<grid, FOLD_THREADS, 0, s>>>(W, gamma, beta, bias, wfold, cd,
                                                            off_centre, block_flags, N, K);
        *blocks = (int)grid;
        return cudaGetLastError();
    }
#define LNL_PREP(CPL, G)                                                                       \
    return launch_prep<T, CPL, G>(x, mean, rstd, stats_rows, eps, W, gamma, beta, bias, wfold, cd, \
                                  off_centre, block_flags, N, K, d, s, blocks)
    /* the fewest chunks a lane, or a thread of a block a row, that hold a row */
    if (nchunks <= 32) LNL_PREP(1, 32);
    if (nchunks <= 64) LNL_PREP(2, 32);
    if (nchunks <= 128) LNL_PREP(4, 32);
    if (K <= PREP_WARP_MAX_K) LNL_PREP(8, 32);
    if (nchunks <= 4 * PREP_BLOCK_THREADS) LNL_PREP(4, PREP_BLOCK_THREADS);
    LNL_PREP(8, PREP_BLOCK_THREADS);
#undef LNL_PREP
}

} // namespace

/* The warp kernel up to 8 chunks a lane (K <= 2048). H200, bf16, session 7:
 *  - at K = 768 it took 0.009 ms against 0.0055 + 0.011 for the two kernels it replaces,
 *    a block a row each (8192,768,3072; profile_cuda.py, call 2);
 *  - at K = 2048 the FUSED forward was 0.204 / 0.205 ms with it against 0.210 / 0.210
 *    with those two kernels at 8192,2048,2048, 0.212 / 0.216 vs 0.221 / 0.222 at
 *    16384,2048,1024 (lnl-bench, call 3, -DLNL_FOLD_PREP_MAX_K=1024 for the other);
 *  - up to 16 chunks a lane (K = 4096: 122 registers, two blocks an SM) it was slower:
 *    0.051 vs 0.019 + 0.025 ms at 8192,4096,4096, and at K = 8192 the folding alone in
 *    two pieces of 16 chunks took 0.033 vs 0.011 ms (16384,8192,1024; call 2).
 * The block kernel (K up to 8192) replaced the folding kernel and launch_ln_forward's
 * statistics there (session 26; figures above fold_prep_kernel).
 * LNL_CUDA_FOLD_PREP_MAX_K=k (read on each call, for tests and timing) takes the block
 * kernel only up to K = k (at most 8192; 2048 or less: never, the two launches as before). */
int64_t fold_prep_max_stats_k() {
    const int64_t k = env_int64("LNL_CUDA_FOLD_PREP_MAX_K", PREP_BLOCK_MAX_K);
    return std::max(PREP_WARP_MAX_K, std::min(PREP_BLOCK_MAX_K, k));
}

cudaError_t launch_fold_prep(lnl_dtype dt, const void *x, float *mean, float *rstd,
                             int64_t stats_rows, float eps, const void *W, const void *gamma,
                             const void *beta, const void *bias, void *wfold, float *cd,
                             int *off_centre, int *block_flags, int64_t N, int64_t K,
                             const device_info &d, cudaStream_t s, int *blocks) {
    *blocks = 0;
    const int64_t max_k = fold_prep_max_stats_k(); /* the override read once a launch */
    if (K % 8 != 0 || (stats_rows > 0 && K > max_k)) return cudaErrorInvalidValue;
    if (dt == LNL_DTYPE_BF16)
        return launch_prep_t<__nv_bfloat16>(
            (const __nv_bfloat16 *)x, mean, rstd, stats_rows, eps, (const __nv_bfloat16 *)W,
            (const __nv_bfloat16 *)gamma, (const __nv_bfloat16 *)beta,
            (const __nv_bfloat16 *)bias, (__nv_bfloat16 *)wfold, cd, off_centre, block_flags, N, K,
            max_k, d, s, blocks);
    if (dt == LNL_DTYPE_F16)
        return launch_prep_t<__half>((const __half *)x, mean, rstd, stats_rows, eps,
                                     (const __half *)W, (const __half *)gamma,
                                     (const __half *)beta, (const __half *)bias, (__half *)wfold,
                                     cd, off_centre, block_flags, N, K, max_k, d, s, blocks);
    return cudaErrorInvalidValue;
}

} // namespace lnl
