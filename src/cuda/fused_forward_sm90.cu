/* FUSED forward on Hopper: y = LN(x) @ W^T + b with wgmma, for bf16/f16.
 *
 * A persistent grid (one CTA per SM) walks BM x BN tiles of y (BM = 128; BN = 128, 192
 * or 256: pick_bn) with three warpgroups and a ring of shared-memory stages, each holding a
 * 64-wide K slice of x (BM rows) and of the weight (BN rows), written by TMA with the
 * 128-byte swizzle:
 *  - warpgroup 0: the producer; one thread issues the TMA loads of each stage, which
 *    complete on the stage's "full" mbarrier;
 *  - warpgroups 1 and 2: the consumers, 64 rows each, issuing wgmma with both
 *    operands in shared memory. A stage is released on its "empty" mbarrier once both
 *    consumers' wgmma groups on it are done.
 * In the epilogue form with the pre-pass's statistics at BN = 256, CTAs run in clusters
 * of two on vertically adjacent tiles, each loading half of each W' slice by TMA multicast
 * into both (CL, below).
 * LN(x) never reaches global memory. mean/rstd come from a pre-pass (launch_fold_prep,
 * in the same launch as the weight folding where K <= 8192, else launch_ln_forward), or
 * from the kernel itself where N <= 4 BN (below; with several column tiles each sums a
 * share of the K slices and they merge their shares); y goes out through per-warp staging
 * buffers in shared memory (stmatrix) and TMA stores. Two forms of the same kernel:
 *  - the epilogue form (FOLD; the usual one): LN(x) W^T + b = rstd * (x W'^T - mean * c)
 *    + d with W' = T(W * gamma), c = W' 1 and d = W beta + b (fold_weight.cu). The main
 *    loop is a plain GEMM of the raw x with W'; the epilogue applies the row's mean and
 *    rstd and the column's c and d. Its cost: folding the weight (an N x K pass) and a
 *    cancellation: x W'^T carries mean * c, which the epilogue subtracts. In float32
 *    that loses ~|mean| * rstd times the accumulation's rounding (tensor-core
 *    accumulation measured with bench/epilogue_form_numerics.py --device cuda: y's
 *    bf16 error 2.4e-3 at |mean| * rstd = 500, K = 4096, against 2.1e-3 for the transform
 *    form), so it serves only calls whose rows all have |mean| * rstd <= 64. At BN = 256
 *    with the pre-pass's statistics and K <= 1024 its consumers run ping-pong: each on
 *    its own 64-row tiles, their main loops taking turns (PP, below);
 *  - the transform form: each consumer turns its half of the next stage's x slice into
 *    LN(x) in place (float32 arithmetic, rounded to T) while its wgmma on the current
 *    stage runs; the epilogue adds the bias. Exact for any row mean, but the
 *    normalization is paid once per (m-tile, n-tile, K slice), N / BN times a LayerNorm
 *    pass, and shares shared-memory bandwidth with wgmma: ~30% of the kernel at
 *    8192,4096,4096.
 * Both forms are launched. Rows too far off centre for the epilogue form set a flag
 * (found by the pre-pass, or by the kernel's own statistics); the epilogue form then
 * returns at once or stops at its next tile (or, computing the statistics itself, runs
 * to the end, since the transform form needs them all), and the transform form, which
 * returns at once (~2 us) unless the flag is set, redoes the call.
 *
 * Where it stands (H200, bf16, forward with the pre-passes, lnl-bench 2026-12-01,
 * docs/results/cuda/2026-12-01-fold): epilogue form 0.42-0.43 ms at 8192,4096,4096
 * (1.31-1.37x the cuBLAS GEMM alone; transform form 0.54-0.56), 0.094 ms at
 * 8192,768,3072 (0.106), 0.193 ms at 32768,4096,256 (0.214), 0.465 ms at 16384,8192,1024
 * (0.622). ncu at 8192,768,3072: GEMM kernel 72 us against cuBLAS's 63, weight folding
 * 6 us, statistics 10 us, the idle launch 2 us.
 * Variants measured and dropped (docs/results/cuda/2026-11-30-sm90-variants.md): LN(x)
 * formed in registers and fed to wgmma as the A operand (245 TFLOP/s when each
 * consumer waited for its group before the next slice; 1.02 ms when pipelined step
 * by step with two fragment buffers; 0.67 vs 0.63 ms when pipelined slice by slice);
 * three dedicated transformer warps (364 TFLOP/s, their latency exposed); 128-wide
 * tiles; one CTA per tile.
 *
 * Tails: TMA fills rows and columns outside x and W (or W') with zeros. Padded K
 * columns of the weight are zero, so whatever LN makes of the padded x columns
 * contributes exactly 0 (gamma and beta are taken as 0 there, so nothing is read past
 * K); rows past M and columns past N are computed but never stored. */

#include "cuda_common.cuh"
#include "fused_sm90.cuh"
#include "sm90_primitives.cuh"
#include "split_stats.cuh"
#include "sm90_tiles.cuh"
#include "tile_width.cuh"
#include "wgmma_ops.cuh"

