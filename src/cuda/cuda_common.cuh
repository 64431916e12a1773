/* Shared pieces of the CUDA backend: element types, conversions, the workspace
 * carve-up, launch checks, and the declarations each .cu file provides. */
#ifndef LNL_CUDA_COMMON_CUH
#define LNL_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cublasLt.h>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <utility>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "internal.h"
}
#include "dw_scale.cuh"

namespace lnl {

/* ---- element types: storage T, arithmetic float ---- */
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }

/* Elements in one 16-byte vector. */
template <typename T> constexpr int vec_elems() { return 16 / (int)sizeof(T); }

/* LN(x) of one element, (x - x0 - dm) * rstd * gamma + beta, in this order wherever the
 * library writes LN(x) (the LayerNorm forward, and the backward's rebuild beside dx), so
 * that both give the same bits: x0 is the row's mean, or its first element with dm the
 * exact shift (float32). */
__device__ __forceinline__ float ln_value(float x, float x0, float dm, float rs, float g, float b) {
    return ((x - x0) - dm) * rs * g + b;
}

/* Stores V consecutive elements; a single 16-byte store when V * sizeof(T) == 16, an
 * 8-byte one when it is 8 (a 16-bit LN(x) of four float32 elements: ln_float32). */
template <typename T, int V> __device__ __forceinline__ void store_vec(T *p, const T (&v)[V]) {
    if constexpr (V * sizeof(T) == 16) {
        uint4 u;
        memcpy(&u, v, 16);
        *reinterpret_cast<uint4 *>(p) = u;
    } else if constexpr (V * sizeof(T) == 8) {
        uint2 u;
        memcpy(&u, v, 8);
        *reinterpret_cast<uint2 *>(p) = u;
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) p[j] = v[j];
    }
}

inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

inline cudaDataType_t cuda_type(lnl_dtype d) {
    return d == LNL_DTYPE_F32 ? CUDA_R_32F : d == LNL_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

/* Runs body with T bound to the storage type of dtype (F32, BF16, F16). */
#define LNL_DISPATCH(dtype, T, ...)                                                            \
    switch (dtype) {                                                                           \
    case LNL_DTYPE_BF16: { using T = __nv_bfloat16; __VA_ARGS__; } break;                      \
    case LNL_DTYPE_F16: { using T = __half; __VA_ARGS__; } break;                              \
    default: { using T = float; __VA_ARGS__; } break;                                          \
    }

__host__ __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- block-wide sums in a fixed order (deterministic for a fixed block size) ---- */
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float2 warp_sum(float2 v) { return make_float2(warp_sum(v.x), warp_sum(v.y)); }
/* Each warp sums its lanes, then every warp sums the warps' totals, both by the same
 * fixed shuffle tree, so every thread gets the same total. red must hold 32 values of V.
 * Ends with a barrier so red can be reused right away. */
template <typename V> __device__ __forceinline__ V block_reduce(V v, V *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    V t = lane < nw ? red[lane] : V{};
    t = warp_sum(t);
    __syncthreads();
    return t;
}
__device__ __forceinline__ float block_sum(float v, float *red) { return block_reduce(v, red); }
/* Two sums for the price of one pair of barriers; each is bitwise what block_sum gives. */
__device__ __forceinline__ float2 block_sum2(float a, float b, float2 *red) {
    return block_reduce(make_float2(a, b), red);
}

/* ---- programmatic dependent launch (Hopper) ----
 * Most of our kernels are launched with programmatic stream serialization
 * (launch_dependent below): the GPU may start a kernel while the one before it in the
 * stream is still finishing, once every block of that one has called
 * pdl_launch_dependents (or exited). The early kernel must then call pdl_wait before
 * it touches memory: the wait returns once the kernel before it has completed and its
 * writes are visible (and that one, launched the same way, waited for its own
 * predecessor, so the order holds down the chain). So a launch's fixed cost overlaps
 * the tail of the previous kernel instead of following it. Both are no-ops before
 * sm_90 and in kernels launched the ordinary way. H200, bf16 FUSED forward (weight
 * folding, statistics, GEMM, the idle second form), ms, with vs without
 * (docs/results/cuda/2026-12-01-session6/call2): 4096,768,768 0.0291-0.0292 vs
 * 0.0351-0.0360; 8192,1024,1024 0.0524-0.0526 vs 0.0556-0.0565; 32768,4096,256
 * 0.1474-0.1477 vs 0.1508-0.1519. */
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* ---- device facts ---- */
struct device_info {
    int device, sm_count, major, minor;
    size_t max_smem_optin;
};
lnl_status device_query(device_info *d);
/* cudaFuncSetAttribute(kernel, MaxDynamicSharedMemorySize, bytes) on `device` (the
 * current one), skipped when an earlier call set at least that much there, unless `again`
 * (after a launch failed: a cudaDeviceReset drops the context's attributes). The one
 * record of these limits: the LayerNorm backward's ring kernel (its size varies by call)
 * and the Hopper forward's kernels (raise_width_smem_limit) both go through it. */
cudaError_t raise_smem_limit(const void *kernel, size_t bytes, int device, bool again);
/* A non-negative integer from the environment, or `fallback` when unset or malformed:
 * the LNL_CUDA_* overrides, read on each call, for tests and timing (like LNL_CPU_ISA). */
int64_t env_int64(const char *name, int64_t fallback);

/* Blocks of `threads` an SM of kernel k, asked once per device (the occupancy query costs
 * host time on every call, and its answer depends only on the device and the launch);
 * cache: the kernel's own, 0 meaning not asked yet (racing callers store the same value).
 * 1 if the query fails (not kept). For grids sized to one wave of resident blocks. */
template <typename Kernel>
int blocks_per_sm(std::atomic<int> (&cache)[64], Kernel k, int threads, const device_info &d) {
    std::atomic<int> *slot = d.device >= 0 && d.device < 64 ? &cache[d.device] : nullptr;
    int occ = slot ? slot->load(std::memory_order_relaxed) : 0;
    if (occ > 0) return occ;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, threads, 0) != cudaSuccess ||
        occ <= 0) {
        (void)cudaGetLastError();
        return 1;
    }
    if (slot) slot->store(occ, std::memory_order_relaxed);
    return occ;
}

