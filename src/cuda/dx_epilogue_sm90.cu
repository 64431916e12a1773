/* The FUSED backward's dx formed in the epilogue of the dy . W GEMM (bf16 and f16, Hopper),
 * so that dxhat = dy . W (M x K) is never written out and read back by a LayerNorm backward
 * pass.
 *
 * With xhat = (x - mean) rstd and g = dxhat * gamma (per column), the LayerNorm backward is
 *   dx = rstd * (g - a - xhat * b),   a = mean_k(g),  b = mean_k(g * xhat)   (per row).
 * A tile of the GEMM sees 256 of a row's K columns, so it cannot take those means itself;
 * both come without dxhat, from the forward's output y (M x N):
 *   a[m] = sum_n dy[m, n] c[n] / K,              c[n] = sum_k W[n, k] gamma[k];
 *   b[m] = sum_n dy[m, n] (z[m, n] - e[n]) / K,  e[n] = sum_k W[n, k] beta[k],
 * where z = y - linear_bias = LN(x) W^T = xhat (W * gamma)^T + e: the sum over k that b
 * needs is the forward's own GEMM, done once already. z - e is xhat (W * gamma)^T.
 * So the GEMM's epilogue writes, per element,
 *   dx = r gamma[k] acc + rb (x - mean) + c0,   r = rstd, rb = -r^2 b, c0 = -r a,
 * reading x (the row values {r, rb, c0, mean} come from row_terms_kernel, one pass over dy
 * and y). x - mean is taken before the multiply, so a row far off centre loses nothing to
 * cancellation (the forward's epilogue form, rstd (acc - mean c), has to fall back there).
 * The backward then moves x once and dx once instead of dxhat twice, x once and dx once.
 *
 * dgamma and dbeta need dxhat summed over the rows; they come from the weight gradient's
 * own products (dw_from_x.cu): with P = dy^T xhat (N x K, float32 in the dW path),
 *   dgamma[k] = sum_n W[n, k] P[n, k],   dbeta[k] = sum_n W[n, k] v[n],  v = colsum(dy)
 * (dgb_kernel). bench/dx_epilogue_identity.py checks these identities in float64.
 *
 * B of the GEMM is W^T (K x N, the reduction contiguous), copied into the workspace by
 * transpose_kernel (prep_sums_kernel sums c, and e plus the bias): the wgmma of this file
 * reads both operands K-major. The session-39 prototype (bench/cuda/dx_epilogue_proto.cu,
 * removed once this file had its kernel; at 2ebc109) measured this GEMM against what it
 * replaces: 0.206 vs 0.332 ms at 32768,4096,256 and 0.43 vs 0.59 at 16384,8192,1024
 * (H200). */
#include "cuda_common.cuh"
#include "dx_epilogue_sm90.cuh"
#include "fused_sm90.cuh"
#include "sm90_primitives.cuh"
#include "sm90_tiles.cuh"
#include "wgmma_ops.cuh"

