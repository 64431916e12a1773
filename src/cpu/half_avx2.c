/* AVX2 + F16C 16-bit <-> float row conversions, bitwise equal to half.c's: F16C's
 * conversions round to nearest even and quiet NaNs as lnl_f32_to_f16 does, and the
 * bf16 rounding below is lnl_f32_to_bf16's, eight lanes at a time. */
#include <immintrin.h>

#include "half.h"

static inline __m128i bf16x8_from_f32(__m256 v) {
    const __m256i u = _mm256_castps_si256(v);
    /* u + 0x7FFF + ((u >> 16) & 1), then the upper halves; NaN lanes: (u >> 16) | 0x40 */
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd), 16);
    __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    r = _mm256_blendv_epi8(r, nan, is_nan);
    /* 32-bit lanes hold values < 2^16: pack the two 128-bit halves without saturating */
    __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
    return _mm_packus_epi32(lo, hi);
}

void lnl_half_to_f32_row_avx2(float *dst, const uint16_t *src, int64_t n, lnl_dtype kind) {
    int64_t i = 0;
    if (kind == LNL_DTYPE_BF16) {
        for (; i + 8 <= n; i += 8) {
            __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
            _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
        }
    } else {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    }
    lnl_half_to_f32_row(dst + i, src + i, n - i, kind);
}

void lnl_f32_to_half_row_avx2(uint16_t *dst, const float *src, int64_t n, lnl_dtype kind) {
    int64_t i = 0;
    if (kind == LNL_DTYPE_BF16) {
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(dst + i), bf16x8_from_f32(_mm256_loadu_ps(src + i)));
    } else {
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(dst + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    }
    lnl_f32_to_half_row(dst + i, src + i, n - i, kind);
}
