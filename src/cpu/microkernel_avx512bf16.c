/* AVX-512 BF16 micro-kernel: 12 x 32 floats from bf16 panels, one VDPBF16PS per
 * accumulator and depth pair (two multiply-adds per lane, so twice the float kernel's
 * work per instruction). Panels hold depth pairs: A as [kc/2][12][2], B as
 * [kc/2][32][2] bf16 (gemm_pack_bf16.c); an odd depth ends in a zero. The instruction
 * rounds once per pair and treats bf16 subnormals (below 1.2e-38) as zero. On the last
 * depth block of a 16-bit output the finished tile is rounded to bf16 here, so it never
 * goes through memory in float. */
#include <immintrin.h>
#include <string.h>

#include "cpu.h"
#include "round_bf16_avx512.h"

enum { MR = 12, NR = 32 };

void lnl_ukr_bf16_avx512(int64_t kc, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc,
                         int accumulate, const float *bias, uint16_t *c16) {
    __m512 acc[MR][2];
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t u = 0; u < (kc + 1) / 2; u++, a += 2 * MR, b += 2 * NR) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 32);
        for (int i = 0; i < MR; i++) {
            int32_t pair;
            memcpy(&pair, a + 2 * i, sizeof pair);
            const __m512bh ai = (__m512bh)_mm512_set1_epi32(pair);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
    }
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < 2; v++) {
            float *cp = c + i * ldc + v * 16;
            __m512 r = acc[i][v];
            if (accumulate) r = _mm512_add_ps(_mm512_loadu_ps(cp), r);
            else if (bias) r = _mm512_add_ps(r, _mm512_loadu_ps(bias + v * 16));
            if (c16) _mm256_storeu_si256((__m256i *)(c16 + i * ldc + v * 16), round_bf16x16(r));
            else _mm512_storeu_ps(cp, r);
        }
}