/* -DLNL_PDL=0 (timing only): every kernel launched the ordinary way. */
#ifndef LNL_PDL
#define LNL_PDL 1
#endif
/* kernel<<<grid, block, smem, s>>>(args...); with `dependent`, as a programmatic dependent
 * of the kernel before it in the stream on devices that have it (sm_90+), and the kernel
 * must then call pdl_wait() before it reads or writes anything; cluster_x > 1: in
 * clusters of cluster_x consecutive blocks (grid.x a multiple of it). Returns the
 * launch's error. */
template <typename... P, typename... A>
cudaError_t launch_ex(bool dependent, unsigned cluster_x, void (*kernel)(P...), dim3 grid,
                      dim3 block, size_t smem, cudaStream_t s, A &&...args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    if (dependent) {
        device_info d;
        const bool pdl = LNL_PDL && device_query(&d) == LNL_STATUS_SUCCESS && d.major >= 9;
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n++].val.programmaticStreamSerializationAllowed = pdl ? 1 : 0;
    }
    if (cluster_x > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = cluster_x;
        attr[n].val.clusterDim.y = 1;
        attr[n++].val.clusterDim.z = 1;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}
/* launch_ex as a programmatic dependent */
template <typename... P, typename... A>
cudaError_t launch_dependent_clusters(unsigned cluster_x, void (*kernel)(P...), dim3 grid,
                                      dim3 block, size_t smem, cudaStream_t s, A &&...args) {
    return launch_ex(true, cluster_x, kernel, grid, block, smem, s, std::forward<A>(args)...);
}
template <typename... P, typename... A>
cudaError_t launch_dependent(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t s, A &&...args) {
    return launch_dependent_clusters(1, kernel, grid, block, smem, s, std::forward<A>(args)...);
}

/* ---- workspace: one caller or library buffer carved into 256-byte-aligned regions ---- */
inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
struct carver {
    char *base;
    size_t used;
    void *take(size_t bytes) {
        void *p = base ? base + used : nullptr;
        used += align_up(bytes, 256);
        return p;
    }
};