namespace lnl {
namespace {

/* tiles of 256 columns of dx, 128 rows in the cooperative form (64 a consumer warpgroup)
 * and 64 in XS (a consumer warpgroup's own, below); slices of 64 of the reduction (N), a
 * ring of 4 stages (3 in XS3); a producer warpgroup and two consumer warpgroups */
constexpr int DX_BM = 128, DX_BN = 256, DX_BK = 64, DX_THREADS = 384;
constexpr int B_BYTES = DX_BN * DX_BK * 2;
constexpr int OUT_BYTES = 8 * 2 * 2048; /* per consumer warp two 16 x 64 staging boxes */
/* Three forms of the kernel. XS (the default): each consumer warpgroup has tiles of its
 * own, 64 rows x 256 columns, the CTA's tiles taken in turn, and their main loops take turns too
 * (ping-pong), so that one warpgroup's epilogue runs under the other's MMAs; and x reaches
 * shared memory by TMA. The cooperative form (LNL_CUDA_DX_FORM=0, the form of sessions
 * 40-42): both warpgroups work on one 128-row tile, the tensor cores idle through its
 * epilogue, and each thread loads its x pairs from global memory, 64 four-byte loads a tile.
 * XS's stage holds 64 rows of dy (40 KB), and W^T crosses from L2 once per 64 rows instead
 * of 128.
 * Kernel ms, the H200, bf16, session 43 call 1 (profile_cuda.py), cooperative / ping-pong
 * with x loaded as the cooperative form loads it (session 42's form, since removed) / XS:
 * 32768,4096,256 0.2054 / 0.2071 / 0.1654; 16384,8192,1024 0.4411 / 0.4591 / 0.4092;
 * 8192,4096,1024 0.1154 / 0.1202 / 0.1061. Neither the turns alone nor x prefetched into
 * L2 (session 42) helped, so the gain points at the cooperative form's x loads: each
 * warp-wide 4-byte load touches 8 rows, 16 bytes of each (ncu on that form at
 * 32768,4096,256: L1 hit rate 52%, its busiest memory unit 72% busy, 41% of its stall
 * cycles on the scoreboard).
 * XS3 (LNL_CUDA_DX_FORM=2, never the default) is XS with three x tile buffers, which the two
 * warpgroups' tiles take in turn (tile j of a CTA in buffer j % 3), a thread of its own
 * loading them, and a ring of three stages, so that the buffers fit. Where N is small
 * the main loop is a few slices and the epilogue is most of a tile: Nsight Compute put
 * XS at 32768,4096,256 at 52% of DRAM's peak against a copy's 86%, with no warp eligible
 * in 66% of the cycles (session 44, calls 5-6). Its x load for a warpgroup's next tile
 * could start only when that warpgroup's epilogue had let go of its one buffer, one short
 * main loop before the epilogue needing it. In XS3 the load of tile j waits for the
 * epilogue of tile j - 3, so it has two main loops and an epilogue to land in. It was
 * slower all the same (session 48, call 2, the profiler's kernel ms, bf16, XS / XS3):
 * 32768,4096,256 0.168 / 0.186; 65536,1024,256 0.087 / 0.095; 12800,4096,256 0.070 /
 * 0.078; 32768,4096,128 0.149 / 0.151; 32768,4096,512 0.245 / 0.272; 16384,8192,1024
 * 0.413 / 0.521 (round 1; round 2 within 2%). Not profiled further; a guess: its ring
 * of three stages costs the main loop more than the earlier x loads save. */
enum { DX_COOP = 0, DX_XS = 1, DX_XS3 = 2 };
template <int FORM> struct dx_cfg {
    static constexpr bool XS = FORM != DX_COOP;
    static constexpr int TILE_M = XS ? 64 : DX_BM; /* rows of dy (and dx) a tile has */
    static constexpr int S = FORM == DX_XS3 ? 3 : 4; /* the ring's stages */
    static constexpr int A_BYTES = TILE_M * DX_BK * 2;
    /* XS: tiles of x, 64 rows x 256 columns as four 64 x 64 boxes of the 128-byte swizzle,
     * in place of the staging boxes: the epilogue reads x by ldmatrix and writes dx over it
     * by stmatrix, and TMA stores dx from there. XBUF of them, each with a full and an
     * empty barrier. */
    static constexpr int XBUF = FORM == DX_XS3 ? 3 : XS ? 2 : 0;
    static constexpr int X_BYTES = XS ? TILE_M * DX_BN * 2 : 0;
    static constexpr int STAGE_OUT = XS ? XBUF * X_BYTES : OUT_BYTES;
    static constexpr size_t SMEM = (size_t)S * (A_BYTES + B_BYTES) + STAGE_OUT +
                                   (2 * S + 2 * (XBUF > 2 ? XBUF : 2)) * 8 + 1024;
};
/* XS3 up to this N, XS past it: 0, as XS3 was slower at every N timed (above); XS3 stays,
 * behind LNL_CUDA_DX_FORM=2 and tested (test_table's F_DX_XS3 rows), for study */
constexpr int64_t DX_XS3_MAX_N = 0;
/* two ones of T in a 32-bit word: gamma absent */
template <typename T> __host__ __device__ constexpr uint32_t one_pair() {
    return std::is_same<T, __half>::value ? 0x3C003C00u : 0x3F803F80u;
}

#if LNL_SM90A /* the helpers of dx_epilogue_kernel, whose body is Hopper-only */
template <typename T> __device__ __forceinline__ uint32_t ldg_u32(const T *p) {
    return __ldg((const unsigned int *)p);
}

/* dx for the two columns of a pair: r gamma acc + rb (x - mean) + c0, with the row's
 * p = {r, rb, c0, mean}; returns the pair rounded to T. */
template <typename T>
__device__ __forceinline__ uint32_t dx_pair(float4 p, float2 gm, float a0, float a1, uint32_t xw) {
    const float2 xv = unpack2<T>(xw);
    return pack2<T>(fmaf(p.x * gm.x, a0, fmaf(p.y, xv.x - p.w, p.z)),
                       fmaf(p.x * gm.y, a1, fmaf(p.y, xv.y - p.w, p.z)));
}

/* The cooperative form's x reaches the epilogue through plain loads, half before the main
 * loop and half during the epilogue. The tile's x block fetched into L2 beforehand by the
 * producer (TMA prefetches when it starts the tile's loads, or a tile earlier) was no
 * faster: this kernel's time, none / one tile / two tiles ahead, bf16 (session 42, call 3;
 * the patch in docs/results/cuda/2026-12-04-session42): 32768,4096,256 0.2081 / 0.2098 /
 * 0.2324 ms, 16384,8192,1024 0.4479 / 0.4499 / 0.4692. XS (dx_cfg above) loads it by TMA.
 *
 * A consumer thread's inputs for one tile: rows g and g + 8 of its warp's 16, columns
 * col0 + 8 j (+ 1) for j < 32 (col0 = n0 + 2 q), the first half of its x pairs (the second
 * half is loaded while the first is stored), its rows' values and the first quarter's
 * gamma pairs. EDGE (a tile that crosses row M or column K): pairs past K (K is a multiple
 * of 8, so a pair is whole or absent) and rows past M read as zero; lim0 and lim1 are
 * the readable columns of each row from col0, glim those of gamma. A whole tile takes
 * the loads without the tests (and without their registers). */
template <typename T, bool EDGE, bool WITH_X = true> struct tile_inputs {
    const T *x0, *x1, *gq;
    int lim0, lim1, glim;
    uint32_t xw[WITH_X ? 2 : 1][WITH_X ? 16 : 1], gw[2][8];
    float4 p0, p1;
    __device__ __forceinline__ uint32_t x_at(int r, int j) const {
        if (!EDGE) return ldg_u32((r ? x1 : x0) + 8 * j);
        return 8 * j < (r ? lim1 : lim0) ? ldg_u32((r ? x1 : x0) + 8 * j) : 0u;
    }
    /* gamma's pair at column col0 + c */
    __device__ __forceinline__ uint32_t gamma_at(int c) const {
        if (!EDGE) return ldg_u32(gq + c);
        return c < glim ? ldg_u32(gq + c) : 0u;
    }
    __device__ __forceinline__ tile_inputs(const T *x, const T *gamma, const float4 *rowp,
                                           int64_t wrow, int n0, int64_t M, int K, int g, int q) {
        const int col0 = n0 + 2 * q;
        const bool ok0 = !EDGE || wrow + g < M, ok1 = !EDGE || wrow + g + 8 < M;
        glim = K - col0;
        lim0 = ok0 ? glim : 0;
        lim1 = ok1 ? glim : 0;
        x0 = x + (wrow + g) * (int64_t)K + col0;
        x1 = x0 + 8 * (int64_t)K;
        gq = gamma + col0;
        if constexpr (WITH_X)
#pragma unroll
            for (int j = 0; j < 16; j++) {
                xw[0][j] = x_at(0, j);
                xw[1][j] = x_at(1, j);
            }
        const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
        p0 = ok0 ? __ldg(rowp + wrow + g) : zero;
        p1 = ok1 ? __ldg(rowp + wrow + g + 8) : zero;
#pragma unroll
        for (int jj = 0; jj < 8; jj++) gw[0][jj] = gamma_at(8 * jj);
    }
};

/* A ring stage's release by a consumer warp (lane 0): its arrival, and with CL the same
 * arrival on the other CTA's barrier, whose producer also writes into this stage */
template <bool CL> __device__ __forceinline__ void release_stage(uint64_t *bar, uint32_t peer) {
    mbar_arrive(bar);
    if constexpr (CL) mbar_arrive_cluster(bar, peer);
}

/* One tile's main loop for a consumer warpgroup: KT slices of 64, four wgmma m64n256k16 a
 * slice from ring stage (it0 + kt) % S; each stage is released once the next slice's
 * group is issued, the last by the caller after finish_groups. */
template <typename T, int A_BYTES, int S, bool CL>
__device__ __forceinline__ void tile_mainloop(float *acc, uint64_t *full, uint64_t *empty,
                                              unsigned char *sA, unsigned char *sB, int a_off,
                                              uint32_t it0, int KT, int lane, uint32_t peer) {
    for (int kt = 0; kt < KT; kt++) {
        const int s = (it0 + kt) % S;
        mbar_wait(&full[s], ((it0 + kt) / S) & 1);
        const uint64_t adesc = desc_kmajor_sw128(sA + s * A_BYTES + a_off);
        const uint64_t bdesc = desc_kmajor_sw128(sB + s * B_BYTES);
        wgmma_fence();
#pragma unroll
        for (int st = 0; st < 4; st++)
            wgmma_ss<T, DX_BN>(acc, adesc + 2 * st, bdesc + 2 * st, kt > 0 || st > 0);
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0 && lane == 0) release_stage<CL>(&empty[(it0 + kt - 1) % S], peer);
    }
}

/* The warp's part of a tile's epilogue: its 16 rows x 256 columns a quarter (64 columns)
 * at a time: the quarter's dx pairs, four stmatrix into one of the warp's two staging
 * boxes (the 128-byte swizzle: chunk c of row r at c ^ (r % 8)), then lane 0 hands the box
 * to TMA, which clips rows past M and columns past K. Before a box is written again, lane
 * 0 waits until the engine has read the one issued from it two quarters before. */
template <typename T, bool EDGE>
__device__ __forceinline__ void epilogue(const float *acc, tile_inputs<T, EDGE> &in,
                                         uint32_t row_addr, unsigned char *stage_out,
                                         const CUtensorMap *map_o, int n0, int64_t wrow,
                                         int64_t M, int K, int lane) {
    const int mi = lane >> 3, mr = lane & 7;
#pragma unroll
    for (int qt = 0; qt < 4; qt++) {
        if (qt < 3) {
#pragma unroll
            for (int jj = 0; jj < 8; jj++)
                in.gw[(qt + 1) & 1][jj] = in.gamma_at(64 * (qt + 1) + 8 * jj);
        }
        if (lane == 0) bulk_wait_read<1>();
        __syncwarp();
        const uint32_t buf = row_addr + (qt & 1) * 2048;
        uint32_t pk[8][2];
#pragma unroll
        for (int jj = 0; jj < 8; jj++) {
            const int j = qt * 8 + jj;
            const float2 gm = unpack2<T>(in.gw[qt & 1][jj]);
            pk[jj][0] = dx_pair<T>(in.p0, gm, acc[4 * j], acc[4 * j + 1], in.xw[0][j % 16]);
            pk[jj][1] = dx_pair<T>(in.p1, gm, acc[4 * j + 2], acc[4 * j + 3], in.xw[1][j % 16]);
        }
        if (qt < 2) { /* the slots just used take the last two quarters' x */
#pragma unroll
            for (int jj = 0; jj < 8; jj++) {
                const int j = (qt + 2) * 8 + jj;
                in.xw[0][j % 16] = in.x_at(0, j);
                in.xw[1][j % 16] = in.x_at(1, j);
            }
        }
#pragma unroll
        for (int jp = 0; jp < 4; jp++)
            stmatrix_x4(buf + (((2 * jp + (mi >> 1)) ^ mr) << 4), pk[2 * jp][0], pk[2 * jp][1],
                        pk[2 * jp + 1][0], pk[2 * jp + 1][1]);
        fence_proxy_async();
        __syncwarp();
        if (lane == 0) {
            if (!EDGE || (wrow < M && n0 + qt * 64 < K))
                tma_store_2d(map_o, stage_out + (qt & 1) * 2048, n0 + qt * 64, (int32_t)wrow);
            bulk_commit();
        }
    }
}

/* XS: the warp's part of a tile's epilogue with x in shared memory. xw_box is the warp's 16
 * rows of the first 64-column box of its warpgroup's x tile (the next boxes 64 rows x 128
 * bytes further). A quarter at a time: ldmatrix reads x's pairs in the accumulator's
 * layout (the addresses stmatrix uses), stmatrix writes dx over them, TMA stores the 16 x 64
 * box. At the end lane 0 waits until the engine has read every box, and the warp releases
 * the buffer to the producer (xempty). */
template <typename T, bool EDGE>
__device__ __forceinline__ void epilogue_xs(const float *acc, tile_inputs<T, EDGE, false> &in,
                                            unsigned char *xw_box, const CUtensorMap *map_o,
                                            int n0, int64_t wrow, int64_t M, int K, int lane,
                                            uint64_t *xempty) {
    const int mi = lane >> 3, mr = lane & 7;
    constexpr int BOX = 64 * 128; /* a 64-row, 64-column box */
#pragma unroll
    for (int qt = 0; qt < 4; qt++) {
        if (qt < 3) {
#pragma unroll
            for (int jj = 0; jj < 8; jj++)
                in.gw[(qt + 1) & 1][jj] = in.gamma_at(64 * (qt + 1) + 8 * jj);
        }
        unsigned char *box = xw_box + qt * BOX;
        const uint32_t row_addr = smem_addr(box) + (mr + 8 * (mi & 1)) * 128;
#pragma unroll
        for (int jp = 0; jp < 4; jp++) {
            const uint32_t a = row_addr + (((2 * jp + (mi >> 1)) ^ mr) << 4);
            uint32_t xv[4]; /* rows g and g + 8 of pair columns j and j + 1 */
            ldmatrix_x4(a, xv[0], xv[1], xv[2], xv[3]);
            uint32_t pk[4];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int j = qt * 8 + 2 * jp + h;
                const float2 gm = unpack2<T>(in.gw[qt & 1][2 * jp + h]);
                pk[2 * h] = dx_pair<T>(in.p0, gm, acc[4 * j], acc[4 * j + 1], xv[2 * h]);
                pk[2 * h + 1] = dx_pair<T>(in.p1, gm, acc[4 * j + 2], acc[4 * j + 3], xv[2 * h + 1]);
            }
            stmatrix_x4(a, pk[0], pk[1], pk[2], pk[3]);
        }
        fence_proxy_async();
        __syncwarp();
        if (lane == 0) {
            if (!EDGE || (wrow < M && n0 + qt * 64 < K))
                tma_store_2d(map_o, box, n0 + qt * 64, (int32_t)wrow);
            bulk_commit();
        }
    }
    if (lane == 0) {
        bulk_wait_read<0>();
        mbar_arrive(xempty); /* release: the engine has read the boxes */
    }
    __syncwarp();
}