namespace lnl {
namespace {

constexpr int BM = SM90_TILE_ROWS, BK = 64, THREADS = 384;
/* The warpgroups' registers after setmaxnreg: the producer gives up what the two consumer
 * warpgroups take. The pool setmaxnreg.inc draws from is the CTA's own allocation at
 * launch, 168 registers a thread (__launch_bounds__(384, 1): 65536 / 384 rounded down to a
 * multiple of 8), not the SM's 65536. Asking for more spins for ever: the SASS retries
 * USETMAXREG.TRY_ALLOC.CTAPOOL in a loop, and a branch whose warpgroups asked for 64 and
 * 224 (65536) hung in every launch on the H200 (docs/results/cuda/2026-12-01-session13). */
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
static_assert(128 * PRODUCER_REGS + 256 * CONSUMER_REGS <= 168 * THREADS,
              "setmaxnreg: more registers asked for than the CTA is given at launch");

/* The ping-pong epilogue form (PP; sessions 21-22): the epilogue form at BN = 256 with
 * the pre-pass's statistics, its two consumer warpgroups on different tiles of 64 x 256
 * (the CTA's tiles taken in turn) instead of the two halves of one 128 x 256 tile. The
 * producer fills the ring in tile order and the warpgroups' main loops take turns, so
 * one warpgroup's MMAs run while the other stores its tile: ncu (session 21, call 2)
 * found the tensor pipe idle while both warpgroups ran the epilogue of their shared tile
 * together, 24% of the warps' samples at 8192,1024,1024. A stage is then 64 rows of x and
 * 256 of W' (40 KB; four of them), released by the one warpgroup's four warps, and W'
 * crosses from L2 once per 64 rows instead of 128.
 * Off by default (PINGPONG_MAX_K = 0); LNL_CUDA_PINGPONG_MAX_K (below) takes it, and the
 * CUDA table runs its rows with it. Session 22 measured it 4-10% faster where K <= 1024
 * in short timings and shipped it there; session 23 timed both forms in one library,
 * in turn, beside nvidia-smi (bench/cuda/clocks_ab.py; docs/results/cuda/
 * 2026-12-02-session23): every large forward runs at the 700 W cap, and there the
 * ping-pong form holds a 5-12% lower SM clock than the cooperative form where K <= 1024
 * (W' crosses from L2 once per 64 rows instead of 128); at K = 4096 its clock is 2% lower
 * and its time 17% longer, which the clock does not explain. bf16 FUSED forward ms, cooperative vs ping-pong, medians of three
 * rounds back to back: 8192,768,3072 0.0873 vs 0.0895; 8192,1024,1024 0.0423 vs 0.0430;
 * 8192,512,2048 0.0468 vs 0.0478; 16384,1024,4096 0.2746 vs 0.2843; 8192,4096,4096 0.478
 * vs 0.559. In 0.15 s bursts from idle it did no better (0.0845 vs 0.0871 at
 * 8192,768,3072), and 4096,768,768 is 0.021-0.025 either way. Under ncu's fixed clocks
 * it is 6% faster at 8192,1024,1024 (session 22): it does more a clock and burns more
 * power doing it. It would pay with W' multicast to a CTA pair (less L2 traffic).
 * Its producer never stops early: the stop signal would reach one warpgroup's full
 * barrier, and the other's would wait for ever; an off-centre call runs this kernel to
 * its end before the transform form redoes it. -DLNL_SM90_PINGPONG=0: not even on request. */
#ifndef LNL_SM90_PINGPONG
#define LNL_SM90_PINGPONG 1
#endif
constexpr int64_t PINGPONG_MAX_K = 0;
/* LNL_CUDA_PINGPONG_MAX_K=k takes the ping-pong form up to K = k instead (0: never), so
 * that one build can time both forms at any K (bench/cuda/clocks_ab.py). */
static bool use_pingpong(int bn, bool stats_inside, int64_t K) {
    return LNL_SM90_PINGPONG && bn == 256 && !stats_inside &&
           K <= env_int64("LNL_CUDA_PINGPONG_MAX_K", PINGPONG_MAX_K);
}

/* The epilogue form with the pre-pass's statistics at BN = 256 runs in clusters of two
 * CTAs (CL, session 44): vertically adjacent tiles share their W' slices, each CTA loading
 * half of each and multicasting it to both (as cuBLAS's 2x1-cluster kernels do), so that
 * the L2 serves 32 KB instead of 48 KB a stage of the cooperative form (24 instead of 40 KB
 * a 64-row stage of the ping-pong form). The price: a stage is free only once both CTAs'
 * consumers have released it, and the form no longer stops early for off-centre rows.
 * Every large forward runs at the 700 W cap, and there CL holds a 15-30 MHz higher SM
 * clock. bf16 FUSED forward ms back to back at the cap, medians of three (clocks_ab.py,
 * session 44 call 1; docs/results/cuda/2026-12-04-session44), cooperative / CL / ping-pong
 * / ping-pong with CL: 8192,1024,1024 0.0408 / 0.0408 / 0.0422 / 0.0433; 8192,768,3072
 * 0.0834 / 0.0828 / 0.0871 / 0.0857; 8192,4096,4096 0.4776 / 0.4745 / 0.5124 / 0.5044;
 * 16384,1024,4096 0.2629 / 0.2590 / 0.2770 / 0.2633. Clusters make the ping-pong form
 * 1.6-4.9% faster at three of these (its clock 15-45 MHz up) and 2.6% slower at
 * 8192,1024,1024, and leave it 1.7-6.3% behind the cooperative form with clusters: its
 * lower clock is not the L2's traffic alone.
 * LNL_CUDA_SM90_CLUSTER (read on each call; tests and timing): 0 never; 1 also where a
 * narrower tile would be taken (pick_bn then keeps 256); unset: wherever the tiles are
 * 256 wide. -DLNL_SM90_CLUSTER=0: never. */
#ifndef LNL_SM90_CLUSTER
#define LNL_SM90_CLUSTER 1
#endif
static int64_t cluster_setting() { return env_int64("LNL_CUDA_SM90_CLUSTER", 2); }
static bool cluster_forced() { return LNL_SM90_CLUSTER && cluster_setting() == 1; }
static bool use_cluster(int bn, bool stats_inside) {
    return LNL_SM90_CLUSTER && bn == 256 && !stats_inside && cluster_setting() != 0;
}

template <int BN, bool PP = false> struct tile_cfg {
    /* 4 x 48 KB (BN = 256), 4 x 40 KB (192; 5 would not fit), 6 x 32 KB (128) */
    static constexpr int STAGES = BN >= 192 ? 4 : 6;
    static constexpr int TILE_M = PP ? 64 : BM; /* rows of x a stage holds */
    static constexpr int A_BYTES = TILE_M * BK * 2;
    static constexpr int B_BYTES = BN * BK * 2;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    /* the epilogue's staging area: per consumer warp, two buffers of 16 rows x 64 columns
     * of T (boxes of TMA stores) */
    static constexpr int OUT_BYTES = 8 * 16 * 128 * 2;
    /* stages, staging area, barriers, the in-kernel statistics' (mean, rstd) per tile row,
     * the producer's two words (below), and slack to align the ring to 1024 bytes (the
     * swizzle atom): 231512 bytes (BN = 256) of the 232448 an H200 block may have */
    static constexpr size_t SMEM =
        (size_t)STAGES * STAGE_BYTES + OUT_BYTES + (2 * STAGES + 1) * 8 + BM * 8 + 16 + 1024;
};

/* The kernel's forms (see the header): the transform form; the epilogue form with the
 * statistics from the pre-pass; the epilogue form computing them itself, for problems
 * with a single column of tiles (N <= BN), where each tile's CTA sees whole rows. */
enum form { FORM_TRANSFORM = 0, FORM_FOLD = 1, FORM_FOLD_STATS = 2 };

#if LNL_SM90A /* device helpers; the other compilation passes need none of them */

template <typename T> __device__ __forceinline__ uint32_t one_pair();
template <> __device__ __forceinline__ uint32_t one_pair<__nv_bfloat16>() { return 0x3F803F80u; }
template <> __device__ __forceinline__ uint32_t one_pair<__half>() { return 0x3C003C00u; }

/* The raw words of eight consecutive values of gamma (ones when absent) and beta
 * (zeros when absent) from column k; zeros past K (K % 8 == 0, so a group of eight
 * is all inside or all outside). Loaded a slice ahead of their use, so the load's
 * latency hides behind a slice of wgmma. */
template <typename T>
__device__ __forceinline__ void affine_words(const T *gamma, const T *beta, int k, int K,
                                             uint4 *gu, uint4 *bu) {
    const bool in = k < K;
    const uint32_t one = one_pair<T>();
    *gu = !in ? make_uint4(0, 0, 0, 0)
              : gamma ? __ldg((const uint4 *)(gamma + k)) : make_uint4(one, one, one, one);
    *bu = in && beta ? __ldg((const uint4 *)(beta + k)) : make_uint4(0, 0, 0, 0);
}
template <typename T>
__device__ __forceinline__ void affine_unpack(uint4 gu, uint4 bu, float *g, float *b) {
    const uint32_t gw[4] = {gu.x, gu.y, gu.z, gu.w}, bw[4] = {bu.x, bu.y, bu.z, bu.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float2 gv = unpack2<T>(gw[i]), bv = unpack2<T>(bw[i]);
        g[2 * i] = gv.x, g[2 * i + 1] = gv.y, b[2 * i] = bv.x, b[2 * i + 1] = bv.y;
    }
}

/* bias[col], bias[col + 1] as one word of two T (zeros past N or without a bias). */
template <typename T>
__device__ __forceinline__ uint32_t bias_word(const T *bias, int col, int N, bool pairs) {
    if (!bias || col >= N) return 0u;
    if (pairs && col + 1 < N) return __ldg((const unsigned int *)(bias + col));
    const uint32_t lo = __ldg((const unsigned short *)(bias + col));
    const uint32_t hi = col + 1 < N ? __ldg((const unsigned short *)(bias + col + 1)) : 0u;
    return lo | hi << 16;
}

/* 16 bytes of x in shared memory -> the same 16 bytes of LN(x), as
 * (x * rstd + nmr) * gamma + beta with nmr = -mean * rstd: two FMAs an element, 5%
 * faster end to end than (x - mean) * rstd * gamma + beta (H200, bf16). The rounding
 * of nmr is 2^-24 of |mean| * rstd, far below the bf16/f16 rounding of the result
 * unless |mean| exceeds the row's spread by ~1e4, where x itself in bf16 (8 bits) or
 * f16 (11 bits) no longer resolves the spread anyway. */
template <typename T>
__device__ __forceinline__ void normalize8(uint32_t addr, float nmr, float rs, const float *g,
                                           const float *b) {
    uint32_t w[4];
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "r"(addr));
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float2 v = unpack2<T>(w[i]);
        w[i] = pack2<T>(fmaf(fmaf(v.x, rs, nmr), g[2 * i], b[2 * i]),
                        fmaf(fmaf(v.y, rs, nmr), g[2 * i + 1], b[2 * i + 1]));
    }
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(w[0]), "r"(w[1]),
                 "r"(w[2]), "r"(w[3])
                 : "memory");
}
#endif

#if LNL_SM90A
/* A load that orders this thread's later loads after it, device-wide (the split
 * statistics' count of published shares). */
__device__ __forceinline__ int ld_acquire_gpu(const int *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* The kernel's body in either form: FOLD, the epilogue form (B is the folded W', the
 * main loop a plain GEMM of raw x, LN applied per output element in the epilogue), or
 * the transform form (B is W, each x slice normalized in shared memory before wgmma). */