/* cuBLASLt scratch: enough for its split-K kernels on Hopper. */
constexpr size_t LT_WORKSPACE = (size_t)8 << 20;
/* cuBLAS scratch for the float32 backward GEMMs (gemm_cublas.cu): cuBLAS's own default
 * pool on Hopper. Its heuristic looks at the size: with 8 MiB, dW at 4096,768,768
 * ran a 64x64 SIMT kernel (0.135 ms on the H200), with its own pool the 256x128
 * split-K one PyTorch gets (0.099 ms). */
constexpr size_t BLAS_WORKSPACE = (size_t)32 << 20;

/* dxhat = dy @ W, the LayerNorm backward's input, is float32 for f32 problems and for
 * bf16/f16 rows shorter than 512; longer bf16/f16 rows keep it in the io dtype, as
 * PyTorch's own backward does. That halves the traffic of the backward's largest
 * intermediate (M x K; 2 x 64 MB saved at 8192 x 4096), and its rounding (2^-9 for
 * bf16) stays far inside the bf16/f16 bounds once K is large: dx subtracts from dxhat
 * its projections on 1 and xhat, which amplifies relative error by about
 * sqrt(K / (K - 2)), but by much more on short rows (bf16 dxhat gave a dx error of
 * 1.03e-2 at M=1, K=3, N=257 on the H200, above the 1e-2 bound). */
inline bool dxhat_f32(lnl_dtype dt, int64_t K) { return dt == LNL_DTYPE_F32 || K < 512; }

/* ---- plans: how big each helper buffer is, shared by size queries and calls ---- */
int64_t ln_bwd_grid(lnl_dtype dt, int64_t M, int64_t K, const device_info &d);
int64_t colsum_grid(lnl_dtype dt, int64_t M, int64_t N, const device_info &d);
int dw_splits(lnl_dtype dt, int64_t M, int64_t N, int64_t K, const device_info &d);

/* ---- kernels' host launchers (return cudaGetLastError()) ---- */
/* The largest |mean| * rstd of a row for which the Hopper forward's epilogue form keeps
 * its accuracy (see fused_forward_sm90.cu). */
constexpr float FOLD_MAX_MEAN_RSTD = 64.f;
/* float32's epilogue form (f32_fold.cu) cancels the mean in float32, whose
 * error grows as 2.6e-7 |mean| rstd (bench/epilogue_form_numerics_f32.py): 16 keeps y
 * within 4.2e-6 of float64, under the float32 bound of 1e-5. */
constexpr float F32_FOLD_MAX_MEAN_RSTD = 16.f;
template <typename T> __host__ __device__ constexpr float fold_max_mean_rstd() {
    return std::is_same<T, float>::value ? F32_FOLD_MAX_MEAN_RSTD : FOLD_MAX_MEAN_RSTD;
}
/* dW from the raw x (dw_from_x.cu) cancels each row's mean the same way; in float32 its
 * error grows as 3.4e-7 |mean| rstd (bench/dw_from_x_numerics_f32.py), so 8 there (2.8e-6).
 * bf16 keeps the forward's 64. f16, whose bound is a fifth of bf16's, stops at 16:
 * session 42 had raised it to 64 (bench/dw_from_x_numerics.py --dtype f16, M = 32768,
 * K = 64: 2.3e-4 at 64 on the H200's tensor cores, 2.7e-4 with float32 added in row order,
 * the rebuild's 2.2e-4; docs/results/cuda/2026-12-04-session42), and the H200 passed
 * test_numerics' f16 rows at |mean| rstd ~ 50 (33000 x 1024 x 200) with it. On an H100
 * (session 52, docs/results/cuda/2026-12-05-session52) the same rows and library gave
 * dW 5.3e-4 and dgamma 5.6e-4 against eager's 2.9e-4, past f16's bound of 5e-4: cuBLAS
 * accumulates G over M in another order there, and G's float32 rounding is multiplied by
 * |mean| rstd. At 16 that term is a third of what it was at ~50. */
