/* FUSED forward on Hopper: y = LN(x) @ W^T + b with wgmma, for bf16/f16.
 *
 * One CTA computes a BM x BN tile of y (BM = 128; BN = 128 or 256) with three
 * warpgroups:
 *  - warpgroup 0, the producer: one thread streams 64-wide K slices of x and W
 *    into a ring of shared-memory stages with TMA (128-byte swizzle), each stage
 *    completing on its "full" mbarrier;
 *  - warpgroups 1 and 2, the consumers, 64 rows each: per stage they load their x
 *    fragments with ldmatrix, normalize them in registers
 *    ((x - mean) * rstd * gamma + beta, float32, rounded to T), and issue wgmma with
 *    A from those registers and B (W) from shared memory. LN(x) exists only in
 *    registers, one 64 x 64 slice at a time. They release the stage on its "empty"
 *    mbarrier once their wgmma has read it.
 * mean/rstd come from the statistics pre-pass (launch_ln_forward). The epilogue adds
 * the bias and stores y straight from the accumulators.
 *
 * Tails: TMA fills rows and columns outside x and W with zeros, and the consumers
 * use gamma = beta = 0 past K, so padded K columns contribute exactly 0; rows past M
 * and columns past N are computed but never stored. */
#include <mutex>

#include "cuda_common.cuh"
#include "fused_sm90.cuh"
#include "sm90_primitives.cuh"
#include "wgmma_ops.cuh"

namespace lnl {
namespace {

constexpr int BM = 128, BK = 64, THREADS = 384;

template <int BN> struct tile_cfg {
    static constexpr int STAGES = BN == 256 ? 4 : 6;
    static constexpr int A_BYTES = BM * BK * 2;
    static constexpr int B_BYTES = BN * BK * 2;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    /* stages, the barriers, and slack to align the ring to 1024 bytes (the swizzle atom) */
    static constexpr size_t SMEM = (size_t)STAGES * STAGE_BYTES + 2 * STAGES * 8 + 1024;
};

#if LNL_SM90A /* device helpers; the other compilation passes need none of them */
template <typename T> __device__ __forceinline__ float2 unpack2(uint32_t u);
template <> __device__ __forceinline__ float2 unpack2<__nv_bfloat16>(uint32_t u) {
    return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xFFFF0000u));
}
template <> __device__ __forceinline__ float2 unpack2<__half>(uint32_t u) {
    __half2 h;
    memcpy(&h, &u, 4);
    return __half22float2(h);
}
template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, 4);
    return u;
}
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, 4);
    return u;
}

/* gamma[k], gamma[k+1] (or ones) and beta likewise; zeros past K (k is even, K % 8 == 0). */
template <typename T>
__device__ __forceinline__ void affine_pair(const T *gamma, const T *beta, int k, int K, float2 *g,
                                            float2 *b) {
    if (k >= K) {
        *g = make_float2(0.f, 0.f);
        *b = make_float2(0.f, 0.f);
        return;
    }
    *g = gamma ? unpack2<T>(__ldg((const unsigned int *)(gamma + k))) : make_float2(1.f, 1.f);
    *b = beta ? unpack2<T>(__ldg((const unsigned int *)(beta + k))) : make_float2(0.f, 0.f);
}

template <typename T>
__device__ __forceinline__ uint32_t normalize2(uint32_t u, float mu, float rs, float2 g, float2 b) {
    float2 v = unpack2<T>(u);
    return pack2<T>(fmaf((v.x - mu) * rs, g.x, b.x), fmaf((v.y - mu) * rs, g.y, b.y));
}
#endif