/* One tile of a consumer warpgroup: its inputs, the main loop, the ring's last stage
 * released, the epilogue. XS: the main loop waits for this warpgroup's turn (named barrier
 * 4 + cw) unless it is the CTA's first tile, and hands the turn to the other warpgroup
 * (barrier 5 - cw) when the CTA has a next tile. The turns keep the full barriers'
 * parities right: a warpgroup that started its tile while the other was still in its own
 * would wait for slot uses a whole phase ahead of the ring, and a parity wait cannot tell
 * use u from u - 2 (fused_forward_sm90.cu's ping-pong form found it so on the H200).
 * XS: stage_out is the warp's 16 rows of the tile's x buffer, xfull / xempty that buffer's
 * barriers, xuse the buffer's uses before this one. CL: peer is the other CTA's rank. */
template <typename T, bool EDGE, int FORM, bool CL>
__device__ __forceinline__ void consume_tile(float *acc, uint64_t *full, uint64_t *empty,
                                             unsigned char *sA, unsigned char *sB, uint32_t it0,
                                             int KT, int cw, int warp, int lane,
                                             uint32_t row_addr, unsigned char *stage_out,
                                             const CUtensorMap *map_o, const T *x,
                                             const T *gamma, const float4 *rowp, int64_t m0,
                                             int n0, int64_t M, int K, bool first, bool more,
                                             uint64_t *xfull, uint64_t *xempty, uint32_t xuse,
                                             uint32_t peer) {
    using C = dx_cfg<FORM>;
    constexpr bool XS = C::XS;
    const int64_t wrow = m0 + (XS ? 0 : cw * 64) + warp * 16;
    tile_inputs<T, EDGE, !XS> in(x, gamma, rowp, wrow, n0, M, K, lane >> 2, lane & 3);
    if constexpr (XS)
        if (cw == 1 || !first) named_bar_sync(4 + cw, 256);
    tile_mainloop<T, C::A_BYTES, C::S, CL>(acc, full, empty, sA, sB, XS ? 0 : cw * 64 * 128,
                                           it0, KT, lane, peer);
    if constexpr (XS)
        if (more) named_bar_arrive(5 - cw, 256);
    wgmma_wait<0>();
#pragma unroll
    for (int k = 0; k < DX_BN / 2; k++) fence_regs(acc[k]);
    if (lane == 0) release_stage<CL>(&empty[(it0 + KT - 1) % C::S], peer);
    if constexpr (XS) {
        mbar_wait(xfull, xuse & 1); /* this tile's x, loaded by the producer */
        epilogue_xs<T, EDGE>(acc, in, stage_out, map_o, n0, wrow, M, K, lane, xempty);
    } else {
        epilogue<T, EDGE>(acc, in, row_addr, stage_out, map_o, n0, wrow, M, K, lane);
    }
}