constexpr float F32_DW_MAX_MEAN_RSTD = 8.f, F16_DW_MAX_MEAN_RSTD = 16.f;
template <typename T> __host__ __device__ constexpr float dw_max_mean_rstd() {
    return std::is_same<T, float>::value    ? F32_DW_MAX_MEAN_RSTD
           : std::is_same<T, __half>::value ? F16_DW_MAX_MEAN_RSTD
                                            : FOLD_MAX_MEAN_RSTD;
}
/* f16's dW from the raw x scales dy' = rstd dy by 2^e so that it fits f16 (rstd up to
 * 1 / sqrt(eps) takes rstd dy past 65504 where dy alone is in range) and uses f16's
 * precision (a gradient of 1e-6 would be subnormal). absmax holds the float bits of
 * max |rstd dy| over the call (launch_dy_absmax; uint order is float order for
 * non-negative floats, NaN above inf); e puts that maximum in [2^14, 2^15), so no
 * rounding reaches f16's 65504. Zero, inf and NaN: e = 0 (the gradient is then what it
 * is). G and u carry the 2^e, which dw_finish and the dx epilogue's dgamma take off
 * again, exactly. */
__device__ __forceinline__ int dw_scale_exp(const unsigned *absmax) {
    return dw_scale_exp_of(__uint_as_float(*absmax)); /* dw_scale.cuh */
}
/* The statistics passes' test of that limit (true for NaN too). */
__device__ __forceinline__ bool off_centre_row(float mean, float rstd,
                                               float limit = FOLD_MAX_MEAN_RSTD) {
    return !(fabsf(mean) * rstd <= limit);
}
/* LayerNorm forward: mean/rstd (float, always written) and, when out != NULL, the
 * normalized row. gamma/beta may be NULL (ones/zeros).
 * shift (optional) receives mean - x[row][0] in float: kernels that rebuild
 * x - mean as (x - x[row][0]) - shift keep float32 precision on rows whose mean is
 * far larger than their spread (float32 storage of such a mean alone is off by
 * up to half an ulp of the mean). Used for F32, where that error would show.
 * off_centre (optional, set to 0 beforehand) becomes 1 when some row's |mean| * rstd
 * exceeds FOLD_MAX_MEAN_RSTD (or is NaN). */
cudaError_t launch_ln_forward(lnl_dtype dt, const void *x, const void *gamma, const void *beta,
                              void *out, float *mean, float *rstd, float *shift, int64_t M,
                              int64_t K, float eps, const device_info &d, cudaStream_t s,
                              int *off_centre = nullptr);
/* The same for ln_float32: a float32 x, gamma and beta, and LN(x) written in out_dt (BF16
 * or F16), rounded once from float32 as a cast of eager's float32 LayerNorm would be. */
cudaError_t launch_ln_forward_mixed(lnl_dtype out_dt, const float *x, const float *gamma,
                                    const float *beta, void *out, float *mean, float *rstd,
                                    float *shift, int64_t M, int64_t K, float eps,
                                    const device_info &d, cudaStream_t s);
/* y[m, n] += bias[n] (when cuBLASLt cannot fuse the bias, e.g. a misaligned one). */
cudaError_t launch_add_bias(lnl_dtype dt, void *y, const void *bias, int64_t M, int64_t N,
                            cudaStream_t s);
/* LayerNorm backward from dxhat [M,K]: dx (optional), and per-block float partials
 * of dgamma/dbeta ([G,K] each, optional) reduced later by launch_reduce_partials. */
/* With ln_out (16-bit dtypes with dxhat in their own dtype only: !dxhat_f32), it also
 * writes LN(x) = xhat * gamma + beta there, as launch_ln_forward would (beta may be
 * null, as gamma may). ln_out may be dxhat itself (the backward's workspace does so):
 * each thread writes only chunks of the row it has already read, with coherent loads. */
cudaError_t launch_ln_backward(lnl_dtype dt, const void *dxhat, const void *x, const float *mean,
                               const float *rstd, const float *shift, const void *gamma, void *dx,
                               float *part_g, float *part_b, int64_t M, int64_t K, int64_t G,
                               const device_info &d, cudaStream_t s, const void *beta = nullptr,
                               void *ln_out = nullptr);
/* out[l] = sum_{g<G} part[g*L + l] in order g = 0..G-1, stored as dtype. */
cudaError_t launch_reduce_partials(lnl_dtype dt, const float *part, int64_t G, int64_t L, void *out,
                                   cudaStream_t s);
