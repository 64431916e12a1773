/* Eight 16-bit values <-> eight floats in AVX2 + F16C registers, bitwise half.h's scalar
 * conversions: F16C rounds to nearest even and quiets NaNs as lnl_f32_to_f16 does, and
 * the bf16 rounding is lnl_f32_to_bf16's. For files built with the AVX2 flags only. */
#ifndef LNL_HALF_AVX2_H
#define LNL_HALF_AVX2_H

#include <immintrin.h>

#include "half.h"

static inline __m256 lnl_bf16x8_to_f32(const uint16_t *src) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)src));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

static inline __m256 lnl_f16x8_to_f32(const uint16_t *src) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)src));
}

static inline __m128i lnl_f32_to_bf16x8(__m256 v) {
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

static inline __m128i lnl_f32_to_f16x8(__m256 v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}

#endif
