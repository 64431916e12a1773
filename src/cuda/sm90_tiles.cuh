/* Device helpers shared by the Hopper GEMM kernels (fused_forward_sm90.cu and
 * dx_epilogue_sm90.cu): two 16-bit values packed in a 32-bit word, and the grouped order in
 * which a persistent grid walks its output tiles. Needs only the CUDA headers, so that a
 * standalone tool can include it (session 39's prototype did). */
#ifndef LNL_SM90_TILES_CUH
#define LNL_SM90_TILES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include "tile_width.cuh" /* SM90_TILE_ROWS */

namespace lnl {

/* A word's two values (low half first) as floats, and two floats rounded into a word. */
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

/* Tile b in grouped order: 16 m-tiles share each n-tile while both are in L2 (4, 8
 * and 32 measured the same on the H200). Tiles are bm rows by bn columns. */
__device__ __forceinline__ void tile_at(int64_t b, int64_t tiles_m, int64_t tiles_n, int bn,
                                        int64_t *m0, int *n0, int bm = SM90_TILE_ROWS) {
    constexpr int group_m = 16;
    const int64_t per_group = (int64_t)group_m * tiles_n;
    const int64_t first_m = b / per_group * group_m;
    const int64_t rows = tiles_m - first_m < group_m ? tiles_m - first_m : (int64_t)group_m;
    *m0 = (first_m + (b % per_group) % rows) * bm;
    *n0 = (int)((b % per_group) / rows * bn);
}

} // namespace lnl

#endif
