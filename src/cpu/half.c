/* Portable 16-bit <-> float row conversions (half.h). */
#include "half.h"

void lnl_half_to_f32_row(float *dst, const uint16_t *src, int64_t n, lnl_dtype kind) {
    if (kind == LNL_DTYPE_BF16)
        for (int64_t i = 0; i < n; i++) dst[i] = lnl_bf16_to_f32(src[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = lnl_f16_to_f32(src[i]);
}

void lnl_f32_to_half_row(uint16_t *dst, const float *src, int64_t n, lnl_dtype kind) {
    if (kind == LNL_DTYPE_BF16)
        for (int64_t i = 0; i < n; i++) dst[i] = lnl_f32_to_bf16(src[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = lnl_f32_to_f16(src[i]);
}