/* The same for up to MAX_REDUCE_JOBS independent reductions, in one launch. */
constexpr int MAX_REDUCE_JOBS = 4;
struct reduce_job {
    const float *part;
    int64_t G, L;
    void *out;
};
cudaError_t launch_reduce_partials(lnl_dtype dt, const reduce_job *jobs, int n, cudaStream_t s);
/* part[g*N + n] = sum over row chunk g of dy[m, n]. */
cudaError_t launch_colsum_partials(lnl_dtype dt, const void *dy, int64_t M, int64_t N, int64_t G,
                                   float *part, cudaStream_t s);
/* y = LN(x) @ W^T + b with LN applied while loading x (mean/rstd precomputed); on
 * Hopper in the epilogue form when fold is given (fused_sm90.cuh). run_if (float32
 * only): the kernel returns at once unless *run_if != 0 (f32_fold.cu's fallback). */
struct sm90_fold;
cudaError_t launch_fused_forward_gemm(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const float *shift, const void *gamma, const void *beta,
                                      const void *W, const void *bias, const sm90_fold *fold,
                                      void *y, int64_t M, int64_t K, int64_t N,
                                      const device_info &d, cudaStream_t s,
                                      const int *run_if = nullptr);
/* The same in one launch, mean/rstd computed in the kernel and written out, for tiny
 * bf16/f16 problems; *done false (nothing launched) when the problem is not one. */
cudaError_t launch_fused_forward_with_stats(lnl_dtype dt, const void *x, float *mean, float *rstd,
                                            float eps, const void *gamma, const void *beta,
                                            const void *W, const void *bias, void *y, int64_t M,
                                            int64_t K, int64_t N, cudaStream_t s, bool *done);
/* The whole forward of a tiny problem in one launch (tiny_forward.cuh): where
 * tiny_forward_serves(M, K, N). mean/rstd may be NULL; gamma/beta/bias NULL:
 * ones/zeros/zeros. */
bool tiny_forward_serves(int64_t M, int64_t K, int64_t N);
cudaError_t launch_tiny_forward(lnl_dtype dt, const void *x, const void *gamma, const void *beta,
                                const void *W, const void *bias, void *y, float *mean,
                                float *rstd, int64_t M, int64_t K, int64_t N, float eps,
                                cudaStream_t s);
/* float32's epilogue form (f32_fold.cu): W' = W gamma into
 * wfold [N, K] and {c[n], d[n]} = {sum_k W'[n, k], sum_k W[n, k] beta[k] + bias[n]} into cd,
 * clearing *off_centre (which the statistics pass then sets); and, after the GEMM
 * y = x W'^T, y = rstd (y - mean c) + d in place unless *off_centre. */
cudaError_t launch_f32_fold(const float *W, const float *gamma, const float *beta,
                            const float *bias, float *wfold, float *cd, int *off_centre,
                            int64_t N, int64_t K, const device_info &d, cudaStream_t s);
cudaError_t launch_f32_fold_epilogue(float *y, const float *mean, const float *rstd,
                                     const float *cd, const int *off_centre, int64_t M,
                                     int64_t N, const device_info &d, cudaStream_t s);
/* The whole backward of a tiny problem in one launch (tiny_backward.cuh): where
 * tiny_backward_serves(M, K, N). Any output may be NULL; gamma/beta NULL: ones/zeros. */
bool tiny_backward_serves(int64_t M, int64_t K, int64_t N);
cudaError_t launch_tiny_backward(lnl_dtype dt, const void *x, const void *dy, const void *W,
                                 const void *gamma, const void *beta, void *dx, void *dgamma,
                                 void *dbeta, void *dW, void *db, int64_t M, int64_t K, int64_t N,
                                 float eps, cudaStream_t s);
/* dW = dy^T @ LN(x), LN rebuilt while loading x; splits > 1 writes float partials
 * [splits,N,K] to part and reduces them in order. With run_if, the
 * kernel returns at once unless *run_if != 0, and otherwise always writes the float
 * partials, which the caller reduces (dw_from_x.cu's fallback; dW is not written). */
