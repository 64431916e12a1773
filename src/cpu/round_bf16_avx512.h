/* Rounding 16 floats to bf16 in AVX-512, bitwise lnl_f32_to_bf16 (half.h), shared by the
 * bf16 packer and the bf16 kernel. Include only from files compiled with AVX-512. */
#ifndef LNL_ROUND_BF16_AVX512_H
#define LNL_ROUND_BF16_AVX512_H

#include <immintrin.h>

/* 16 floats rounded to bf16 as lnl_f32_to_bf16 does (nearest even; NaN stays NaN). */
static inline __m256i round_bf16x16(__m512 v) {
    const __m512i u = _mm512_castps_si512(v), hi = _mm512_srli_epi32(u, 16);
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)),
                                 _mm512_and_si512(hi, _mm512_set1_epi32(1)));
    r = _mm512_srli_epi32(r, 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

#endif /* LNL_ROUND_BF16_AVX512_H */