#endif

/* dx = the epilogue above applied to dy . W: A = dy (M x N), B = W^T (K x N), both with the
 * reduction contiguous, through TMA into a ring of C::S stages (OOB rows and columns read as
 * zero), wgmma from two consumer warpgroups, a persistent grid over tiles in grouped
 * order (sm90_tiles.cuh). */
template <typename T, int FORM, bool CL = false>
__global__ void __launch_bounds__(DX_THREADS, 1)
dx_epilogue_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_o, const __grid_constant__ CUtensorMap map_x,
                   const __grid_constant__ CUtensorMap map_bh, const T *__restrict__ x,
                   const T *__restrict__ gamma, const float4 *__restrict__ rowp, int64_t M,
                   int K, int N) {
#if LNL_SM90A
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    using C = dx_cfg<FORM>;
    constexpr bool XS = C::XS;
    constexpr int S = C::S;
    unsigned char *sA = smem, *sB = smem + S * C::A_BYTES, *sOut = sB + S * B_BYTES;
    uint64_t *full = (uint64_t *)(sOut + C::STAGE_OUT), *empty = full + S;
    uint64_t *xfull = empty + S, *xempty = xfull + C::XBUF; /* XS: a pair an x buffer */
    static_assert(!CL || XS, "CL: the XS forms");
    const int64_t tiles_m = (M + C::TILE_M - 1) / C::TILE_M, tiles_n = (K + DX_BN - 1) / DX_BN;
    const int KT = (N + DX_BK - 1) / DX_BK;
    const int wg = threadIdx.x / 128;
    /* The CTA's work comes in units: a tile, or (CL) a pair of vertically adjacent tiles,
     * whose two m-tiles the cluster's two CTAs take (rank 0 the upper), both walking the
     * same units in the same order, so that every W^T slice one loads half of is the
     * other's too (tile_at's order over tiles 2 TILE_M rows high). Where tiles_m is odd,
     * the last pairs' lower tiles lie past M: their dy and x read as zeros and TMA stores
     * nothing of them, but the CTA still loads its half of W^T for the other. */
    const uint32_t rank = CL ? cluster_rank() : 0, peer = rank ^ 1;
    const int64_t pairs_m = (tiles_m + 1) / 2;
    const int64_t units = CL ? pairs_m * tiles_n : tiles_m * tiles_n;
    const int64_t unit0 = CL ? blockIdx.x / 2 : blockIdx.x, ustep = CL ? gridDim.x / 2 : gridDim.x;
    auto tile_of = [&](int64_t u, int64_t *m0, int *n0) {
        if constexpr (CL) {
            tile_at(u, pairs_m, tiles_n, DX_BN, m0, n0, 2 * C::TILE_M);
            *m0 += rank * C::TILE_M;
        } else {
            tile_at(u, tiles_m, tiles_n, DX_BN, m0, n0, C::TILE_M);
        }
    };
    if (threadIdx.x == 0) {
        for (int i = 0; i < S; i++) {
            mbar_init(&full[i], 1);
            /* the consumer warps of a stage's tile release it, CL: of both CTAs */
            mbar_init(&empty[i], (XS ? 4 : 8) * (CL ? 2 : 1));
        }
        if (XS)
            for (int i = 0; i < C::XBUF; i++) {
                mbar_init(&xfull[i], 1);
                mbar_init(&xempty[i], 4); /* the four warps of the warpgroup that used it */
            }
        mbar_init_fence();
    }
    /* CL: the other CTA's barriers are initialized before anything arrives on them */
    if constexpr (CL) cluster_sync();
    else __syncthreads();
    /* XS: x buffers are used by the CTA's tiles in turn (tile j in buffer j % XB) */
    constexpr int XB = C::XBUF > 0 ? C::XBUF : 1;
    if (wg == 0) { /* producer */
        regs_dealloc<40>();
        /* XS: the x tile of the CTA's tile j into its buffer, once the epilogue of the
         * buffer's previous use has let go of it */
        auto load_x = [&](uint32_t j, int64_t m0, int n0) {
            const int w = (int)(j % XB);
            const uint32_t use = j / XB;
            if (use > 0) mbar_wait(&xempty[w], (use - 1) & 1);
            mbar_arrive_expect_tx(&xfull[w], C::X_BYTES);
#pragma unroll
            for (int q = 0; q < DX_BN / DX_BK; q++)
                tma_load_2d(sOut + w * C::X_BYTES + q * C::TILE_M * 128, &map_x, n0 + q * DX_BK,
                            (int32_t)m0, &xfull[w]);
        };
        if (threadIdx.x == 0) {
            tma_prefetch_map(&map_a);
            tma_prefetch_map(CL ? &map_bh : &map_b);
            tma_prefetch_map(&map_o);
            if (XS) tma_prefetch_map(&map_x);
            uint32_t it = 0, j = 0; /* j: the tile's place in this CTA's sequence */
            for (int64_t u = unit0; u < units; u += ustep, j++) {
                int64_t m0;
                int n0;
                tile_of(u, &m0, &n0);
                /* XS: the tile's x into its warpgroup's buffer (j % 2), after the ring's
                 * first stages (which need no wait on the epilogue); where KT <= S, after
                 * all of the tile's stages. XS3's x has a thread of its own (below). */
                constexpr bool x_here = FORM == DX_XS;
                const int pre = x_here ? (KT < S ? KT : S) : KT;
                for (int kt = 0; kt < KT; kt++, it++) {
                    if (x_here && kt == pre) load_x(j, m0, n0);
                    const int s = it % S;
                    mbar_wait(&empty[s], ((it / S) & 1) ^ 1);
                    mbar_arrive_expect_tx(&full[s], C::A_BYTES + B_BYTES);
                    tma_load_2d(sA + s * C::A_BYTES, &map_a, kt * DX_BK, (int32_t)m0, &full[s]);
                    if constexpr (CL) /* this CTA's half of the W^T slice, into both */
                        tma_load_2d_multicast(sB + s * B_BYTES + rank * (DX_BN / 2) * 128, &map_bh,
                                              kt * DX_BK, n0 + (int)rank * (DX_BN / 2), &full[s],
                                              0x3);
                    else
                        tma_load_2d(sB + s * B_BYTES, &map_b, kt * DX_BK, n0, &full[s]);
                }
                if (x_here && pre == KT) load_x(j, m0, n0);
            }
            /* CL: the other CTA's consumers arrive on this CTA's empty barriers up to its
             * last stage; this thread stays (and the CTA's shared memory with it) until
             * the last S uses are released, so that no arrival reaches an exited CTA */
            if constexpr (CL)
                for (uint32_t v = it > (uint32_t)S ? it - S : 0; v < it; v++)
                    mbar_wait(&empty[v % S], (v / S) & 1);
        } else if (FORM == DX_XS3 && threadIdx.x == 32) {
            /* XS3: the x tiles in the CTA's order, each as soon as its buffer is free, apart
             * from the ring, whose producer would hold them behind the stages' waits */
            uint32_t j = 0;
            for (int64_t u = unit0; u < units; u += ustep, j++) {
                int64_t m0;
                int n0;
                tile_of(u, &m0, &n0);
                load_x(j, m0, n0);
            }
        }
        return;
    }
    regs_alloc<232>();
    const int cw = __shfl_sync(0xffffffffu, wg - 1, 0);
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    /* the cooperative form: this warp's two staging boxes, and the stmatrix row of this
     * lane (mr + 8 (mi & 1)) */
    unsigned char *const stage_out = sOut + (cw * 4 + warp) * 2 * 2048;
    const uint32_t row_addr = smem_addr(stage_out) + ((lane & 7) + 8 * ((lane >> 3) & 1)) * 128;
    float acc[DX_BN / 2];
    /* XS: warpgroup cw takes the CTA's tiles cw, cw + 2, ...; it0 counts stage uses over all
     * of the CTA's tiles, as the producer does, and j is the tile's place among them */
    constexpr int WG_STEP = XS ? 2 : 1;
    uint32_t it0 = XS ? cw * KT : 0, j = XS ? cw : 0;
    for (int64_t u = unit0 + (XS ? cw : 0) * ustep; u < units;
         u += WG_STEP * ustep, it0 += WG_STEP * KT, j += WG_STEP) {
        int64_t m0;
        int n0;
        tile_of(u, &m0, &n0);
        const bool first = u == unit0, more = u + ustep < units;
        /* XS: the tile's x buffer (the warp's 16 rows of it) and its uses so far */
        const int xb = XS ? (int)(j % XB) : 0;
        unsigned char *const out = XS ? sOut + xb * C::X_BYTES + warp * 16 * 128 : stage_out;
        const uint32_t xuse = j / XB;
        if (m0 + C::TILE_M <= M && n0 + DX_BN <= K)
            consume_tile<T, false, FORM, CL>(acc, full, empty, sA, sB, it0, KT, cw, warp, lane,
                                             row_addr, out, &map_o, x, gamma, rowp, m0, n0, M,
                                             K, first, more, &xfull[xb], &xempty[xb], xuse,
                                             peer);
        else
            consume_tile<T, true, FORM, CL>(acc, full, empty, sA, sB, it0, KT, cw, warp, lane,
                                            row_addr, out, &map_o, x, gamma, rowp, m0, n0, M,
                                            K, first, more, &xfull[xb], &xempty[xb], xuse,
                                            peer);
    }
    if (lane == 0) bulk_wait_all();
#endif
}

