/* LayerNorm forward on the GPU: one block per row, the row cached in shared
 * memory (when it fits) so the two-pass variance reads HBM once; float32 stats. */
#include "cuda_common.cuh"

namespace lnl {

/* Loads V consecutive elements; a single 16-byte load when V * sizeof(T) == 16. */
template <typename T, int V> __device__ __forceinline__ void load_vec(const T *p, T (&v)[V]) {
    if constexpr (V * sizeof(T) == 16) {
        uint4 u = __ldg(reinterpret_cast<const uint4 *>(p));
        memcpy(v, &u, 16);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = p[j];
    }
}
/* The same through a generic pointer (the row cache in shared memory, or x). */
template <typename T, int V> __device__ __forceinline__ void load_vec_any(const T *p, T (&v)[V]) {
    if constexpr (V * sizeof(T) == 16) {
        uint4 u = *reinterpret_cast<const uint4 *>(p);
        memcpy(v, &u, 16);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) v[j] = p[j];
    }
}

/* V = elements per access: 16 bytes when every pointer is aligned and K % V == 0,
 * else 1 (the slower, always-correct path for misaligned buffers). */
template <typename T, typename TO, int V>
__global__ void ln_fwd_kernel(const T *__restrict__ x, const T *__restrict__ gamma,
                              const T *__restrict__ beta, TO *__restrict__ out,
                              float *__restrict__ mean, float *__restrict__ rstd,
                              float *__restrict__ shift, int *__restrict__ off_centre, int64_t M,
                              int64_t K, float eps, int cache) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ float red[32];
    T *srow = reinterpret_cast<T *>(smem_raw);
    const int64_t nchunks = K / V;
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x) {
        const T *xr = x + row * K;
        /* Sum x - x0 (x0 = the row's first element): the partial sums stay of the
         * order of the spread, not of the mean, so a row like 1e3 + randn keeps its
         * precision in float32. */
        const float x0 = to_f(xr[0]);
        float s = 0.f;
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x) {
            T v[V];
            load_vec<T, V>(xr + c * V, v);
            if (cache) store_vec<T, V>(srow + c * V, v); /* read back by this thread only */
#pragma unroll
            for (int j = 0; j < V; j++) s += to_f(v[j]) - x0;
        }
        const float dm = block_sum(s, red) / (float)K, mu = x0 + dm; /* dm = mean - x0 */
        /* second pass: squared deviations from the exact mean (no E[x^2]-E[x]^2) */
        float ss = 0.f;
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x) {
            T v[V];
            load_vec_any<T, V>((cache ? srow : xr) + c * V, v);
#pragma unroll
            for (int j = 0; j < V; j++) {
                float d = (to_f(v[j]) - x0) - dm;
                ss += d * d;
            }
        }
        const float var = block_sum(ss, red) / (float)K;
        const float rs = 1.f / sqrtf(var + eps);
        if (threadIdx.x == 0) {
            mean[row] = mu;
            rstd[row] = rs;
            if (shift) shift[row] = dm;
            if (off_centre && off_centre_row(mu, rs, fold_max_mean_rstd<T>())) *off_centre = 1;
        }
        if (!out) continue;
        TO *orow = out + row * K;
        for (int64_t c = threadIdx.x; c < nchunks; c += blockDim.x) {
            T v[V], g[V], b[V];
            TO o[V];
            load_vec_any<T, V>((cache ? srow : xr) + c * V, v);
            if (gamma) load_vec<T, V>(gamma + c * V, g);
            if (beta) load_vec<T, V>(beta + c * V, b);
#pragma unroll
            for (int j = 0; j < V; j++) {
                float gj = gamma ? to_f(g[j]) : 1.f, bj = beta ? to_f(b[j]) : 0.f;
                o[j] = from_f<TO>(ln_value(to_f(v[j]), x0, dm, rs, gj, bj));
            }
            store_vec<TO, V>(orow + c * V, o);
        }
    }
}

/* One row held in registers: CPT 16-byte chunks per thread (chunk t + i * stride for
 * thread t of the row's group of `stride` threads), all loads issued before the first
 * reduction so each thread keeps CPT loads in flight (the one-chunk-per-thread kernel
 * above reached only ~1.9 TB/s on the H200 at K = 4096). The row's group is a warp
 * (WARP_ROW: the sums in shuffles only) or the whole block. */
template <typename T, typename TO, int V, int CPT, bool WARP_ROW>
__device__ __forceinline__ void ln_fwd_row(const T *__restrict__ x, const T *__restrict__ gamma,
                                           const T *__restrict__ beta, TO *__restrict__ out,
                                           float *__restrict__ mean, float *__restrict__ rstd,
                                           float *__restrict__ shift, int *__restrict__ off_centre,
                                           int64_t row, int64_t K, float eps, int t, int stride,
                                           float *red) {
    const int64_t nchunks = K / V;
    auto sum = [&](float v) { return WARP_ROW ? warp_sum(v) : block_sum(v, red); };
    const T *xr = x + row * K;
    T v[CPT][V];
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int64_t c = t + (int64_t)i * stride;
        if (c < nchunks) load_vec<T, V>(xr + c * V, v[i]);
    }
    const float x0 = to_f(xr[0]); /* shift: see ln_fwd_kernel */
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < CPT; i++)
        if (t + (int64_t)i * stride < nchunks)