template <typename T, int BN, int FORM, bool PP, bool CL>
__device__ __forceinline__ void fwd_body(const CUtensorMap *map_x, const CUtensorMap *map_b,
                                         const CUtensorMap *map_y,
                                         float *__restrict__ mean, float *__restrict__ rstd,
                                         const T *__restrict__ gamma, const T *__restrict__ beta,
                                         const T *__restrict__ bias, const float *__restrict__ cd,
                                         int *__restrict__ off_centre,
                                         const int *__restrict__ block_flags, int flag_blocks,
                                         float eps, float4 *__restrict__ spart,
                                         int *__restrict__ scount,
                                         T *__restrict__ y, int64_t M, int K, int N, bool y_pairs,
                                         bool y_vec16, bool bias_pairs) {
    constexpr bool FOLD = FORM != FORM_TRANSFORM, STATS = FORM == FORM_FOLD_STATS;
    static_assert(!PP || (BN == 256 && FORM == FORM_FOLD), "ping-pong: the epilogue form at BN = 256");
    static_assert(!CL || (BN == 256 && FORM == FORM_FOLD), "CL: the epilogue form at BN = 256");
    using C = tile_cfg<BN, PP>;
    constexpr int S = C::STAGES;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem =
        (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    unsigned char *sA = smem, *sB = smem + S * C::A_BYTES, *sOut = sB + S * C::B_BYTES;
    uint64_t *full = (uint64_t *)(sOut + C::OUT_BYTES), *empty = full + S;
    /* FORM_FOLD: completes once warp 1 has written *verdict (below). The producer waits on
     * it instead of spinning on the word: a spin is a data race to racecheck (two warps, no
     * barrier between), which session 29's run.sh reported once a quick-table row gave a
     * CTA more than one tile of this form. */
    uint64_t *verdict_bar = empty + S;
    float2 *sstat = (float2 *)(verdict_bar + 1); /* STATS: (mean, rstd) of each tile row */
    /* FOLD: set by the producer when it stops early; FORM_FOLD: the pre-pass's verdict
     * on the rows (1: all fit this form, 2: some do not) */
    volatile int *stop = (volatile int *)(sstat + BM), *verdict = stop + 1;

    const int64_t tiles_m = (M + C::TILE_M - 1) / C::TILE_M, tiles_n = (N + BN - 1) / BN;
    const int64_t tiles = tiles_m * tiles_n;
    const int KT = (K + BK - 1) / BK;
    const int wg = threadIdx.x / 128;
    /* The CTA's work comes in units: a tile, or (CL) a pair of vertically adjacent tiles,
     * whose two m-tiles the cluster's two CTAs take (rank 0 the upper), both walking the
     * same units in the same order, so that every W' slice one loads half of is the
     * other's too (tile_at's order over tiles 2 TILE_M rows high). Where tiles_m is odd,
     * the last pairs' lower tiles lie past M: their x reads as zeros and nothing of them is
     * stored, but the CTA still loads its half of W' for the other. */
    const uint32_t rank = CL ? cluster_rank() : 0;
    const int64_t pairs_m = (tiles_m + 1) / 2;
    const int64_t units = CL ? pairs_m * tiles_n : tiles;
    const int64_t unit0 = CL ? blockIdx.x / 2 : blockIdx.x, ustep = CL ? gridDim.x / 2 : gridDim.x;
    /* STATS: a row's statistics are shared by its tiles_n column tiles (split statistics
     * when tiles_n > 1, below). Their tiles are consecutive in this order, and the host
     * makes the grid a multiple of tiles_n, so the tiles of one row of tiles run in the
     * same round of the persistent grid and wait for one another only briefly. The other
     * forms walk the grouped order of tile_at. */
    auto tile_of = [&](int64_t b, int64_t *m0, int *n0) {
        if constexpr (STATS) {
            *m0 = b / tiles_n * BM;
            *n0 = (int)(b % tiles_n) * BN;
        } else if constexpr (CL) {
            tile_at(b, pairs_m, tiles_n, BN, m0, n0, 2 * C::TILE_M);
            *m0 += rank * C::TILE_M;
        } else {
            tile_at(b, tiles_m, tiles_n, BN, m0, n0, C::TILE_M);
        }
    };

    if (threadIdx.x == 0) {
        for (int i = 0; i < S; i++) {
            mbar_init(&full[i], 1);
            /* one arrival per consumer warp (PP: of one warpgroup), CL: of both CTAs, since
             * each CTA's producer writes half of the stage in the other */
            mbar_init(&empty[i], (PP ? 4 : 8) * (CL ? 2 : 1));
        }
        mbar_init(verdict_bar, 1);
        *stop = 0;
        *verdict = 0;
        mbar_init_fence();
    }
    /* CL: the other CTA's barriers are initialized before anything arrives on them */
    if constexpr (CL) cluster_sync();
    else __syncthreads();

    /* Stage use number `it` counts K slices over all of this CTA's tiles, in the same
     * order in the producer and the consumers: slot it % S, phase parity (it / S) & 1. */
    if (wg == 0) { /* ---- producer ---- */
        regs_dealloc<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            tma_prefetch_map(map_x);
            tma_prefetch_map(map_b);
            if (y_vec16) tma_prefetch_map(map_y);
            uint32_t it = 0;
            int v = 0; /* FORM_FOLD: the verdict, once read */
            for (int64_t tile = unit0; tile < units; tile += ustep) {
                /* FORM_FOLD: once some row is known to be off centre, the transform form
                 * will redo the whole call and the rest of this kernel's work is wasted:
                 * the producer stops at the next tile and tells the consumers through
                 * *stop and a "full" barrier completed without data. Not before the first
                 * tile, whose loads would wait for the answer; later the ring holds a few
                 * slices of work while it waits. The answer is the verdict warp 1 formed
                 * from the pre-pass's block flags.
                 * FORM_FOLD_STATS never stops: its tiles write the rows' statistics, which
                 * the transform form reads back when it redoes the call. Stopping on its
                 * own flag (before session 11) left the rows of the tiles not yet begun
                 * without statistics, and the transform form read whatever mean/rstd
                 * held: with 313 tiles on 132 CTAs, y came out NaN or wrong in the last
                 * round's rows (test_cuda_stats_inside_redo_many_tiles). Off-centre data
                 * is the rare case; it costs the whole GEMM twice there.
                 * Nor do PP and CL: a stop reaching one consumer warpgroup (PP) or one CTA
                 * of the pair (CL) would leave the other waiting for ever. */
                if (FORM == FORM_FOLD && !PP && !CL && tile != unit0) {
                    if (v == 0) {
                        mbar_wait(verdict_bar, 0);
                        v = *verdict;
                    }
                    if (v == 2) {
                        /* the consumers' reads of *stop at earlier tiles come before this
                         * write: wait for the release of the last stage filled (use it - 1,
                         * the previous tile's last slice), which follows them in every
                         * consumer warp. The wait below, for the slot's use it - S, does
                         * not order them where a tile has fewer slices than the ring has
                         * stages (racecheck reported it at K = 72; session 29, call 3). */
                        if (it > 0) mbar_wait(&empty[(it - 1) % S], ((it - 1) / S) & 1);
                        const int s = it % S;
                        mbar_wait(&empty[s], ((it / S) & 1) ^ 1);
                        *stop = 1;
                        mbar_arrive(&full[s]); /* release: *stop is seen with the phase */
                        break;
                    }
                }
                int64_t m0;
                int n0;
                tile_of(tile, &m0, &n0);
                for (int kt = 0; kt < KT; kt++, it++) {
                    const int s = it % S;
                    mbar_wait(&empty[s], ((it / S) & 1) ^ 1);
                    mbar_arrive_expect_tx(&full[s], C::STAGE_BYTES);
                    tma_load_2d(sA + s * C::A_BYTES, map_x, kt * BK, (int32_t)m0, &full[s]);
                    if constexpr (CL) /* this CTA's half of the W' slice, into both */
                        tma_load_2d_multicast(sB + s * C::B_BYTES + rank * (BN / 2) * 128, map_b,
                                              kt * BK, n0 + (int)rank * (BN / 2), &full[s], 0x3);
                    else
                        tma_load_2d(sB + s * C::B_BYTES, map_b, kt * BK, n0, &full[s]);
                }
            }
            /* CL: the other CTA's consumers arrive on this CTA's empty barriers up to its
             * last stage; this thread stays (and the CTA's shared memory with it) until
             * the last S uses are released, so that no arrival reaches an exited CTA */
            if constexpr (CL)
                for (uint32_t u = it > (uint32_t)S ? it - S : 0; u < it; u++)
                    mbar_wait(&empty[u % S], (u / S) & 1);
        } else if (FOLD && threadIdx.x / 32 == 1) {
            /* the pre-pass's verdicts, one word a block of its grid, read beside the
             * first tile's loads; any off-centre row (or overflowed W', f16) sets the flag
             * for the transform form (FORM_FOLD_STATS only raises it: it never stops). */
            const int lane = threadIdx.x % 32;
            int off = 0;
            for (int i = lane; i < flag_blocks; i += 32) off |= block_flags[i];
            const bool any = __any_sync(0xffffffffu, off != 0);
            if (lane == 0) {
                if (any) *off_centre = 1;
                if (!STATS) {
                    *verdict = any ? 2 : 1;
                    mbar_arrive(verdict_bar); /* release: the word is seen with the phase */
                }
            }
        }
        return;
    }

    /* ---- consumers: warpgroup cw owns tile rows cw*64 .. cw*64+63 (PP: all 64 rows of
     * every other tile) ---- */
    regs_alloc<CONSUMER_REGS>();
    /* PP: through a shuffle, so that ptxas sees the warpgroup index (and the tile loop's
     * bounds, which depend on it) as warp-uniform; computed from threadIdx.x it took the
     * loop for divergent and serialized every wgmma (C7518) */
    const int cw = PP ? __shfl_sync(0xffffffffu, wg - 1, 0) : wg - 1;
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int g = lane >> 2, q = lane & 3;
    /* The transform: thread t rewrites 16-byte chunk tc of rows tr, tr+16, tr+32, tr+48
     * of its warpgroup's half (a warp covers 4 whole rows: conflict-free). */
    const int tc = t % 8, tr = cw * 64 + t / 8;
    /* What a tile's transform needs, loaded early so that no load's latency sits
     * between a barrier and the work behind it: each tile's row statistics during the
     * previous tile's last slice, and gamma/beta of each slice during the one before. */
    float mu[4], rs[4];
    auto load_stats = [&](int64_t tile) {
        int64_t m0;
        int n0;
        tile_at(tile, tiles_m, tiles_n, BN, &m0, &n0);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t r = m0 + tr + 16 * i;
            rs[i] = r < M ? rstd[r] : 0.f;
            mu[i] = r < M ? mean[r] : 0.f;
        }
    };
    uint4 g_next, b_next;
    if constexpr (!FOLD) {
        if (blockIdx.x < tiles) load_stats(blockIdx.x);
        affine_words<T>(gamma, beta, 8 * tc, K, &g_next, &b_next);
    }
    /* this warp's staging area for the epilogue: 16 rows of 256 bytes */
    unsigned char *stage_out = sOut + (cw * 4 + warp) * 16 * 256;
    /* STATS: thread t reads the same 16-byte chunks the transform would rewrite (chunk tc of rows
     * tr + 16i) and sums, per row, the deviations d = x - shift and their squares, where shift is
     * the mean of the row's first 64-column slice (so that a row like 1e3 + randn keeps float32
     * precision). After the last slice the row's 8 threads add their sums (stats_finish) and one
     * cancellation gives its M2. Shifted sums cost 4 instructions an element where merging chunk
     * by chunk (the first version, 1679e8f) cost ~6 in long dependency chains: its tensor pipe
     * was active 47% of the kernel at 32768,4096,256, its issue slots 34% (ncu, H200). Fused
     * forward there, bf16, two same-run rounds (lnl-bench, H200,
     * docs/results/cuda/2026-12-01-run-3a3072a): 0.151-0.153 ms, against 0.156-0.161 with a
     * branch per row, 0.168-0.174 chunk by chunk and 0.193 with the pre-pass. Their rounding: M2
     * = S2 - S1^2 / n loses ~eps * n (mean - shift)^2, and since shift is the mean of 64 of the
     * row's own values (of the tile's share: split statistics), (shift - mean)^2 <= M2 / 64, so
     * the row's variance keeps a relative error below ~eps * (3 + K / 32) times the summation's
     * growth, whatever the data (a row whose whole variance sits in its first slice is that
     * bound's worst case); for ordinary rows it is a few eps.
     * Fewer instructions for centred rows, measured and not kept (session 37, call 1;
     * docs/results/cuda/2026-12-04-session37): a warp whose rows all had |shift| <= 4 std
     * of their first slice summed x^2 unshifted, with the sums of x on the ALU (f1, three
     * instructions an element) or from a ones-column wgmma m64n8k16 (f2, two). FUSED
     * forward ms against this code, medians of three rounds in turn (bf16): 32768,4096,256
     * -2.3% / +1.0%; 65536,1024,256 -3.2% / +1.7%; 16384,2048,128 +3.5% / +4.2%;
     * 16384,8192,1024 (split) +5.6% / -0.7%; f16 (two rounds) 32768,4096,256 +2.9% / -4.6%.
     * A quarter or half of the instructions gave back at most 4% of the ~35% the sums cost,
     * and lost as much elsewhere. f2's tensor-core sums of x were also less exact: they
     * failed the f16 w_overflow tests (y error up to 1.4e-2 against a bound of 5e-4),
     * whose x column sits at its row's mean. Nor do other warps help (call 4, a probe
     * with no statistics plus the sums' count of plain FFMAs): on the consumer threads
     * the FFMAs alone cost 42-62% of what the statistics cost, and on the producer
     * warpgroup's three idle warps they cost more than the statistics themselves
     * (32768,4096,256: 0.1130 ms without, 0.1305 / 0.1629 with them, 0.1411 shipped). */
    float sshift[4], ss1[4], ss2[4];
    int scnt = 0; /* chunks summed so far (the same for the thread's four rows) */

    /* PP: warpgroup cw takes the CTA's tiles cw, cw + 2, ...; it0 counts stage uses over all
     * of the CTA's tiles, as the producer does */
    constexpr int WG_STEP = PP ? 2 : 1;
    uint32_t it0 = PP ? cw * KT : 0;
    /* a stage's release: one arrival a warp, on both CTAs' barriers with CL */
    auto release = [&](uint32_t use) {
        if (lane == 0) {
            mbar_arrive(&empty[use % S]);
            if constexpr (CL) mbar_arrive_cluster(&empty[use % S], rank ^ 1);
        }
    };
    for (int64_t tile = unit0 + (PP ? cw : 0) * ustep; tile < units;
         tile += WG_STEP * ustep, it0 += WG_STEP * KT) {
        int64_t m0;
        int n0;
        tile_of(tile, &m0, &n0);
        /* STATS: this tile sums the K slices kt with kt % tn == jn, a 1/tn share */
        const int tn = STATS ? (int)tiles_n : 1, jn = STATS ? n0 / BN : 0;
        /* not zeroed: the tile's first wgmma ignores the old values (accumulate = 0);
         * zeroing took 64 instructions a thread and tile between two tiles' MMAs */
        float acc[BN / 2];

        /* LN(x) written over x in shared memory, then wgmma from shared memory. */
        auto transform = [&](int kt) {
            const uint32_t it = it0 + kt;
            const int s = it % S;
            const uint4 gu = g_next, bu = b_next;
            const int k_next = kt + 1 < KT ? kt + 1 : 0; /* or the next tile's first */
            affine_words<T>(gamma, beta, k_next * BK + 8 * tc, K, &g_next, &b_next);
            float gg[8], bb[8];
            affine_unpack<T>(gu, bu, gg, bb);
            mbar_wait(&full[s], (it / S) & 1);
            const uint32_t base = smem_addr(sA + s * C::A_BYTES);
#pragma unroll
            for (int i = 0; i < 4; i++) { /* 128-byte swizzle: chunk c of row r sits at c ^ (r % 8) */
                const int r = tr + 16 * i;
                normalize8<T>(base + r * 128 + ((tc ^ (r & 7)) << 4), -mu[i] * rs[i], rs[i], gg,
                              bb);
            }
            fence_proxy_async(); /* the wgmma (async proxy) reads what these stores wrote */
            named_bar_sync(1 + cw, 128);
        };
        /* STATS: the thread's four 16-byte chunks of slice stage s (chunk tc of rows
         * tr + 16i), loaded by stats_load and summed by stats_slice. */
        auto stats_load = [&](int s, uint32_t (&u)[4][4]) {
            const uint32_t base = smem_addr(sA + s * C::A_BYTES);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int r = tr + 16 * i;
                asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(u[i][0]), "=r"(u[i][1]), "=r"(u[i][2]), "=r"(u[i][3])
                             : "r"(base + r * 128 + ((tc ^ (r & 7)) << 4)));
            }
        };
        /* The four rows' loads come first and one branch goes around their arithmetic, so
         * that the four rows' independent sums interleave (a branch per row serialized
         * them, and each thread waited on one dependency chain at a time). */
        auto stats_slice = [&](int kt, const uint32_t (&u)[4][4]) {
            const bool valid = kt * BK + 8 * tc < K; /* K % 8 == 0: whole chunks */
            if (kt == jn) { /* the shift: the mean of each row's valid chunks in this slice */
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    float sum = 0.f;
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const float2 f = unpack2<T>(u[i][j]);
                        sum += f.x + f.y;
                    }
                    if (!valid) sum = 0.f;
#pragma unroll
                    for (int o = 1; o < 8; o <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
                    sshift[i] = sum / (float)(8 * min(8, K / 8 - 8 * kt));
                    ss1[i] = ss2[i] = 0.f;
                }
            }
            if (valid) {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    /* two independent pairs of sums per row: shorter dependency chains */
                    float a0 = 0.f, a1 = 0.f, q0 = 0.f, q1 = 0.f;
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        const float2 f = unpack2<T>(u[i][j]);
                        const float d0 = f.x - sshift[i], d1 = f.y - sshift[i];
                        a0 += d0, a1 += d1;
                        q0 = fmaf(d0, d0, q0), q1 = fmaf(d1, d1, q1);
                    }
                    ss1[i] += a0 + a1;
                    ss2[i] += q0 + q1;
                }
                scnt++;
            }
        };
        /* STATS with tn > 1 column tiles (split statistics): each tile has written its
         * share of its rows' statistics to spart; the CTA counts itself in once all its
         * consumer threads' stores are fenced, waits for the other tn - 1 tiles of its
         * row of tiles (consecutive tiles, in the same round of the grid), and the shares
         * are merged with Chan's formula in a fixed order (bitwise repeatable; below). The
         * tile with jn == 0 writes mean/rstd and the off-centre flag, as the single tile
         * does with tn == 1. No deadlock: a tile publishes its share before it waits, so
         * a CTA waits only on tiles of its own round, which every CTA of the persistent
         * grid (all resident) reaches without waiting on a later one. scount (one word a
         * row of tiles) is zeroed before each call. */
        /* A row's statistics: to shared memory for this tile's epilogue and, by the one tile
         * that owns the row's outputs, to mean/rstd and the off-centre flag. */
        auto publish_row = [&](int r, int64_t row, float mean_r, float rs, bool owner) {
            sstat[r] = make_float2(mean_r, rs);
            if (owner && row < M) {
                mean[row] = mean_r;
                rstd[row] = rs;
                if (off_centre_row(mean_r, rs)) *off_centre = 1;
            }
        };
        auto split_stats_merge = [&](int64_t m0) {
            __threadfence(); /* this thread's share, device-wide, before the count */
            named_bar_sync(3, 256);
            if (threadIdx.x == 128) {
                int *cnt = scount + m0 / BM;
                __threadfence();
                atomicAdd(cnt, 1);
                while (ld_acquire_gpu(cnt) < tn) {
                }
            }
            named_bar_sync(3, 256);
            /* Two threads a row, lanes 2q and 2q + 1 of the row's warpgroup (so that the
             * rows stay the warpgroup's own): each loads its half of the tn shares at once
             * and merges them in tile order, then the even lane merges the odd lane's half
             * into its own. One thread merging all tn shares of four rows had the loads
             * one after another (the SASS: one register for every load, 16 round trips
             * to L2 a tile at tn = 4, 64 at tn = 16). */
            const int r = cw * 64 + (int)(threadIdx.x % 128) / 2, half = (tn + 1) / 2;
            const int j0 = (threadIdx.x & 1) * half, j1 = min(tn, j0 + half);
            const int64_t row = m0 + r;
            float nn = 0.f, mm = 0.f, q = 0.f;
            /* up to 4 loads in flight at once (8 made ptxas spill in the BN = 256 kernels) */
            constexpr int HALF_MAX = SPLIT_STATS_MAX_COL_TILES / 2, BATCH = HALF_MAX < 4 ? HALF_MAX : 4;
            for (int jb = j0; row < M && jb < j1; jb += BATCH) {
                float4 p[BATCH];
#pragma unroll
                for (int u = 0; u < BATCH; u++)
                    /* L2, not L1: another SM wrote it */
                    p[u] = jb + u < j1 ? __ldcg(spart + (int64_t)(jb + u) * M + row)
                                       : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                for (int u = 0; u < BATCH; u++)
                    chan_merge(nn, mm, q, p[u].x, p[u].y, p[u].z); /* count 0: no change */
            }
            const float n_o = __shfl_xor_sync(0xffffffffu, nn, 1);
            const float m_o = __shfl_xor_sync(0xffffffffu, mm, 1);
            const float q_o = __shfl_xor_sync(0xffffffffu, q, 1);
            if ((threadIdx.x & 1) == 0) {
                chan_merge(nn, mm, q, m_o, q_o, n_o);
                publish_row(r, row, mm, rstd_of(q, K, eps), jn == 0);
            }
        };
        /* STATS, after the last slice: the 8 threads of each row add their sums (fixed xor
         * order: bitwise repeatable); the thread with chunk 0
         * writes the row's mean and rstd to shared memory for the epilogue, to global
         * memory (outputs of the forward) and raises *off_centre where the epilogue
         * form loses accuracy (the transform form then redoes the call). */
        /* The row's 8 threads share its shift, so their shifted sums add (three xor levels of
         * two sums and a count; every lane ends with the same bits, since each level adds
         * the same two values), and one cancellation gives the row's M2. Until session 38
         * each thread turned its sums into (count, mean, M2) and the 8 merged those by
         * Chan's formula, three levels with a division each: 5400 SASS instructions in the
         * BN = 256 statistics kernel against 4888 now, and the same worst errors in
         * test_split_stats_host's model (rstd 1.34e-6). bf16 FUSED forward ms, medians of
         * three rounds in turn, Chan / plain sums (session 38, call 5;
         * docs/results/cuda/2026-12-04-session38): 32768,4096,256 0.1409 / 0.1391;
         * 65536,1024,256 0.0948 / 0.0923; 12800,4096,256 0.0752 / 0.0750; 16384,2048,128
         * 0.0458 / 0.0451; 12800,4096,768 0.1658 / 0.1656; 8192,4096,2048 0.2215 / 0.2177;
         * 16384,8192,1024 0.4240 / 0.4330 (its rounds spread 0.404-0.433); f16 (two rounds)
         * 32768,4096,256 0.1422 / 0.1397, 16384,8192,1024 0.4387 / 0.4061. At the power cap
         * (call 6, clocks_ab.py, two rounds): 65536,1024,256 -2.0%, 12800,4096,256 -1.2%,
         * 16384,8192,1024 -0.6%, 12800,4096,768 -0.4%, 32768,4096,256 +0.2%. */
        auto stats_finish = [&](int64_t m0) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                /* the row's count, sums of deviations from the shift and of their squares */
                float n = 8.f * (float)scnt, a = scnt ? ss1[i] : 0.f, q = scnt ? ss2[i] : 0.f;