/* W^T (K x N) for the GEMM's B operand: block (bx, by) moves the 64 x 64 tile at rows
 * 64 by, columns 64 bx of W through shared memory, 16-byte chunks both ways (N and K are
 * multiples of 8, so a chunk is whole or absent). Chunk c of tile row r is kept at chunk
 * c ^ (r / 8): the 8 elements a thread gathers down a column then lie in 8 different
 * chunks of their rows, so a warp's gathers hit different banks. Where gamma is absent
 * the blocks of row 0 also write ones into gamma1 for their columns: the GEMM's epilogue
 * then always reads a gamma. */
constexpr int TP = 64;
template <typename T>
__global__ void __launch_bounds__(256)
transpose_kernel(const T *__restrict__ w, T *__restrict__ wt, T *__restrict__ gamma1,
                 int64_t N, int64_t K) {
    __shared__ __align__(16) T tile[TP][TP];
    pdl_wait(); /* launched by launch_dependent */
    pdl_launch_dependents();
    const int64_t n0 = (int64_t)blockIdx.y * TP, k0 = (int64_t)blockIdx.x * TP;
    const int cc = threadIdx.x % 8, rr = threadIdx.x / 8; /* a chunk of a row, a row of 32 */
    for (int r = rr; r < TP; r += 32) {
        const int64_t n = n0 + r, k = k0 + 8 * cc;
        if (n < N && k < K)
            *(uint4 *)&tile[r][8 * (cc ^ (r / 8))] = __ldg((const uint4 *)(w + n * K + k));
    }
    if (gamma1 && blockIdx.y == 0 && threadIdx.x < TP && k0 + threadIdx.x < K)
        gamma1[k0 + threadIdx.x] = from_f<T>(1.f);
    __syncthreads();
    for (int r = rr; r < TP; r += 32) { /* row r of the W^T tile: column k0 + r of W */
        const int64_t k = k0 + r, n = n0 + 8 * cc;
        if (n < N && k < K) {
            T v[8]; /* rows 8 cc + i of the W tile: their chunk r / 8 sits at (r / 8) ^ cc */
#pragma unroll
            for (int i = 0; i < 8; i++) v[i] = tile[8 * cc + i][8 * ((r / 8) ^ cc) + r % 8];
            uint4 o;
            memcpy(&o, v, 16);
            *(uint4 *)(wt + k * N + n) = o;
        }
    }
}

/* Per row n of W: c[n] = sum_k W[n, k] gamma[k] and f[n] = sum_k W[n, k] beta[k] + bias[n]
 * (float32; gamma absent: ones, beta and bias absent: zeros), a block a row, 16-byte chunks
 * (K % 8 == 0, W, gamma and beta 16-byte aligned); the threads' sums added in a fixed
 * order (shuffles, then the warps' in warp order). */