#pragma unroll
            for (int j = 0; j < V; j++) s += to_f(v[i][j]) - x0;
    const float dm = sum(s) / (float)K;
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < CPT; i++)
        if (t + (int64_t)i * stride < nchunks)
#pragma unroll
            for (int j = 0; j < V; j++) {
                float d = (to_f(v[i][j]) - x0) - dm;
                ss += d * d;
            }
    const float var = sum(ss) / (float)K;
    const float rs = 1.f / sqrtf(var + eps);
    if (t == 0) {
        mean[row] = x0 + dm;
        rstd[row] = rs;
        if (shift) shift[row] = dm;
        if (off_centre && off_centre_row(x0 + dm, rs, fold_max_mean_rstd<T>())) *off_centre = 1;
    }
    if (!out) return;
    TO *orow = out + row * K;
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int64_t c = t + (int64_t)i * stride;
        if (c >= nchunks) continue;
        T g[V], b[V];
        TO o[V];
        if (gamma) load_vec<T, V>(gamma + c * V, g);
        if (beta) load_vec<T, V>(beta + c * V, b);
#pragma unroll
        for (int j = 0; j < V; j++) {
            float gj = gamma ? to_f(g[j]) : 1.f, bj = beta ? to_f(b[j]) : 0.f;
            o[j] = from_f<TO>(ln_value(to_f(v[i][j]), x0, dm, rs, gj, bj));
        }
        store_vec<TO, V>(orow + c * V, o);
    }
}

/* Rows of more than 128 chunks: a block a row (grid-stride over rows). Needs K % V == 0
 * and aligned pointers. */
template <typename T, typename TO, int V, int CPT>
__global__ void __launch_bounds__(512) ln_fwd_reg_kernel(const T *__restrict__ x, const T *__restrict__ gamma,
                                  const T *__restrict__ beta, TO *__restrict__ out,
                                  float *__restrict__ mean, float *__restrict__ rstd,
                                  float *__restrict__ shift, int *__restrict__ off_centre, int64_t M,
                                  int64_t K, float eps) {
    __shared__ float red[32];
    pdl_launch_dependents(); /* as a statistics pre-pass: the Hopper GEMM may be set up now */
    for (int64_t row = blockIdx.x; row < M; row += gridDim.x)
        ln_fwd_row<T, TO, V, CPT, false>(x, gamma, beta, out, mean, rstd, shift, off_centre, row, K, eps,
                                     threadIdx.x, blockDim.x, red);
}

/* Rows of up to 128 chunks (K <= 1024 in bf16/f16, 512 in f32): a warp a row, LN_FWD_WARPS
 * rows a block, no barriers. A block a row there ran 96-thread blocks at K = 768 bf16,
 * one row in flight each and four barriers a row. H200, bf16, writing the output, per
 * call without PDL (profile_cuda.py, session 10 call 2): 4096 x 768 5.0 us (was 6.9),
 * 8192 x 768 10.2 (13.2), 8192 x 1024 11.1 (15.5). */
constexpr int LN_FWD_WARPS = 8;
template <typename T, typename TO, int V, int CPT>
__global__ void __launch_bounds__(32 * LN_FWD_WARPS) ln_fwd_warp_kernel(
    const T *__restrict__ x, const T *__restrict__ gamma, const T *__restrict__ beta,
    TO *__restrict__ out, float *__restrict__ mean, float *__restrict__ rstd,
    float *__restrict__ shift, int *__restrict__ off_centre, int64_t M, int64_t K, float eps) {
    pdl_launch_dependents(); /* as ln_fwd_reg_kernel */
    const int64_t warps = (int64_t)gridDim.x * LN_FWD_WARPS;
    for (int64_t row = (int64_t)blockIdx.x * LN_FWD_WARPS + (threadIdx.x >> 5); row < M; row += warps)
        ln_fwd_row<T, TO, V, CPT, true>(x, gamma, beta, out, mean, rstd, shift, off_centre, row, K, eps,
                                    threadIdx.x & 31, 32, nullptr);
}

/* T: x's and the parameters' type; TO: LN(x)'s (T, or a 16-bit type beside a float32 x:
 * ln_float32, launch_ln_forward_mixed) */
