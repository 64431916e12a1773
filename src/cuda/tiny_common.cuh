/* What the one-block kernels of tiny problems share (tiny_forward.cuh, tiny_backward.cuh):
 * their size limits, float conversions usable on the host too (ctest runs their bodies
 * there), and the row statistics. */
#ifndef LNL_TINY_COMMON_CUH
#define LNL_TINY_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stddef.h>
#include <stdint.h>

namespace lnl {

/* At most this many float values of shared memory (the 48 KB a block gets without
 * opting in), and this many multiply-adds per GEMM-like phase (each of 256 threads does
 * at most 128 in a row): beyond, the general path's launches win. Measured on the H200
 * for the backward (docs/results/cuda/2026-12-02-session14, lnl-bench, backward ms, three
 * rounds): 16,8,16 (2^11) 0.010 against 0.026-0.033 for the five launches; 64,32,48
 * (98304) 0.034-0.035 against 0.026-0.032 in bf16 (a loss) and 0.029-0.030 against
 * 0.033-0.040 in f32. A straight line through those puts the bf16 break-even near 6e4;
 * 2^15 keeps clear of it. No shape between was measured, and the forward (a third of
 * the backward's multiply-adds) shares the limit unmeasured. */
constexpr int64_t TINY_MAX_FLOATS = 48 * 1024 / 4;
constexpr int64_t TINY_MAX_MACS = 1 << 15;
constexpr int TINY_THREADS = 256;

__host__ __device__ inline bool tiny_fits(int64_t M, int64_t K, int64_t N, int64_t floats) {
    return M >= 1 && K >= 1 && N >= 1 && M * K * N <= TINY_MAX_MACS && floats <= TINY_MAX_FLOATS;
}

__host__ __device__ inline float tb_load(float v) { return v; }
__host__ __device__ inline float tb_load(__nv_bfloat16 v) { return __bfloat162float(v); }
__host__ __device__ inline float tb_load(__half v) { return __half2float(v); }
template <typename T> __host__ __device__ inline T tb_store(float v);
template <> __host__ __device__ inline float tb_store<float>(float v) { return v; }
template <> __host__ __device__ inline __nv_bfloat16 tb_store<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <> __host__ __device__ inline __half tb_store<__half>(float v) { return __float2half_rn(v); }

/* A row's statistics in two passes over x - x0, x0 = the row's first element (as
 * ln_forward.cu does): the sums stay of the order of the spread, not of the mean, so a
 * row like 1e3 + randn keeps its precision in float32. *dm = mean - x0. */
__host__ __device__ inline void tiny_row_stats(const float *r, int K, float eps, float *dm,
                                               float *rs) {
    const float x0 = r[0];
    float s = 0.f;
    for (int k = 0; k < K; k++) s += r[k] - x0;
    const float d = s / (float)K;
    float q = 0.f;
    for (int k = 0; k < K; k++) q += ((r[k] - x0) - d) * ((r[k] - x0) - d);
    *dm = d;
    *rs = 1.f / sqrtf(q / (float)K + eps);
}

} // namespace lnl

#endif /* LNL_TINY_COMMON_CUH */