template <typename T> __device__ __forceinline__ uint4 ldg16(const T *p) {
    return __ldg((const uint4 *)p);
}
template <typename T>
__global__ void __launch_bounds__(256)
prep_sums_kernel(const T *__restrict__ w, const T *__restrict__ gamma,
                 const T *__restrict__ beta, const T *__restrict__ bias,
                 float2 *__restrict__ cf, int64_t N, int64_t K) {
    __shared__ float2 warp_sum[8];
    pdl_wait();
    pdl_launch_dependents();
    const int64_t n = blockIdx.x;
    constexpr uint32_t one = one_pair<T>();
    const uint4 ones = make_uint4(one, one, one, one);
    const uint4 zeros = make_uint4(0u, 0u, 0u, 0u);
    float c = 0.f, e = 0.f;
#pragma unroll 2
    for (int64_t k = 8 * threadIdx.x; k < K; k += 8 * 256) {
        const uint4 wv = ldg16(w + n * K + k);
        const uint4 gv = gamma ? ldg16(gamma + k) : ones, bv = beta ? ldg16(beta + k) : zeros;
        const uint32_t *ww = (const uint32_t *)&wv, *gw = (const uint32_t *)&gv,
                       *bw = (const uint32_t *)&bv;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float2 wf = unpack2<T>(ww[i]), gf = unpack2<T>(gw[i]),
                         bf = unpack2<T>(bw[i]);
            c = fmaf(wf.x, gf.x, fmaf(wf.y, gf.y, c));
            e = fmaf(wf.x, bf.x, fmaf(wf.y, bf.y, e));
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        c += __shfl_xor_sync(0xffffffffu, c, o);
        e += __shfl_xor_sync(0xffffffffu, e, o);
    }
    if (threadIdx.x % 32 == 0) warp_sum[threadIdx.x / 32] = make_float2(c, e);
    __syncthreads();
    if (threadIdx.x == 0) {
        float2 t = warp_sum[0];
        for (int i = 1; i < 8; i++) t.x += warp_sum[i].x, t.y += warp_sum[i].y;
        cf[n] = make_float2(t.x, t.y + (bias ? to_f(bias[n]) : 0.f));
    }
}

/* Each row's epilogue values from dy and y (M x N) and {c, f} (N pairs):
 *   a = dy . c / K,  b = dy . (y - f) / K,   (y - f = xhat (W * gamma)^T)
 *   rowp = {r, -r^2 b, -r a, mean} with r = rstd.
 * A warp a row, 16-byte chunks of dy and y (N % 8 == 0, both 16-byte aligned) and the
 * chunk's {c, f} as four 16-byte loads, two chunks' loads in flight a lane; the lanes'
 * sums added by shuffles in a fixed order. With absmax (f16), it also takes the row's
 * largest |rstd dy| into *absmax as dw_from_x.cu's dy_absmax_kernel would (dw_scale.cuh's
 * helpers), so that the dW prep, launched after this kernel, needs no pass of its own over
 * dy. */
template <typename T>
__global__ void __launch_bounds__(256)
row_terms_kernel(const T *__restrict__ dy, const T *__restrict__ y,
                 const float2 *__restrict__ cf, const float *__restrict__ mean,
                 const float *__restrict__ rstd, float4 *__restrict__ rowp,
                 unsigned *__restrict__ absmax, int64_t M, int64_t K, int64_t N) {
    pdl_wait();
    pdl_launch_dependents();
    const int lane = threadIdx.x % 32;
    const int64_t m = (int64_t)blockIdx.x * 8 + threadIdx.x / 32;
    if (m >= M) return;
    float sa = 0.f, sb = 0.f;
    unsigned h = 0; /* absmax: the largest |dy| of the lane's chunks, as f16 bits */
#pragma unroll 2
    for (int64_t n = 8 * lane; n < N; n += 256) {
        const uint4 d = __ldg((const uint4 *)(dy + m * N + n));
        const uint4 yy = __ldg((const uint4 *)(y + m * N + n));
        const uint32_t *dw = (const uint32_t *)&d, *yw = (const uint32_t *)&yy;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float4 t = __ldg((const float4 *)(cf + n + 2 * i)); /* {c, f} of two columns */
            const float2 dv = unpack2<T>(dw[i]), yv = unpack2<T>(yw[i]);
            sa = fmaf(dv.x, t.x, fmaf(dv.y, t.z, sa));
            sb = fmaf(dv.x, yv.x - t.y, fmaf(dv.y, yv.y - t.w, sb));
            if (absmax) h = max(h, f16_pair_abs_bits(dw[i]));
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        sa += __shfl_xor_sync(0xffffffffu, sa, o);
        sb += __shfl_xor_sync(0xffffffffu, sb, o);
        if (absmax) h = max(h, __shfl_xor_sync(0xffffffffu, h, o));
    }
    if (lane == 0) {
        const float a = sa / (float)K, b = sb / (float)K, r = rstd[m];
        rowp[m] = make_float4(r, -r * r * b, -r * a, mean[m]);
        if (absmax && h != 0) raise_absmax(absmax, absmax_word(h, r));
    }
}

/* Partials of dgamma[k] = sum_n W[n, k] P[n, k] and dbeta[k] = sum_n W[n, k] v[n]: block
 * (bx, j) owns 1024 columns, a thread four adjacent ones (K % 8 == 0: 16-byte loads of P,
 * 8-byte loads of W), and share j of the rows n, added in order, four rows' loads in
 * flight; row j of part_g / part_b, summed over the shares by launch_reduce_partials.
 * P[n, k] = G[n, k] - u[n] (dW from the raw x), or, where dw_from_x's flag says rows were
 * off centre, the sum of the fused dW kernel's float32 partials of P over its splits.
 * f16 (absmax given): G and u are of dy' scaled by 2^e (dw_scale_exp), so dgamma's sum
 * over n is scaled back by 2^-e, exactly (a power of two). */