template <typename T, int BN>
__global__ void __launch_bounds__(THREADS, 1)
ln_gemm_fwd_sm90(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_w,
                 const float *__restrict__ mean, const float *__restrict__ rstd,
                 const T *__restrict__ gamma, const T *__restrict__ beta,
                 const T *__restrict__ bias, T *__restrict__ y, int64_t M, int K, int N,
                 bool y_pairs) {
#if LNL_SM90A
    using C = tile_cfg<BN>;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem =
        (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    unsigned char *sA = smem, *sB = smem + C::STAGES * C::A_BYTES;
    uint64_t *full = (uint64_t *)(sB + C::STAGES * C::B_BYTES), *empty = full + C::STAGES;

    /* grouped tile order: GROUP_M m-tiles share each n-tile while both are in L2 */
    constexpr int GROUP_M = 16;
    const int64_t tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int64_t per_group = (int64_t)GROUP_M * tiles_n, b = blockIdx.x;
    const int64_t first_m = b / per_group * GROUP_M;
    const int64_t group_rows = min64(tiles_m - first_m, GROUP_M);
    const int64_t tm = first_m + (b % per_group) % group_rows, tn = (b % per_group) / group_rows;
    const int64_t m0 = tm * BM;
    const int n0 = (int)(tn * BN);
    const int KT = (K + BK - 1) / BK;
    const int wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < C::STAGES; s++) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 8); /* one arrival per consumer warp */
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) { /* ---- producer ---- */
        regs_dealloc<40>();
        if (threadIdx.x == 0) {
            tma_prefetch_map(&map_x);
            tma_prefetch_map(&map_w);
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % C::STAGES;
                mbar_wait(&empty[s], ((kt / C::STAGES) & 1) ^ 1);
                mbar_arrive_expect_tx(&full[s], C::STAGE_BYTES);
                tma_load_2d(sA + s * C::A_BYTES, &map_x, kt * BK, (int32_t)m0, &full[s]);
                tma_load_2d(sB + s * C::B_BYTES, &map_w, kt * BK, n0, &full[s]);
            }
        }
        return;
    }

    /* ---- consumers: warpgroup cw owns tile rows cw*64 .. cw*64+63 ---- */
    regs_alloc<232>();
    const int cw = wg - 1, t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int g = lane >> 2, q = lane & 3;
    const int64_t row0 = m0 + cw * 64 + warp * 16 + g, row1 = row0 + 8;
    const float mu0 = row0 < M ? mean[row0] : 0.f, rs0 = row0 < M ? rstd[row0] : 0.f;
    const float mu1 = row1 < M ? mean[row1] : 0.f, rs1 = row1 < M ? rstd[row1] : 0.f;
    /* ldmatrix: lanes 0-15 address rows 0-15 of the warp's 16 at k 0-7 of a step,
     * lanes 16-31 the same rows at k 8-15; the 128-byte swizzle XORs the 16-byte
     * chunk index with the row index mod 8. */
    const int lrow = cw * 64 + warp * 16 + (lane & 15);
    const uint32_t a_row = (uint32_t)lrow * 128, a_xor = (uint32_t)(lrow & 7);
    const int a_half = lane >> 4;

    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++) acc[i] = 0.f;

    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % C::STAGES;
        mbar_wait(&full[s], (kt / C::STAGES) & 1);
        const uint32_t a_base = smem_addr(sA + s * C::A_BYTES) + a_row;
        uint32_t a[4][4];
#pragma unroll
        for (int st = 0; st < 4; st++) {
            float2 g0, b0, g1, b1; /* columns 16st + 2q (+1) and 16st + 8 + 2q (+1) */
            affine_pair<T>(gamma, beta, kt * BK + 16 * st + 2 * q, K, &g0, &b0);
            affine_pair<T>(gamma, beta, kt * BK + 16 * st + 8 + 2 * q, K, &g1, &b1);
            const uint32_t chunk = (uint32_t)(2 * st + a_half);
            ldmatrix_x4(a[st], a_base + ((chunk ^ a_xor) << 4));
            /* fragment order: rows g / g+8 at k 2q, then rows g / g+8 at k 8+2q */
            a[st][0] = normalize2<T>(a[st][0], mu0, rs0, g0, b0);
            a[st][1] = normalize2<T>(a[st][1], mu1, rs1, g0, b0);
            a[st][2] = normalize2<T>(a[st][2], mu0, rs0, g1, b1);
            a[st][3] = normalize2<T>(a[st][3], mu1, rs1, g1, b1);
        }
        wgmma_fence();
        const uint64_t bdesc = desc_kmajor_sw128(sB + s * C::B_BYTES);