cudaError_t launch_fused_dw_gemm(lnl_dtype dt, const void *dy, const void *x, const float *mean,
                                 const float *rstd, const float *shift, const void *gamma, const void *beta, void *dW,
                                 float *part, int splits, int64_t M, int64_t K, int64_t N,
                                 const device_info &d, cudaStream_t s, const int *run_if = nullptr);
/* dW from the raw x (dw_from_x.cu). Prep: dyp = T(rstd * dy) [M,N] (f16: T(2^e rstd dy),
 * e = dw_scale_exp(absmax), after launch_dy_absmax wrote *absmax, which the caller zeroed),
 * *G partial rows [*G,N] of {u, v} pairs, u = sum dyp * mean and v = sum dy, and
 * *off_centre = 1 where a row's |mean| * rstd exceeds dw_max_mean_rstd<T>() (cleared by
 * the caller); *G is at most dw_prep_rows(dt, M, N, d). Finish: u and v summed by chunks
 * of partial rows into uv ([chunks,N] float pairs), then dW = gamma * (G - u) + beta * v
 * from G [N,K] float32 at part, or, with *off_centre set, the sum of the fused kernel's
 * [splits,N,K] partials at part (p_parts: partials of P = dy^T xhat, the fused kernel
 * run with gamma and beta null, which the finish then applies); and dbias = v when dbias
 * is given, uvn[n] = {u, v} when uvn is (f16: G - u and u scaled by 2^e, which the finish
 * takes off). absmax: f16's, null otherwise. */
int64_t dw_prep_rows(lnl_dtype dt, int64_t M, int64_t N, const device_info &d);
cudaError_t launch_dy_absmax(const void *dy, const float *rstd, unsigned *absmax, int64_t M,
                             int64_t N, const device_info &d, cudaStream_t s);
cudaError_t launch_dw_prep(lnl_dtype dt, const void *dy, const float *mean, const float *rstd,
                           const unsigned *absmax, void *dyp, float2 *part_uv, int *off_centre,
                           int64_t M, int64_t N, const device_info &d, cudaStream_t s,
                           int64_t *G);
constexpr int DW_SUM_CHUNKS = 32; /* uv holds DW_SUM_CHUNKS x 2N floats */
cudaError_t launch_dw_finish(lnl_dtype dt, const float *part, int splits, const float2 *part_uv,
                             int64_t G, float2 *uv, const void *gamma, const void *beta,
                             const int *off_centre, const unsigned *absmax, void *dW,
                             void *dbias, int64_t N, int64_t K, const device_info &d,
                             cudaStream_t s, float2 *uvn = nullptr, bool p_parts = false);

/* ---- cuBLASLt (gemm_cublaslt.cu) ---- */
enum lt_epilogue { LT_NONE, LT_BIAS };
/* Column-major D[m,n] = op(A)[m,k] @ op(B)[k,n] (+ bias[m] with LT_BIAS), all of dtype,
 * fp32 accumulation (true fp32 for F32); D is float32 when d_f32. Returns LNL_STATUS_UNSUPPORTED when no algorithm serves the
 * epilogue (the caller falls back), DEVICE_ERROR on failure. */
lnl_status lt_matmul(lnl_dtype dt, bool d_f32, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                     const void *A, int64_t lda, const void *B, int64_t ldb, void *D, int64_t ldd,
                     lt_epilogue epi, void *bias, void *lt_ws, size_t lt_ws_bytes,
                     cudaStream_t s);

/* ---- cuBLAS (gemm_cublas.cu) ---- */
/* Column-major float32 D[m,n] = op(A)[m,k] @ op(B)[k,n] through cublasSgemm, true fp32
 * (why not cuBLASLt: see gemm_cublas.cu). ws: ws_bytes of the caller's stream-ordered
 * scratch, lent to cuBLAS for this call. Returns LNL_STATUS_UNSUPPORTED when it cannot
 * take the call (a size beyond cuBLAS's int; the caller uses lt_matmul), DEVICE_ERROR
 * on failure. */
lnl_status blas_sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float *A,
                      int64_t lda, const float *B, int64_t ldb, float *D, int64_t ldd, void *ws,
                      size_t ws_bytes, cudaStream_t s);

} // namespace lnl

#endif