#pragma unroll
                for (int o = 1; o < 8; o <<= 1) {
                    a += __shfl_xor_sync(0xffffffffu, a, o);
                    q += __shfl_xor_sync(0xffffffffu, q, o);
                    n += __shfl_xor_sync(0xffffffffu, n, o);
                }
                const float mu = n > 0.f ? a / n : 0.f;
                const float m2 = n > 0.f ? fmaxf(fmaf(-a, mu, q), 0.f) : 0.f;
                if (tc == 0) {
                    const int r = tr + 16 * i;
                    const int64_t row = m0 + r;
                    if (tn == 1) {
                        publish_row(r, row, sshift[i] + mu, rstd_of(m2, K, eps), true);
                    } else if (row < M) { /* this tile's share: (mean, M2, count) */
                        spart[(int64_t)jn * M + row] =
                            make_float4(n > 0.f ? sshift[i] + mu : 0.f, m2, n, 0.f);
                    }
                }
            }
            scnt = 0;
            if (tn > 1) split_stats_merge(m0);
            named_bar_sync(1 + cw, 128); /* sstat's rows of this warpgroup are written */
        };
        if constexpr (FOLD) { /* the epilogue's {c, d} lines into L1 (BN * 8 bytes) */
            const int64_t first = 2 * (int64_t)n0, end = 2 * (((int64_t)N + 7) / 8 * 8);
            if (lane < BN / 16 && first + 32 * lane < end)
                asm volatile("prefetch.global.L1 [%0];" ::"l"(cd + first + 32 * lane));
        } else {
            transform(0);
        }
        int stats_kt = jn; /* STATS: the next slice of this tile's share (kt % tn == jn) */
        /* PP: the two warpgroups' main loops take turns, each after the other's last wait
         * on a full barrier (named barriers 4 and 5; the epilogues overlap the other's
         * main loop). The turns are what make the full barriers' parities right: a
         * warpgroup that started its tile while the other was still in its own would wait
         * for slot uses KT / S phases ahead of the ring, and a parity wait cannot tell use
         * u from u - 2 (run on the H200, K = 1024: it read the other's stages and the
         * kernel failed with an unspecified launch failure). */
        if constexpr (PP)
            if (cw == 1 || tile != unit0) named_bar_sync(4 + cw, 256);
        for (int kt = 0; kt < KT; kt++) {
            const int s = (it0 + kt) % S;
            if constexpr (FOLD) {
                mbar_wait(&full[s], ((it0 + kt) / S) & 1);
                /* the producer stopped (off-centre rows). Never set in FORM_FOLD_STATS, whose
                 * producer runs every tile, but the test stays: without it that form ran 7%
                 * (32768,4096,256) to 10% (12800,4096,256) slower, kernel 0.139 vs 0.130 ms
                 * and 0.069 vs 0.062-0.063 (H200, bf16, -DLNL_PDL=0, session 11 call 3);
                 * ptxas then schedules the slice loop differently. */
                /* Lane 0 reads *stop (its arrival on the empty barrier orders the read
                 * before the producer's write) and the shuffle gives the warp its value.
                 * FORM_FOLD_STATS keeps every lane's read: nothing writes *stop there, and
                 * the lane-0 read made 32768,4096,256's forward 3.7% slower (0.1459 vs
                 * 0.1407 ms, medians of three, H200, bf16, session 30 call 1). */
                bool stop_here;
                if constexpr (STATS) {
                    stop_here = kt == 0 && __shfl_sync(0xffffffffu, *stop, 0);
                } else {
                    int stop_now = 0;
                    if (kt == 0 && lane == 0) stop_now = *stop;
                    stop_here = kt == 0 && __shfl_sync(0xffffffffu, stop_now, 0);
                }
                if (stop_here) {
                    /* Before leaving, the earlier tiles' TMA stores of y must have read
                     * the staging (lane 0's groups; the other lanes have none). ptxas
                     * serialized every wgmma of the kernel (C7518) when this wait sat on
                     * a path it could not prove warp-uniform: *stop read by each lane,
                     * or the wait under `if (lane == 0)`; lane 0's value through a
                     * shuffle is. The ten C7517 notes ptxas prints for the epilogue forms
                     * ("warpgroup.wait is injected ... to allow use of registers defined
                     * by GMMA") are all at this return (the PTX lines they name map to
                     * it; session 26): a wait on the way out of an off-centre call, none
                     * in the main loop. */
                    bulk_wait_all();
                    return;
                }
            }
            const uint64_t adesc = desc_kmajor_sw128(sA + s * C::A_BYTES + (PP ? 0 : cw * 64 * 128));
            const uint64_t bdesc = desc_kmajor_sw128(sB + s * C::B_BYTES);
            wgmma_fence();
#pragma unroll
            for (int st = 0; st < 4; st++)
                wgmma_ss<T, BN>(acc, adesc + 2 * st, bdesc + 2 * st, kt > 0 || st > 0);
            wgmma_commit();
            /* STATS: this slice's chunks are loaded here, between the group's issue and the
             * wait for the previous one, so that the wait hides their latency (the loads sit
             * behind wgmma's own shared-memory reads). Loaded right before the sums, their
             * first use was ncu's top stall of the kernel (short scoreboard, ~13% of the
             * warp samples at 32768,4096,256). Forward ms, three rounds, before -> after
             * (H200, bf16, session 19): 16384,2048,128 0.0476 -> 0.0436; 32768,4096,256
             * 0.1438 -> 0.1418; 65536,1024,256 and 12800,4096,256 unchanged within noise.
             * The sums cost the kernel ~35% at 32768,4096,256 (ncu: 165.7 us, 122.9 without
             * them, cuBLAS 120.8; the top stall a long-scoreboard wait where the loads'
             * address register is next written). Two placements measured no better (session
             * 36, call 5; FUSED forward ms, medians of three rounds, this / loads before the
             * group's issue / sums a slice later, after the next group's issue): 32768,4096,256
             * 0.1409 / 0.1436 / 0.1455; 65536,1024,256 0.0948 / 0.0936 / 0.0974;
             * 12800,4096,256 0.0777 / 0.0752 / 0.0793; 12800,4096,768 0.1683 / 0.1670 / 0.1679.
             * Session 18's probes had already put the whole cost in the sums' arithmetic
             * (the loads alone cost nothing): where it sits in the slice does not change it
             * (docs/results/cuda/2026-12-04-session36). */
            uint32_t su[4][4];
            if constexpr (STATS)
                if (kt == stats_kt) stats_load(s, su);
            /* The previous slice's group is done: release its stage before transforming
             * the next one, so the producer can refill it while this slice's group and
             * the transform run. Released after the transform instead, three of the four
             * stages stayed held and TMA could run only one slice ahead: 0.63 vs 0.61 ms
             * at 8192,4096,4096 and 0.259 vs 0.238 ms at 32768,4096,256 (H200). */
            wgmma_wait<1>();
            if (kt > 0) release(it0 + kt - 1);
            /* STATS: this slice's statistics, while its group runs, after the previous
             * stage's release (this slice's stage stays held until the next slice's). Before
             * the release, the ~150 instructions of each slice's sums held every stage that
             * much longer: the forward 2-7% slower, 0.1504 vs 0.1470 ms at 32768,4096,256,
             * 0.0826 vs 0.0764 at 12800,4096,256 (H200, bf16, three rounds, session 18). */
            if constexpr (STATS)
                if (kt == stats_kt) {
                    stats_slice(kt, su);
                    stats_kt += tn;
                }
            if constexpr (!FOLD)
                if (kt + 1 < KT) transform(kt + 1); /* overlaps the group just issued */
        }
        /* PP: the other warpgroup's turn, if the CTA has a next tile (no arrival is left
         * pending at exit) */
        if constexpr (PP)
            if (tile + ustep < units) named_bar_arrive(5 - cw, 256);
        if constexpr (STATS) stats_finish(m0);
        const int64_t wrow = m0 + (PP ? 0 : cw * 64) + warp * 16; /* the warp's first row */
        /* While the last group runs: the transform form loads the next tile's
         * statistics and this tile's bias; the epilogue form the statistics of this
         * thread's two rows (g, g + 8 of its warp's 16) and the first 128 columns' {c, d}. */
        uint32_t bias_w[BN / 8]; /* columns n0 + 8j + 2q, + 1 */
        float emu[2], ers[2];
        /* {c, d} of columns n0 + 64 * quarter + 8jj + 2q, + 1: a quarter of the tile's
         * columns at a time, so that they take no more registers than bias_w (a whole
         * half would spill at ptxas's 168-register cap); read from L1, where each
         * tile's lines were prefetched as its main loop began */
        float4 cdv[8];
        auto cd_at = [&](int col) { /* cd is padded with zeros to whole tiles (fold_cd_columns) */
            return __ldg((const float4 *)(cd + 2 * col));
        };
        auto load_cd = [&](int quarter) {
#pragma unroll
            for (int jj = 0; jj < 8; jj++) cdv[jj] = cd_at(n0 + quarter * 64 + 8 * jj + 2 * q);
        };
        if constexpr (STATS) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float2 st = sstat[cw * 64 + warp * 16 + g + 8 * h];
                emu[h] = st.x, ers[h] = st.y;
            }
            named_bar_sync(1 + cw, 128); /* read before the next tile's rows overwrite them */
            if (y_vec16) load_cd(0);
        } else if constexpr (FOLD) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t r = wrow + g + 8 * h;
                emu[h] = r < M ? mean[r] : 0.f;
                ers[h] = r < M ? rstd[r] : 0.f;
            }
            if (y_vec16) load_cd(0);
        } else {
            if (tile + gridDim.x < tiles) load_stats(tile + gridDim.x);
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
                bias_w[j] = bias_word<T>(bias, n0 + 8 * j + 2 * q, N, bias_pairs);
        }
        /* y's two values at accumulators 4j + 2h + {0, 1} (row g + 8h, columns 8j + 2q
         * + {0, 1}); cdj holds those columns' {c, d} in the epilogue form. There
         * rstd * (acc - mean * c) + d, with the subtraction inside one FMA: acc carries
         * the row mean times c, which cancels to the size of the row's spread. */
        auto out2 = [&](int j, int h, float4 cdj) {
            const float a0 = acc[4 * j + 2 * h], a1 = acc[4 * j + 2 * h + 1];
            if constexpr (FOLD) {
                return make_float2(fmaf(ers[h], fmaf(-emu[h], cdj.x, a0), cdj.y),
                                   fmaf(ers[h], fmaf(-emu[h], cdj.z, a1), cdj.w));
            } else {
                const float2 bv = unpack2<T>(bias_w[j]);
                return make_float2(a0 + bv.x, a1 + bv.y);
            }
        };
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < BN / 2; i++) fence_regs(acc[i]);
        release(it0 + KT - 1);

        /* ---- epilogue: accumulator 4j + {0,1} is row g, columns 8j + 2q + {0,1};
         * 4j + {2,3} the same columns of row g + 8 (of the warp's 16 rows) ---- */
        if (y_vec16) {
            /* Through shared memory and TMA, like cuBLAS's epilogue: a quarter (64 columns)
             * of the warp's 16 x BN block at a time, four stmatrix of the packed
             * accumulators into one of the warp's two 2 KB buffers (16 rows of 128 bytes,
             * the 128-byte swizzle: chunk c of row r at c ^ (r % 8), conflict-free), then
             * lane 0 hands the box to the copy engine and the warp moves on. Before a
             * buffer is written again, lane 0 waits until the engine has read the box
             * issued from it two quarters before (at a tile's first quarter, the previous
             * tile's third). TMA clips rows past M and columns past N. It replaces
             * st.shared of 4 bytes, ld.shared and st.global of 16 with their address
             * arithmetic and bounds checks (session 21's ncu: our epilogue took 1331
             * instructions a warp and tile, cuBLAS's 385), and the warp no longer waits
             * for its own global stores. */
            const int mi = lane >> 3, mr = lane & 7; /* stmatrix: lane gives row mr of matrix mi */
            /* matrices {rows 0-7, rows 8-15} x {column block j, j + 1} */
            const uint32_t row_addr = smem_addr(stage_out) + (mr + 8 * (mi & 1)) * 128;
#pragma unroll
            for (int qt = 0; qt < BN / 64; qt++) {
                if constexpr (FOLD)
                    if (qt > 0) load_cd(qt);
                if (lane == 0) bulk_wait_read<1>();
                __syncwarp();
                const uint32_t buf = row_addr + (qt & 1) * 2048;
#pragma unroll
                for (int jp = 0; jp < 4; jp++) {
                    const int j = qt * 8 + 2 * jp;
                    const float2 a = out2(j, 0, cdv[2 * jp]), b = out2(j, 1, cdv[2 * jp]);
                    const float2 c = out2(j + 1, 0, cdv[2 * jp + 1]), d = out2(j + 1, 1, cdv[2 * jp + 1]);
                    stmatrix_x4(buf + (((2 * jp + (mi >> 1)) ^ mr) << 4), pack2<T>(a.x, a.y),
                                pack2<T>(b.x, b.y), pack2<T>(c.x, c.y), pack2<T>(d.x, d.y));
                }
                fence_proxy_async(); /* the stmatrix writes before the engine's reads */
                __syncwarp();
                if (lane == 0) {
                    tma_store_2d(map_y, stage_out + (qt & 1) * 2048, n0 + qt * 64, (int32_t)wrow);
                    bulk_commit();
                }
            }
        } else {
#pragma unroll
            for (int j = 0; j < BN / 8; j++) {
                const int col = n0 + 8 * j + 2 * q;
                if (col >= N) continue;
                const bool two = col + 1 < N;
                const float4 cdj = FOLD ? cd_at(col) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int64_t row = wrow + g + 8 * h;
                    if (row >= M) continue;
                    const float2 v = out2(j, h, cdj);
                    const float v0 = v.x, v1 = v.y;
                    T *dst = y + row * N + col;
                    if (two && y_pairs) {
                        *(uint32_t *)dst = pack2<T>(v0, v1);
                    } else {
                        dst[0] = from_f<T>(v0);
                        if (two) dst[1] = from_f<T>(v1);
                    }
                }
            }
        }
    }
    bulk_wait_all(); /* lane 0's TMA stores of y may still read this warp's staging */
}
#endif