constexpr int DGB_COLS = 4 * 256;
template <typename T>
__global__ void __launch_bounds__(256)
dgb_kernel(const T *__restrict__ w, const float *__restrict__ part, int splits,
           const float2 *__restrict__ uvn, const int *__restrict__ off_centre,
           const unsigned *__restrict__ absmax,
           float *__restrict__ part_g, float *__restrict__ part_b, int64_t N, int64_t K) {
    pdl_wait();
    pdl_launch_dependents();
    const int64_t k = (int64_t)blockIdx.x * DGB_COLS + 4 * threadIdx.x;
    if (k >= K) return;
    const int64_t per = (N + gridDim.y - 1) / gridDim.y, n0 = blockIdx.y * per;
    const int64_t n1 = min64(N, n0 + per);
    float dg[4] = {0.f, 0.f, 0.f, 0.f}, db[4] = {0.f, 0.f, 0.f, 0.f};
    /* one row's terms, given its P */
    auto add = [&](int64_t n, float4 p, float v) {
        const uint2 wv = __ldg((const uint2 *)(w + n * K + k));
        const float2 w01 = unpack2<T>(wv.x), w23 = unpack2<T>(wv.y);
        dg[0] = fmaf(w01.x, p.x, dg[0]), dg[1] = fmaf(w01.y, p.y, dg[1]);
        dg[2] = fmaf(w23.x, p.z, dg[2]), dg[3] = fmaf(w23.y, p.w, dg[3]);
        db[0] = fmaf(w01.x, v, db[0]), db[1] = fmaf(w01.y, v, db[1]);
        db[2] = fmaf(w23.x, v, db[2]), db[3] = fmaf(w23.y, v, db[3]);
    };
    if (*off_centre == 0) {
#pragma unroll 4
        for (int64_t n = n0; n < n1; n++) {
            const float2 uv = __ldg(uvn + n);
            float4 p = __ldg((const float4 *)(part + n * K + k));
            p.x -= uv.x, p.y -= uv.x, p.z -= uv.x, p.w -= uv.x;
            add(n, p, uv.y);
        }
        if (absmax) {
            const float inv = ldexpf(1.f, -dw_scale_exp(absmax));
            for (int i = 0; i < 4; i++) dg[i] *= inv;
        }
    } else {
        for (int64_t n = n0; n < n1; n++) {
            float4 p = make_float4(0.f, 0.f, 0.f, 0.f);
            for (int z = 0; z < splits; z++) {
                const float4 t = __ldg((const float4 *)(part + ((int64_t)z * N + n) * K + k));
                p.x += t.x, p.y += t.y, p.z += t.z, p.w += t.w;
            }
            add(n, p, __ldg(uvn + n).y);
        }
    }
    *(float4 *)(part_g + (int64_t)blockIdx.y * K + k) = make_float4(dg[0], dg[1], dg[2], dg[3]);
    *(float4 *)(part_b + (int64_t)blockIdx.y * K + k) = make_float4(db[0], db[1], db[2], db[3]);
}

} // namespace

bool dx_epilogue_serves(lnl_dtype dt, int64_t M, int64_t K, int64_t N, const device_info &d) {
    return (dt == LNL_DTYPE_BF16 || dt == LNL_DTYPE_F16) && K % 8 == 0 && N % 8 == 0 &&
           K <= INT32_MAX && N <= INT32_MAX && M < ((int64_t)1 << 31) && d.major == 9 &&
           d.minor == 0;
}

bool dx_epilogue_runs(lnl_dtype dt, int64_t M, int64_t K, int64_t N, const void *dy,
                      const void *x, const void *W, const void *gamma, const void *beta,
                      const void *y, const void *dx, const device_info &d) {
    /* TMA needs 16-byte aligned bases (dy, dx; W^T is the workspace's); row_terms_kernel
     * reads dy and y, prep_sums_kernel W, gamma and beta 16 bytes at a time */
    return dx_epilogue_serves(dt, M, K, N, d) && aligned16(dy) && aligned16(x) && aligned16(W) &&
           aligned16(gamma) && aligned16(beta) && aligned16(y) && aligned16(dx) &&
           tensor_map_encoder() != nullptr;
}

size_t dx_epilogue_workspace(int64_t M, int64_t K, int64_t N) {
    return align_up((size_t)K * N * 2, 256) + align_up((size_t)N * 8, 256) +
           align_up((size_t)M * 16, 256) + align_up((size_t)N * 8, 256) +
           align_up((size_t)K * 2, 256);
}

dx_epilogue_layout dx_epilogue_carve(void *base, int64_t M, int64_t K, int64_t N) {
    carver c{(char *)base, 0};
    dx_epilogue_layout l;
    l.wt = c.take((size_t)K * N * 2);
    l.cf = (float2 *)c.take((size_t)N * 8);
    l.rowp = (float4 *)c.take((size_t)M * 16);
    l.uvn = (float2 *)c.take((size_t)N * 8);
    l.gamma1 = c.take((size_t)K * 2);
    return l;
}

template <typename T>
static cudaError_t prep_t(const T *W, const T *gamma, const T *beta, const T *bias,
                          const dx_epilogue_layout &l, int64_t K, int64_t N, cudaStream_t s) {
    const dim3 grid((unsigned)((K + TP - 1) / TP), (unsigned)((N + TP - 1) / TP));
    cudaError_t e = launch_dependent(transpose_kernel<T>, grid, dim3(256), 0, s, W, (T *)l.wt,
                                     gamma ? nullptr : (T *)l.gamma1, N, K);
    if (e != cudaSuccess) return e;
    return launch_dependent(prep_sums_kernel<T>, dim3((unsigned)N), dim3(256), 0, s, W, gamma,
                            beta, bias, l.cf, N, K);
}

cudaError_t launch_dx_epilogue_prep(lnl_dtype dt, const void *W, const void *gamma,
                                    const void *beta, const void *bias,
                                    const dx_epilogue_layout &l, int64_t K, int64_t N,
                                    cudaStream_t s) {
    if (dt == LNL_DTYPE_F16)
        return prep_t((const __half *)W, (const __half *)gamma, (const __half *)beta,
                      (const __half *)bias, l, K, N, s);
    return prep_t((const __nv_bfloat16 *)W, (const __nv_bfloat16 *)gamma,
                  (const __nv_bfloat16 *)beta, (const __nv_bfloat16 *)bias, l, K, N, s);
}

cudaError_t launch_dx_epilogue_rows(lnl_dtype dt, const void *dy, const void *y,
                                    const float *mean, const float *rstd,
                                    const dx_epilogue_layout &l, unsigned *absmax, int64_t M,
                                    int64_t K, int64_t N, cudaStream_t s) {
    const dim3 grid((unsigned)((M + 7) / 8)), block(256);
    if (dt == LNL_DTYPE_F16)
        return launch_dependent(row_terms_kernel<__half>, grid, block, 0, s, (const __half *)dy,
                                (const __half *)y, (const float2 *)l.cf, mean, rstd, l.rowp,
                                absmax, M, K, N);
    return launch_dependent(row_terms_kernel<__nv_bfloat16>, grid, block, 0, s,
                            (const __nv_bfloat16 *)dy, (const __nv_bfloat16 *)y,
                            (const float2 *)l.cf, mean, rstd, l.rowp, (unsigned *)nullptr, M, K,
                            N);
}

/* The kernel's form: XS (XS3 up to N = DX_XS3_MAX_N, 0). LNL_CUDA_DX_FORM (read on
 * each call; for tests and same-build timing) = 0 takes the cooperative form, 1 XS and 2
 * XS3 at any N. */
static int dx_form(int64_t N) {
    const int64_t f = env_int64("LNL_CUDA_DX_FORM", -1);
    if (f == DX_COOP || f == DX_XS || f == DX_XS3) return (int)f;
    return N <= DX_XS3_MAX_N ? DX_XS3 : DX_XS;
}