#pragma unroll
        for (int st = 0; st < 4; st++) wgmma_rs<T, BN>(acc, a[st], bdesc + 2 * st);
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < BN / 2; i++) fence_regs(acc[i]);
        if (lane == 0) mbar_arrive(&empty[s]);
    }

    /* ---- epilogue: accumulator j*4 + {0,1} is row g, columns 8j + 2q + {0,1};
     * j*4 + {2,3} the same columns of row g + 8 ---- */
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const int col = n0 + 8 * j + 2 * q;
        if (col >= N) continue;
        const bool two = col + 1 < N;
        const float bi0 = bias ? to_f(bias[col]) : 0.f;
        const float bi1 = bias && two ? to_f(bias[col + 1]) : 0.f;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t row = h ? row1 : row0;
            if (row >= M) continue;
            const float v0 = acc[4 * j + 2 * h] + bi0, v1 = acc[4 * j + 2 * h + 1] + bi1;
            T *dst = y + row * N + col;
            if (two && y_pairs) {
                *(uint32_t *)dst = pack2<T>(v0, v1);
            } else {
                dst[0] = from_f<T>(v0);
                if (two) dst[1] = from_f<T>(v1);
            }
        }
    }
#endif
}

/* ---- host side ---- */
using encode_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                               const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

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

template <typename T, int BN>
cudaError_t launch_t(const CUtensorMap &mx, const CUtensorMap &mw, const float *mean,
                     const float *rstd, const T *gamma, const T *beta, const T *bias, T *y,
                     int64_t M, int64_t K, int64_t N, cudaStream_t s) {
    using C = tile_cfg<BN>;
    static std::once_flag once;
    static cudaError_t attr = cudaSuccess;
    std::call_once(once, [] {
        attr = cudaFuncSetAttribute(ln_gemm_fwd_sm90<T, BN>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::SMEM);
    });
    if (attr != cudaSuccess) return attr;
    const int64_t tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    const bool y_pairs = N % 2 == 0 && ((uintptr_t)y & 3) == 0;
    ln_gemm_fwd_sm90<T, BN><<<(unsigned)tiles, THREADS, C::SMEM, s>>>(
        mx, mw, mean, rstd, gamma, beta, bias, y, M, (int)K, (int)N, y_pairs);
    return cudaGetLastError();
}

bool on_sm90() {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return major == 9 && minor == 0;
}

} // namespace

/* Tile width along N: 256 halves the reads of x per output column; 128 when N is
 * small enough that 256-wide tiles would leave SMs idle. */
static int pick_bn(int64_t M, int64_t N) {
    if (const char *e = getenv("LNL_SM90_BN")) return atoi(e) == 128 ? 128 : 256; /* experiments */
    return N <= 128 ? 128 : 256;
    (void)M;
}

cudaError_t launch_fused_forward_sm90(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const void *gamma, const void *beta,
                                      const void *W, const void *bias, void *y, int64_t M,
                                      int64_t K, int64_t N, cudaStream_t s, bool *launched) {
    *launched = false;
    if (dt != LNL_DTYPE_BF16 && dt != LNL_DTYPE_F16) return cudaSuccess;
    /* TMA needs 16-byte aligned bases and row pitches; gamma/beta are read in pairs. */
    if (K % 8 != 0 || !aligned16(x) || !aligned16(W) || ((uintptr_t)gamma & 3) ||
        ((uintptr_t)beta & 3) || K > INT32_MAX || N > INT32_MAX || M >= ((int64_t)1 << 31))
        return cudaSuccess;
    if (!on_sm90()) return cudaSuccess;
    encode_fn enc = tensor_map_encoder();
    if (!enc) return cudaSuccess;
    const int bn = pick_bn(M, N);
    CUtensorMap mx, mw;
    if (!make_map(enc, &mx, dt, x, M, K, BM) || !make_map(enc, &mw, dt, W, N, K, bn))
        return cudaSuccess;
    cudaError_t e;
    if (dt == LNL_DTYPE_BF16) {
        using T = __nv_bfloat16;
        e = bn == 256 ? launch_t<T, 256>(mx, mw, mean, rstd, (const T *)gamma, (const T *)beta,
                                         (const T *)bias, (T *)y, M, K, N, s)
                      : launch_t<T, 128>(mx, mw, mean, rstd, (const T *)gamma, (const T *)beta,
                                         (const T *)bias, (T *)y, M, K, N, s);
    } else {
        using T = __half;
        e = bn == 256 ? launch_t<T, 256>(mx, mw, mean, rstd, (const T *)gamma, (const T *)beta,
                                         (const T *)bias, (T *)y, M, K, N, s)
                      : launch_t<T, 128>(mx, mw, mean, rstd, (const T *)gamma, (const T *)beta,
                                         (const T *)bias, (T *)y, M, K, N, s);
    }
    *launched = e == cudaSuccess;
    return e;
}

} // namespace lnl