/* One kernel per form. With a folded weight (cd != nullptr) two are launched, an
 * epilogue form first, then the transform form, which returns at once unless *off_centre
 * is set: some row's |mean| * rstd exceeds FOLD_MAX_MEAN_RSTD, where the epilogue form's
 * cancellation would cost accuracy, or (f16) some W' = W * gamma overflowed. Who sets it:
 *  - launch_ln_forward's statistics (K > 8192), before FORM_FOLD runs, which then returns
 *    at once;
 *  - FORM_FOLD and FORM_FOLD_STATS, from the block flags of launch_fold_prep (its rows'
 *    statistics where K <= 8192, its folding's overflow at any K: that launch also clears
 *    the flag, so its own blocks cannot set it; see fold_weight.cu); FORM_FOLD then stops
 *    at each CTA's second tile;
 *  - FORM_FOLD_STATS, while it computes the statistics. It runs every tile all the same,
 *    since the statistics of all rows come from it.
 * The transform form then redoes the whole call with the statistics in mean/rstd.
 * (One kernel branching between the bodies spilled ~300 bytes a thread at BN = 256;
 * each body alone fits ptxas's 168 registers.) */
template <typename T, int BN, int FORM, bool PP = false, bool CL = false>
__global__ void __launch_bounds__(THREADS, 1)
ln_gemm_fwd_sm90(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_y,
                 float *__restrict__ mean, float *__restrict__ rstd,
                 const T *__restrict__ gamma, const T *__restrict__ beta,
                 const T *__restrict__ bias, const float *__restrict__ cd,
                 int *__restrict__ off_centre, const int *__restrict__ block_flags,
                 int flag_blocks, float eps, float4 *__restrict__ spart, int *__restrict__ scount,
                 T *__restrict__ y, int64_t M, int K,
                 int N, bool y_pairs, bool y_vec16, bool bias_pairs) {
#if LNL_SM90A
    /* Launched as a programmatic dependent of the kernel before it (launch_t): wait for
     * that kernel's statistics, folded weight and flag, then let the next form be
     * queued behind this one, so that its launch overlaps this kernel's run. */
    pdl_wait();
    pdl_launch_dependents();
    /* Read by one thread for the whole CTA: since the overflow flags reach FORM_FOLD at
     * every K, another CTA's warp 1 may set the flag while this CTA starts, and threads
     * reading it apart could take different ways (some into barriers the others left). */
    /* (Not CL: the two CTAs of a cluster could read it apart, and one would wait for ever
     * for the other's half of each W' slice.) */
    if (FORM == FORM_FOLD && !CL &&
        __syncthreads_or(threadIdx.x == 0 && *(volatile int *)off_centre != 0))
        return;
    if (FORM == FORM_TRANSFORM && cd && *off_centre == 0) return;
    fwd_body<T, BN, FORM, PP, CL>(&map_x, &map_b, &map_y, mean, rstd, gamma, beta, bias, cd,
                                  off_centre, block_flags, flag_blocks, eps, spart, scount, y, M,
                                  K, N, y_pairs, y_vec16, bias_pairs);
#endif
}