/* The XS forms in clusters of two CTAs sharing each W^T slice (CL: the forward's
 * clusters, fused_forward_sm90.cu, applied to this GEMM, whose B is read by every M
 * tile): not taken unless LNL_CUDA_DX_CLUSTER=1 (read on each call). Session 48 timed it
 * (call 2): the kernel's time unchanged with XS (0.1677 / 0.1679 ms at 32768,4096,256,
 * 0.4135 / 0.4132 at 16384,8192,1024), so W^T's reads from L2 do not limit it. */
static bool dx_cluster() { return env_int64("LNL_CUDA_DX_CLUSTER", 0) == 1; }

template <typename T>
static cudaError_t epilogue_t(lnl_dtype dt, const T *dy, const T *x, const T *gamma,
                              const dx_epilogue_layout &l, T *dx, int64_t M, int64_t K, int64_t N,
                              const device_info &d, cudaStream_t s) {
    cudaError_t e;
    encode_fn enc = tensor_map_encoder();
    const int form = dx_form(N);
    const int tile_m = form == DX_COOP ? dx_cfg<DX_COOP>::TILE_M : dx_cfg<DX_XS>::TILE_M;
    CUtensorMap ma, mb, mo, mx, mbh;
    if (!make_map(enc, &ma, dt, dy, M, N, tile_m) || !make_map(enc, &mb, dt, l.wt, K, N, DX_BN) ||
        !make_map(enc, &mo, dt, dx, M, K, 16) || !make_map(enc, &mx, dt, x, M, K, tile_m) ||
        !make_map(enc, &mbh, dt, l.wt, K, N, DX_BN / 2))
        return cudaErrorInvalidValue;
    const int64_t tiles_m = (M + tile_m - 1) / tile_m, tiles_n = (K + DX_BN - 1) / DX_BN;
    /* LNL_CUDA_DX_GRID=n (read on each call; for tests) caps the grid at n CTAs (n / 2
     * clusters, at least one), so that small problems give each CTA many tiles and its x
     * buffers many uses */
    const int64_t cap = env_int64("LNL_CUDA_DX_GRID", 0);
    const int64_t most = cap > 0 ? std::min<int64_t>(cap, d.sm_count) : d.sm_count;
    const T *g = gamma ? gamma : (const T *)l.gamma1;
    using kernel_t = decltype(&dx_epilogue_kernel<T, DX_XS>);
    const bool want_cl = form != DX_COOP && dx_cluster();
    kernel_t kern = form == DX_COOP                ? dx_epilogue_kernel<T, DX_COOP>
                    : form == DX_XS && want_cl     ? dx_epilogue_kernel<T, DX_XS, true>
                    : form == DX_XS                ? dx_epilogue_kernel<T, DX_XS>
                    : want_cl                      ? dx_epilogue_kernel<T, DX_XS3, true>
                                                   : dx_epilogue_kernel<T, DX_XS3>;
    const size_t smem = form == DX_COOP ? dx_cfg<DX_COOP>::SMEM
                        : form == DX_XS ? dx_cfg<DX_XS>::SMEM
                                        : dx_cfg<DX_XS3>::SMEM;
    /* CL: a cluster a pair of vertically adjacent tiles, as many clusters as fit at once
     * (sm90_max_clusters); none fitting, the call runs the same form without clusters */
    unsigned cluster = 1, grid = (unsigned)std::min<int64_t>(tiles_m * tiles_n, most);
    if (want_cl) {
        const int64_t fit = sm90_max_clusters(kern, DX_THREADS, smem, d);
        if (fit > 0) {
            cluster = 2;
            grid = (unsigned)(2 * std::min<int64_t>({(tiles_m + 1) / 2 * tiles_n, fit,
                                                     std::max<int64_t>(most / 2, 1)}));
        } else {
            kern = form == DX_XS ? dx_epilogue_kernel<T, DX_XS> : dx_epilogue_kernel<T, DX_XS3>;
        }
    }
    /* as the forward's kernels (launch_t in fused_forward_sm90.cu): the shared-memory limit
     * once per device, again if the launch fails after a context reset dropped it */
    for (int attempt = 0; attempt < 2; attempt++) {
        e = raise_smem_limit((const void *)kern, smem, d.device, attempt > 0);
        if (e != cudaSuccess) return e;
        /* not a programmatic dependent: the kernel does not wait (pdl_wait) for the one
         * before it */
        e = launch_ex(false, cluster, kern, dim3(grid), dim3(DX_THREADS), smem, s, ma, mb, mo,
                      mx, mbh, x, g, l.rowp, M, (int)K, (int)N);
        if (e == cudaSuccess) return e;
        (void)cudaGetLastError();
    }
    return e;
}

cudaError_t launch_dx_epilogue(lnl_dtype dt, const void *dy, const void *x, const void *gamma,
                               const dx_epilogue_layout &l, void *dx, int64_t M, int64_t K,
                               int64_t N, const device_info &d, cudaStream_t s) {
    if (dt == LNL_DTYPE_F16)
        return epilogue_t(dt, (const __half *)dy, (const __half *)x, (const __half *)gamma, l,
                          (__half *)dx, M, K, N, d, s);
    return epilogue_t(dt, (const __nv_bfloat16 *)dy, (const __nv_bfloat16 *)x,
                      (const __nv_bfloat16 *)gamma, l, (__nv_bfloat16 *)dx, M, K, N, d, s);
}

cudaError_t launch_dx_epilogue_dgb(lnl_dtype dt, const void *W, const float *part, int splits,
                                   const int *off_centre, const unsigned *absmax,
                                   const dx_epilogue_layout &l, float *part_g, float *part_b,
                                   int64_t shares, int64_t N, int64_t K, cudaStream_t s) {
    const dim3 grid((unsigned)((K + DGB_COLS - 1) / DGB_COLS), (unsigned)shares);
    if (dt == LNL_DTYPE_F16)
        return launch_dependent(dgb_kernel<__half>, grid, dim3(256), 0, s, (const __half *)W, part,
                                splits, (const float2 *)l.uvn, off_centre, absmax, part_g, part_b,
                                N, K);
    return launch_dependent(dgb_kernel<__nv_bfloat16>, grid, dim3(256), 0, s,
                            (const __nv_bfloat16 *)W, part, splits, (const float2 *)l.uvn,
                            off_centre, absmax, part_g, part_b, N, K);
}

int64_t dx_epilogue_dgb_shares(int64_t N, int64_t K, int64_t most, const device_info &d) {
    /* about four blocks an SM, each share at least 8 rows: every share writes a row of
     * partials (8 K bytes), which at 8 rows a share is an eighth of what it reads of P */
    const int64_t col_blocks = (K + DGB_COLS - 1) / DGB_COLS;
    const int64_t want = (4 * (int64_t)d.sm_count + col_blocks - 1) / col_blocks;
    return std::max<int64_t>(1, std::min<int64_t>({want, (N + 7) / 8, most, 65535}));
}

} // namespace lnl