template <typename T, typename TO>
static cudaError_t ln_forward_t(const T *x, const T *gamma, const T *beta, TO *out, float *mean,
                                float *rstd, float *shift, int *off_centre, int64_t M, int64_t K,
                                float eps, const device_info &d, cudaStream_t s) {
    constexpr int V = vec_elems<T>();
    bool vec = K % V == 0 && aligned16(x) && aligned16(out) && aligned16(gamma) && aligned16(beta);
    int64_t nchunks = vec ? K / V : K;
    if (vec) {
        /* up to 128 chunks: a warp a row; then the fewest chunks per thread (2, 4, 8)
         * that fit 128 threads; longer rows use up to 512 threads with 8 chunks (~120
         * registers each); longer still take the general kernel */
        if (nchunks <= 128) {
            const unsigned wgrid = (unsigned)std::min<int64_t>((M + LN_FWD_WARPS - 1) / LN_FWD_WARPS, 1 << 20);
#define LNL_FWD_WARP(CPT)                                                                       \
    ln_fwd_warp_kernel<T, TO, V, CPT><<<wgrid, 32 * LN_FWD_WARPS, 0, s>>>(x, gamma, beta, out, mean, rstd, \
                                                                     shift, off_centre, M, K, eps)
            if (nchunks <= 32) LNL_FWD_WARP(1);
            else if (nchunks <= 64) LNL_FWD_WARP(2);
            else if (nchunks <= 96) LNL_FWD_WARP(3);
            else LNL_FWD_WARP(4);
#undef LNL_FWD_WARP
            return cudaGetLastError();
        }
        unsigned grid = (unsigned)std::min<int64_t>(M, 1 << 20);
        auto thr = [&](int cpt) { return (int)(((nchunks + cpt - 1) / cpt + 31) / 32 * 32); };
#define LNL_FWD_REG(CPT)                                                                       \
    ln_fwd_reg_kernel<T, TO, V, CPT><<<grid, thr(CPT), 0, s>>>(x, gamma, beta, out, mean, rstd, shift, \
                                                           off_centre, M, K, eps)
        if (nchunks <= 256) LNL_FWD_REG(2);
        else if (nchunks <= 512) LNL_FWD_REG(4);
        else if (nchunks <= 8 * 512) LNL_FWD_REG(8);
#undef LNL_FWD_REG
        if (nchunks <= 8 * 512) return cudaGetLastError();
    }
    int threads = (int)std::min<int64_t>(512, std::max<int64_t>(32, (nchunks + 31) / 32 * 32));
    size_t row_bytes = (size_t)K * sizeof(T);
    int cache = row_bytes <= 48 * 1024; /* longer rows are re-read (from L2) instead */
    unsigned grid = (unsigned)std::min<int64_t>(M, 1 << 20);
    size_t smem = cache ? row_bytes : 0;
    if (vec)
        ln_fwd_kernel<T, TO, V><<<grid, threads, smem, s>>>(x, gamma, beta, out, mean, rstd, shift,
                                                        off_centre, M, K, eps, cache);
    else
        ln_fwd_kernel<T, TO, 1><<<grid, threads, smem, s>>>(x, gamma, beta, out, mean, rstd, shift,
                                                        off_centre, M, K, eps, cache);
    return cudaGetLastError();
}

cudaError_t launch_ln_forward(lnl_dtype dt, const void *x, const void *gamma, const void *beta,
                              void *out, float *mean, float *rstd, float *shift, int64_t M,
                              int64_t K, float eps, const device_info &d, cudaStream_t s,
                              int *off_centre) {
    if (M == 0) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    LNL_DISPATCH(dt, T,
                 e = ln_forward_t<T, T>((const T *)x, (const T *)gamma, (const T *)beta, (T *)out,
                                        mean, rstd, shift, off_centre, M, K, eps, d, s));
    return e;
}

cudaError_t launch_ln_forward_mixed(lnl_dtype out_dt, const float *x, const float *gamma,
                                    const float *beta, void *out, float *mean, float *rstd,
                                    float *shift, int64_t M, int64_t K, float eps,
                                    const device_info &d, cudaStream_t s) {
    if (M == 0) return cudaSuccess;
    if (out_dt == LNL_DTYPE_BF16)
        return ln_forward_t<float, __nv_bfloat16>(x, gamma, beta, (__nv_bfloat16 *)out, mean, rstd,
                                                  shift, nullptr, M, K, eps, d, s);
    if (out_dt == LNL_DTYPE_F16)
        return ln_forward_t<float, __half>(x, gamma, beta, (__half *)out, mean, rstd, shift, nullptr,
                                           M, K, eps, d, s);
    return cudaErrorInvalidValue;
}

template <typename T>
__global__ void add_bias_kernel(T *__restrict__ y, const T *__restrict__ bias, int64_t M, int64_t N) {
    const int64_t total = M * N;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = from_f<T>(to_f(y[i]) + to_f(bias[i % N]));
}

cudaError_t launch_add_bias(lnl_dtype dt, void *y, const void *bias, int64_t M, int64_t N,
                            cudaStream_t s) {
    if (M == 0) return cudaSuccess;
    unsigned grid = (unsigned)std::min<int64_t>((M * N + 255) / 256, 1 << 16);
    LNL_DISPATCH(dt, T, add_bias_kernel<T><<<grid, 256, 0, s>>>((T *)y, (const T *)bias, M, N));
    return cudaGetLastError();
}

} // namespace lnl