/* ---- host side ---- */
} // namespace

/* cuTensorMapEncodeTiled through the runtime's driver entry point, so the library
 * links no driver library (CI machines have none). nullptr if unavailable. */
encode_fn tensor_map_encoder() {
    static encode_fn fn = [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            return (encode_fn) nullptr;
        }
        return (encode_fn)p;
    }();
    return fn;
}

/* rows x K row-major 2-byte matrix, boxes of box_rows x 64 with the 128-byte swizzle. */
bool make_map(encode_fn enc, CUtensorMap *map, lnl_dtype dt, const void *base, int64_t rows,
              int64_t K, int box_rows) {
    const cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)K * 2};
    const cuuint32_t box[2] = {(cuuint32_t)BK, (cuuint32_t)box_rows};
    const cuuint32_t estr[2] = {1, 1};
    const CUtensorMapDataType ty =
        dt == LNL_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return enc(map, ty, 2, (void *)base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

namespace {

/* The maps and pointers one launch needs; wf/cd/off_centre: the epilogue form's
 * (cd == nullptr: the transform form only). */
struct fwd_operands {
    CUtensorMap mx, mw, mwf;
    CUtensorMap mx64; /* x in boxes of 64 rows, for the ping-pong form */
    CUtensorMap mwf_half; /* W' in boxes of BN / 2 rows, for clusters */
    CUtensorMap my;   /* y in boxes of 16 rows x 64 columns (TMA stores), where y_vec16 */
    bool pp;          /* the ping-pong form (use_pingpong, decided once a call) */
    bool cl;          /* in clusters of two (use_cluster) */
    float *mean, *rstd; /* outputs too, with stats_inside */
    const float *cd;
    int *off_centre;
    const int *block_flags;
    int flag_blocks;
    bool stats_inside;
    float eps;
    float4 *spart; /* stats_inside with several column tiles: the split statistics */
    int *scount;
    const void *gamma, *beta, *bias;
    void *y;
    bool y_vec16;
};

/* The epilogue form computing the statistics itself; only tiles of sm90_column_bn do
 * (launch_fused_forward_sm90 checks), so the 192-wide kernel of that form is not built. */
template <typename T, int BN> constexpr auto fold_stats_kernel() {
    if constexpr (BN == 192) return ln_gemm_fwd_sm90<T, BN, FORM_FOLD>;
    else return ln_gemm_fwd_sm90<T, BN, FORM_FOLD_STATS>;
}

/* The width's kernels may use C::SMEM bytes of shared memory: raised once per device
 * and kernel through raise_smem_limit's record (cuda_backend.cu; the limit belongs to the
 * device's context), or again when `again`. Until session 30 it was set on every call,
 * four runtime calls of the forward's host path; until session 33 this width kept a
 * record of its own, a bit a device. */
template <typename T, int BN> cudaError_t raise_width_smem_limit(int device, bool again) {
    for (auto *k : {ln_gemm_fwd_sm90<T, BN, FORM_TRANSFORM>, ln_gemm_fwd_sm90<T, BN, FORM_FOLD>,
                    fold_stats_kernel<T, BN>(), ln_gemm_fwd_sm90<T, BN, FORM_FOLD, BN == 256>,
                    ln_gemm_fwd_sm90<T, BN, FORM_FOLD, false, BN == 256>,
                    ln_gemm_fwd_sm90<T, BN, FORM_FOLD, BN == 256, BN == 256>}) {
        const cudaError_t e = raise_smem_limit((const void *)k, tile_cfg<BN>::SMEM, device, again);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* Clusters of two of kernel k resident at once (sm90_max_clusters in fused_sm90.cuh): the
 * persistent grid of the CL forms has no more, so that none waits for another's CTAs to
 * finish (session 8's probe found 66 on the H200's 132 SMs). One record for the two CL
 * kernels of a dtype (their pointers share a type): each holds one CTA an SM. */
template <typename Kernel> int64_t max_clusters(Kernel k, size_t smem, const device_info &d) {
    return sm90_max_clusters(k, THREADS, smem, d);
}

template <typename T, int BN>
cudaError_t launch_body(const fwd_operands &o, int64_t M, int64_t K, int64_t N,
                        const device_info &d, cudaStream_t s, bool *launched);

/* Where the first launch fails after the limit was taken as set (a cudaDeviceReset
 * since drops the context's attributes), the limit is set again and the call tried once
 * more (launch errors are not sticky). Not after a later launch failed: the kernel before
 * it has run (and the split statistics' counters, zeroed before the call, have counted). */
template <typename T, int BN>
cudaError_t launch_t(const fwd_operands &o, int64_t M, int64_t K, int64_t N, const device_info &d,
                     cudaStream_t s) {
    cudaError_t e = raise_width_smem_limit<T, BN>(d.device, false);
    if (e != cudaSuccess) return e;
    bool launched = false;
    e = launch_body<T, BN>(o, M, K, N, d, s, &launched);
    if (e == cudaSuccess || launched) return e;
    (void)cudaGetLastError();
    e = raise_width_smem_limit<T, BN>(d.device, true);
    return e != cudaSuccess ? e : launch_body<T, BN>(o, M, K, N, d, s, &launched);
}

template <typename T, int BN>
cudaError_t launch_body(const fwd_operands &o, int64_t M, int64_t K, int64_t N,
                        const device_info &d, cudaStream_t s, bool *launched) {
    using C = tile_cfg<BN>;
    const int64_t tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    /* persistent: one CTA per SM walks tiles b, b + grid, ...; the producer loads the
     * next tile's first stages while the consumers store this one (measured the same as
     * one CTA per tile so far; it leaves room for an overlapped epilogue) */
    int64_t grid = std::min<int64_t>(tiles, d.sm_count);
    /* split statistics: the tiles_n tiles of a row of tiles in one round (see fwd_body) */
    const int64_t tiles_n = (N + BN - 1) / BN;
    if (o.cd && o.stats_inside && tiles_n > 1) grid = std::max<int64_t>(tiles_n, grid / tiles_n * tiles_n);
    const bool y_pairs = N % 2 == 0 && ((uintptr_t)o.y & 3) == 0;
    const bool y_vec16 = o.y_vec16;
    const bool bias_pairs = ((uintptr_t)o.bias & 3) == 0;
    const T *g = (const T *)o.gamma, *b = (const T *)o.beta, *bi = (const T *)o.bias;
    if (o.cd) {
        /* the ping-pong form: tiles of 64 rows (x's map in 64-row boxes), its own ring */
        using CP = tile_cfg<BN, BN == 256>;
        const bool pp = BN == 256 && o.pp;
        const size_t smem = pp ? CP::SMEM : C::SMEM;
        auto *kcl = pp ? ln_gemm_fwd_sm90<T, BN, FORM_FOLD, BN == 256, BN == 256>
                       : ln_gemm_fwd_sm90<T, BN, FORM_FOLD, false, BN == 256>;
        /* CL: a cluster a pair of tiles, as many clusters as fit at once (fwd_body) */
        const int64_t clusters = BN == 256 && o.cl ? max_clusters(kcl, smem, d) : 0;
        const bool cl = clusters > 0;
        auto *k = o.stats_inside ? fold_stats_kernel<T, BN>()
                  : cl           ? kcl
                  : pp           ? ln_gemm_fwd_sm90<T, BN, FORM_FOLD, BN == 256>
                                 : ln_gemm_fwd_sm90<T, BN, FORM_FOLD>;
        const int64_t tiles_m1 = pp ? (M + CP::TILE_M - 1) / CP::TILE_M : (M + BM - 1) / BM;
        const int64_t g1 = cl ? 2 * std::min<int64_t>((tiles_m1 + 1) / 2 * tiles_n, clusters)
                              : std::min<int64_t>(tiles_m1 * tiles_n, d.sm_count);
        const cudaError_t e = launch_dependent_clusters(
            cl ? 2 : 1, k, dim3((unsigned)g1), dim3(THREADS), smem, s,
            pp ? o.mx64 : o.mx, cl ? o.mwf_half : o.mwf, o.my, o.mean, o.rstd, g, b, bi, o.cd,
            o.off_centre, o.block_flags, o.flag_blocks, o.eps, o.spart, o.scount, (T *)o.y, M,
            (int)K, (int)N, y_pairs, y_vec16, bias_pairs);
        if (e != cudaSuccess) return e;
        *launched = true;
    }
    return launch_dependent(ln_gemm_fwd_sm90<T, BN, FORM_TRANSFORM>, dim3((unsigned)grid),
                            dim3(THREADS), C::SMEM, s, o.mx, o.mw, o.my, o.mean, o.rstd, g, b, bi, o.cd,
                            o.off_centre, o.block_flags, o.flag_blocks, o.eps, o.spart, o.scount,
                            (T *)o.y, M, (int)K,
                            (int)N, y_pairs, y_vec16,
                            bias_pairs);
}

template <typename T>
cudaError_t launch_typed(int bn, const fwd_operands &o, int64_t M, int64_t K, int64_t N,
                         const device_info &d, cudaStream_t s) {
    return bn == 256   ? launch_t<T, 256>(o, M, K, N, d, s)
           : bn == 192 ? launch_t<T, 192>(o, M, K, N, d, s)
                       : launch_t<T, 128>(o, M, K, N, d, s);
}

} // namespace

/* The smallest K that takes the split statistics, and its override for tests. bf16 FUSED
 * forward ms, H200, two rounds, split vs the pre-pass (session 16): 16384,8192,1024
 * 0.409-0.415 vs 0.469-0.508; 12800,4096,768 0.180-0.184 vs 0.186-0.189; but
 * 8192,1024,1024 0.061-0.068 vs 0.047-0.048 and 8192,768,1024 0.060 vs 0.039-0.042, where
 * the pre-pass costs a few microseconds. Session 38 (docs/results/cuda/2026-12-04-session38)
 * timed them again below K = 4096, after session 25's faster merge: bf16 FUSED forward ms at
 * the power cap, back to back (bench/cuda/clocks_ab.py, medians of three), pass vs split:
 * 8192,1024,1024 0.0404 vs 0.0433; 8192,768,1024 0.0333 vs 0.0374; 16384,1024,1024 0.0779
 * vs 0.0800; 8192,1024,2048 0.0719 vs 0.0797; 8192,2048,2048 0.1281 vs 0.1319; only
 * 16384,2048,1024 0.1395 vs 0.1328, where lnl-bench's short runs have the split 0.9% slower.
 * Nsight Compute at 8192,1024,1024 (call 4) puts the split kernel at 49.3 us against 40.0
 * with the pass's statistics (cuBLAS 35.5): a quarter of its warp samples sit in the
 * statistics' own code, in three near-equal parts: the slices' sums (9.1%), the row's 8
 * threads merging their partials with Chan's formula, a division a level (7.4%), and the
 * count, fences and wait before the shares' merge (8.9%). The last two run once a tile, while
 * the tensor cores idle, which a 16-slice tile cannot hide. A variant that gave each column
 * tile a contiguous share and started its main loop there, so that the shares were
 * published early and waited for at no cost (FORM_FOLD_SPLIT, call 2; its patch is in the
 * results folder), was slower everywhere: 8192,1024,1024 0.0462 ms, and 0.5079 vs 0.4490 at
 * 16384,8192,1024, where the column tiles then read each x slice at different times and L2
 * no longer serves three of the four reads. The Chan merges of the 8 threads have since
 * become plain sums (session 39: see stats_finish). The other lead: the column tiles as a
 * cluster exchanging shares through distributed shared memory with a cluster barrier, x
 * multicast to them.
 * LNL_CUDA_SPLIT_STATS_MIN_K=k (read on each call;
 * like LNL_CPU_ISA, for tests and timing) takes them from K = k instead: 0 at every K (the
 * CUDA table's split rows have K <= 1000), a huge k never. It changes the forward's
 * workspace size, which the Python layers cache per shape: set it before a shape's first
 * call (a call given too small a workspace fails with WORKSPACE_TOO_SMALL). */
static int64_t split_stats_min_k() { return env_int64("LNL_CUDA_SPLIT_STATS_MIN_K", 4096); }

/* With one column of tiles, or (split statistics) up to eight. Every column's CTAs
 * computing all of their rows' statistics slowed the main loop where the GEMM is
 * compute-bound: bf16 FUSED forward ms, H200, statistics inside at every N vs the
 * pre-pass (lnl-bench, docs/results/cuda/2026-12-01-session6): 8192,4096,4096 0.537-0.564
 * vs 0.448; 8192,4096,12288 1.67-1.74 vs 1.36; 8192,768,3072 0.116-0.118 vs 0.095;
 * 16384,8192,1024 0.540-0.558 vs 0.497. Split among the tiles_n column tiles, each sums
 * 1/tiles_n of the K slices, from K = split_stats_min_k().
 * -DLNL_SM90_SPLIT_STATS=0: one column of tiles only. */
#ifndef LNL_SM90_SPLIT_STATS
#define LNL_SM90_SPLIT_STATS 1
#endif
bool fused_forward_sm90_stats_inside(int64_t K, int64_t N) {
    const int64_t cols = (N + sm90_column_bn(N) - 1) / sm90_column_bn(N);
    return cols == 1 || (LNL_SM90_SPLIT_STATS && cols <= SPLIT_STATS_MAX_COL_TILES &&
                         K >= split_stats_min_k());
}
int64_t fused_forward_sm90_split_cols(int64_t K, int64_t N) {
    const int64_t cols = (N + sm90_column_bn(N) - 1) / sm90_column_bn(N);
    return cols > 1 && fused_forward_sm90_stats_inside(K, N) ? cols : 0;
}
int64_t fused_forward_sm90_split_rows(int64_t M, int64_t K, int64_t N) {
    return fused_forward_sm90_split_cols(K, N) ? (M + BM - 1) / BM : 0;
}

/* The width of this call's tiles (tile_width.cuh): sm90_column_bn, which the statistics'
 * forms and their workspace count columns of, or narrower where 256-wide tiles leave the
 * persistent grid's last round mostly empty, except where the statistics come from the
 * kernel, the ping-pong form is asked for or clusters are forced. LNL_CUDA_SM90_BN=128, 192
 * or 256 (read on each call; for tests and timing) takes that width wherever a narrower one
 * could be taken. */
static int pick_bn(int64_t M, int64_t K, int64_t N, int sms) {
    const bool keep =
        fused_forward_sm90_stats_inside(K, N) || use_pingpong(256, false, K) || cluster_forced();
    return sm90_pick_bn(M, N, sms, keep, env_int64("LNL_CUDA_SM90_BN", 0));
}

int64_t fused_forward_sm90_tiles(int64_t M, int64_t K, int64_t N, const device_info &d) {
    const int bn = pick_bn(M, K, N, d.sm_count);
    return ((M + BM - 1) / BM) * ((N + bn - 1) / bn);
}

bool fused_forward_sm90_serves(lnl_dtype dt, int64_t M, int64_t K, int64_t N,
                               const device_info &d) {
    return (dt == LNL_DTYPE_BF16 || dt == LNL_DTYPE_F16) && K % 8 == 0 && K <= INT32_MAX &&
           N <= INT32_MAX && M < ((int64_t)1 << 31) &&
           d.major == 9 && d.minor == 0; /* sm_90a machine code only */
}

bool fused_forward_sm90_runs(lnl_dtype dt, int64_t M, int64_t K, int64_t N, const void *x,
                             const void *W, const void *gamma, const void *beta,
                             const device_info &d) {
    /* TMA needs 16-byte aligned bases and row pitches; gamma/beta are read 8 at a time. */
    return fused_forward_sm90_serves(dt, M, K, N, d) && aligned16(x) && aligned16(W) &&
           aligned16(gamma) && aligned16(beta) && tensor_map_encoder() != nullptr;
}

cudaError_t launch_fused_forward_sm90(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const void *gamma, const void *beta,
                                      const void *W, const void *bias, const sm90_fold &fold,
                                      void *y, int64_t M, int64_t K, int64_t N,
                                      const device_info &d, cudaStream_t s, bool *launched) {
    *launched = false;
    if (!fused_forward_sm90_runs(dt, M, K, N, x, W, gamma, beta, d)) return cudaSuccess;
    encode_fn enc = tensor_map_encoder();
    const int bn = pick_bn(M, K, N, d.sm_count);
    fwd_operands o{};
    if (!make_map(enc, &o.mx, dt, x, M, K, BM) || !make_map(enc, &o.mw, dt, W, N, K, bn))
        return cudaSuccess;
    o.mwf = o.mw; /* unused without a folded weight */
    if (fold.cd && !make_map(enc, &o.mwf, dt, fold.wfold, N, K, bn)) return cudaSuccess;
    /* with stats_inside the kernel writes mean/rstd: the caller's writable buffers */
    o.mean = (float *)mean, o.rstd = (float *)rstd, o.cd = fold.cd, o.off_centre = fold.off_centre;
    o.block_flags = fold.block_flags, o.flag_blocks = fold.flag_blocks;
    o.stats_inside = fold.cd && fold.stats_inside, o.eps = fold.eps;
    /* the in-kernel statistics' workspace counts columns of sm90_column_bn (pick_bn keeps it
     * for them) */
    if (o.stats_inside && bn != sm90_column_bn(N)) return cudaErrorInvalidValue;
    o.pp = fold.cd && use_pingpong(bn, o.stats_inside, K);
    o.mx64 = o.mx;
    if (o.pp && !make_map(enc, &o.mx64, dt, x, M, K, 64)) return cudaSuccess;
    o.cl = fold.cd && use_cluster(bn, o.stats_inside);
    o.mwf_half = o.mwf;
    if (o.cl && !make_map(enc, &o.mwf_half, dt, fold.wfold, N, K, bn / 2)) return cudaSuccess;
    o.spart = (float4 *)fold.split_part, o.scount = fold.split_count;
    if (o.stats_inside && (N + bn - 1) / bn > 1 && (!o.spart || !o.scount)) return cudaErrorInvalidValue;
    o.gamma = gamma, o.beta = beta, o.bias = bias, o.y = y;
    /* y through TMA stores where its rows are whole 16-byte chunks (else plain stores) */
    o.y_vec16 = N % 8 == 0 && aligned16(y);
    o.my = o.mx; /* unused otherwise */
    if (o.y_vec16 && !make_map(enc, &o.my, dt, y, M, N, 16)) return cudaSuccess;
    const cudaError_t e = dt == LNL_DTYPE_BF16 ? launch_typed<__nv_bfloat16>(bn, o, M, K, N, d, s)
                                               : launch_typed<__half>(bn, o, M, K, N, d, s);
    *launched = e == cudaSuccess;
    return e;
}

} // namespace lnl
