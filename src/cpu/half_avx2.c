/* AVX2 + F16C 16-bit <-> float row conversions, bitwise equal to half.c's (eight lanes
 * at a time through half_avx2.h). */
#include "half_avx2.h"

void lnl_half_to_f32_row_avx2(float *dst, const uint16_t *src, int64_t n, lnl_dtype kind) {
    int64_t i = 0;
    if (kind == LNL_DTYPE_BF16) {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, lnl_bf16x8_to_f32(src + i));
    } else {
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, lnl_f16x8_to_f32(src + i));
    }
    lnl_half_to_f32_row(dst + i, src + i, n - i, kind);
}

void lnl_f32_to_half_row_avx2(uint16_t *dst, const float *src, int64_t n, lnl_dtype kind) {
    int64_t i = 0;
    if (kind == LNL_DTYPE_BF16) {
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(dst + i), lnl_f32_to_bf16x8(_mm256_loadu_ps(src + i)));
    } else {
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(dst + i), lnl_f32_to_f16x8(_mm256_loadu_ps(src + i)));
    }
    lnl_f32_to_half_row(dst + i, src + i, n - i, kind);
}
