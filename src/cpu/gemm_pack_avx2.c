/* AVX2 packing for the f32 shapes that dominate: 6- or 12-row A slivers and 16- or
 * 32-column B slivers (the AVX2 and the AVX-512 kernels') from contiguous rows, with
 * the LayerNorm fused. Anything else falls back to
 * the portable lnl_pack_*_f32. The transform keeps the portable code's operation
 * order ((v - mean) * rstd, * gamma, + beta; no FMA contraction under -std=c11), so
 * the packed values are bitwise the same whichever routine packed them. */
#include <immintrin.h>

#include "gemm.h"
#include "half_avx2.h"
#include "transpose8_avx2.h"

/* x, normalized as the portable code does it when xf: ((x - mu) * rs) * gamma + beta. */
static inline __m256 ln8(__m256 v, float mu, float rs, __m256 g, __m256 b, int xf, int has_g,
                         int has_b) {
    if (!xf) return v;
    v = _mm256_mul_ps(_mm256_sub_ps(v, _mm256_set1_ps(mu)), _mm256_set1_ps(rs));
    if (has_g) v = _mm256_mul_ps(v, g);
    if (has_b) v = _mm256_add_ps(v, b);
    return v;
}

/* Columns p.. of an mr-row sliver in scalar code (the tail past the last 8 columns),
 * in the same operation order as ln8. */
static void pack_a_tail(float *d, int mr, const float *const *s, int mm, int64_t p, int64_t kc,
                        const float *mu, const float *rs, const float *gamma, const float *beta,
                        int xf) {
    for (; p < kc; p++)
        for (int i = 0; i < mr; i++) {
            float v = 0;
            if (i < mm) {
                v = s[i][p];
                if (xf) {
                    v = (v - mu[i]) * rs[i];
                    if (gamma) v = v * gamma[p];
                    if (beta) v = v + beta[p];
                }
            }
            d[p * mr + i] = v;
        }
}

/* Columns p..p+7 of sliver rows first..first+n-1 (n <= 8) into r[0..n-1], normalized
 * when xf; zeros for rows past mm and for r[n..7]. */
static inline void rows8(__m256 r[8], const float *const *s, int first, int n, int mm, int64_t p,
                         const float *mu, const float *rs, __m256 g, __m256 b, const float *gamma,
                         const float *beta, int xf) {
    for (int i = 0; i < 8; i++)
        r[i] = i < n && first + i < mm
                   ? ln8(_mm256_loadu_ps(s[first + i] + p), mu[first + i], rs[first + i], g, b, xf,
                         gamma != NULL, beta != NULL)
                   : _mm256_setzero_ps();
}

/* One 6-row sliver from row-contiguous A (rows s[i], mm of them real), optionally
 * normalized: eight columns at a time through a transpose, the tail in scalar. */
static void pack_a6_rows(float *d, const float *const s[6], int mm, int64_t kc,
                         const float mu[6], const float rs[6], const float *gamma,
                         const float *beta, int xf) {
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        const __m256 g = gamma ? _mm256_loadu_ps(gamma + p) : _mm256_setzero_ps();
        const __m256 b = beta ? _mm256_loadu_ps(beta + p) : _mm256_setzero_ps();
        __m256 r[8];
        rows8(r, s, 0, 6, mm, p, mu, rs, g, b, gamma, beta, xf);
        transpose8(r);
        float *o = d + p * 6;
        /* Full 8-wide stores overlap the next column's first lanes, which that
         * column's store then rewrites; the last column stores exactly 6. The 2-float
         * moves use the epi64 forms, which GCC declares unaligned (UBSan-clean). */
        for (int j = 0; j < 7; j++) _mm256_storeu_ps(o + j * 6, r[j]);
        _mm_storeu_ps(o + 42, _mm256_castps256_ps128(r[7]));
        _mm_storel_epi64((__m128i *)(o + 46), _mm_castps_si128(_mm256_extractf128_ps(r[7], 1)));
    }
    pack_a_tail(d, 6, s, mm, p, kc, mu, rs, gamma, beta, xf);
}

/* One 12-row sliver (the AVX-512 kernel's), as pack_a6_rows: rows 0-7 and rows 8-11
 * (with four zero rows) each through an 8 x 8 transpose, so that column p's twelve
 * values leave as one 8-wide and one 4-wide store. */
static void pack_a12_rows(float *d, const float *const s[12], int mm, int64_t kc,
                          const float mu[12], const float rs[12], const float *gamma,
                          const float *beta, int xf) {
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        const __m256 g = gamma ? _mm256_loadu_ps(gamma + p) : _mm256_setzero_ps();
        const __m256 b = beta ? _mm256_loadu_ps(beta + p) : _mm256_setzero_ps();
        __m256 lo[8], hi[8];
        rows8(lo, s, 0, 8, mm, p, mu, rs, g, b, gamma, beta, xf);
        rows8(hi, s, 8, 4, mm, p, mu, rs, g, b, gamma, beta, xf);
        transpose8(lo);
        transpose8(hi);
        float *o = d + p * 12;
        for (int j = 0; j < 8; j++) {
            _mm256_storeu_ps(o + j * 12, lo[j]);
            _mm_storeu_ps(o + j * 12 + 8, _mm256_castps256_ps128(hi[j]));
        }
    }
    pack_a_tail(d, 12, s, mm, p, kc, mu, rs, gamma, beta, xf);
}

void lnl_pack_a_f32_avx2(float *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                         int64_t kc, int mr) {
    const lnl_xform_f32 *x = g->xa;
    if ((mr != 6 && mr != 12) || (g->csa != 1 && g->rsa != 1)) {
        lnl_pack_a_f32(dst, g, i0, mc, p0, kc, mr);
        return;
    }
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int mm = (int)(mc - ir < mr ? mc - ir : mr);
        float *d = dst + ir * kc;
        if (g->csa == 1) {
            const float *s[12];
            float mu[12] = {0}, rs[12] = {0};
            for (int i = 0; i < mm; i++) {
                int64_t row = i0 + ir + i;
                s[i] = g->a + row * g->rsa + p0;
                if (x) mu[i] = x->mean[row], rs[i] = x->rstd[row];
            }
            const float *gm = x && x->gamma ? x->gamma + p0 : NULL;
            const float *bt = x && x->beta ? x->beta + p0 : NULL;
            if (mr == 6) pack_a6_rows(d, s, mm, kc, mu, rs, gm, bt, x != NULL);
            else pack_a12_rows(d, s, mm, kc, mu, rs, gm, bt, x != NULL);
        } else if (!x && mm == 6 && mr == 6) {
            /* Column-contiguous A (dW = dy^T @ ...): six adjacent values per k. */
            const float *s = g->a + (i0 + ir) + p0 * g->csa;
            for (int64_t p = 0; p < kc; p++, s += g->csa) {
                _mm_storeu_ps(d + p * 6, _mm_loadu_ps(s));
                _mm_storel_epi64((__m128i *)(d + p * 6 + 4), _mm_loadl_epi64((const __m128i *)(s + 4)));
            }
        } else if (!x && mm == 12) {
            /* The same, twelve adjacent values per k. */
            const float *s = g->a + (i0 + ir) + p0 * g->csa;
            for (int64_t p = 0; p < kc; p++, s += g->csa) {
                _mm256_storeu_ps(d + p * 12, _mm256_loadu_ps(s));
                _mm_storeu_ps(d + p * 12 + 8, _mm_loadu_ps(s + 8));
            }
        } else {
            lnl_pack_a_f32(d, g, i0 + ir, mm, p0, kc, mr);
        }
    }
}

/* Row-contiguous B (W in dxhat = dy @ W, LN(x) in dW), its `full` columns (whole slivers)
 * from j0: walk each source row across all slivers, so reads are sequential (rows are K
 * apart: one per page for K = 4096, which defeated the prefetcher sliver by sliver) and
 * every store is one full cache line of a sliver. Normalized per row p when asked. The rows
 * are g->b's, or with src16 g->b_half's widened where loaded (exact: the same floats). */
static void pack_b_rows(float *dst, const lnl_gemm_f32 *g, const uint16_t *src16, int64_t p0,
                        int64_t kc, int64_t j0, int64_t full, int nr) {
    const lnl_xform_f32 *x = g->xb;
    const int bf16 = g->half == LNL_DTYPE_BF16;
    for (int64_t p = 0; p < kc; p++) {
        const float *s = src16 ? NULL : g->b + (p0 + p) * g->rsb + j0;
        const uint16_t *s16 = src16 ? src16 + (p0 + p) * g->rsb + j0 : NULL;
        float *d = dst + p * nr;
        __m256 mu = _mm256_setzero_ps(), rs = mu;
        if (x) mu = _mm256_set1_ps(x->mean[p0 + p]), rs = _mm256_set1_ps(x->rstd[p0 + p]);
        for (int64_t jr = 0; jr < full; jr += nr)
            for (int h = 0; h < nr; h += 8) {
                __m256 v = !s16  ? _mm256_loadu_ps(s + jr + h)
                           : bf16 ? lnl_bf16x8_to_f32(s16 + jr + h)
                                  : lnl_f16x8_to_f32(s16 + jr + h);
                if (x) {
                    v = _mm256_mul_ps(_mm256_sub_ps(v, mu), rs);
                    if (x->gamma) v = _mm256_mul_ps(v, _mm256_loadu_ps(x->gamma + j0 + jr + h));
                    if (x->beta) v = _mm256_add_ps(v, _mm256_loadu_ps(x->beta + j0 + jr + h));
                }
                _mm256_storeu_ps(d + jr * kc + h, v);
            }
    }
}

void lnl_pack_b_half_avx2(float *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, int nr) {
    const int64_t full = nc / nr * nr;
    if (g->csb != 1 || (nr != 16 && nr != 32)) {
        lnl_pack_b_half(dst, g, p0, kc, j0, nc, nr);
        return;
    }
    pack_b_rows(dst, g, g->b_half, p0, kc, j0, full, nr);
    if (full < nc) lnl_pack_b_half(dst + full * kc, g, p0, kc, j0 + full, nc - full, nr);
}

void lnl_pack_b_f32_avx2(float *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                         int64_t nc, int nr) {
    const lnl_xform_f32 *x = g->xb;
    if ((nr != 16 && nr != 32) || (g->csb != 1 && (g->rsb != 1 || x))) {
        lnl_pack_b_f32(dst, g, p0, kc, j0, nc, nr);
        return;
    }
    const int64_t full = nc / nr * nr;
    if (g->csb == 1) {
        pack_b_rows(dst, g, NULL, p0, kc, j0, full, nr);
        if (full < nc) lnl_pack_b_f32(dst + full * kc, g, p0, kc, j0 + full, nc - full, nr);
        return;
    }
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int64_t j = j0 + jr;
        float *d = dst + jr * kc;
        if (nc - jr < nr) {
            lnl_pack_b_f32(d, g, p0, kc, j, nc - jr, nr);
            continue;
        }
        /* Column-contiguous B (the forward's W^T): nr source rows of contiguous k,
         * transposed eight by eight. */
        const float *s = g->b + p0 + j * g->csb;
        int64_t p = 0;
        for (; p + 8 <= kc; p += 8) {
            for (int h = 0; h < nr / 8; h++) {
                __m256 r[8];
                for (int q = 0; q < 8; q++) r[q] = _mm256_loadu_ps(s + (h * 8 + q) * g->csb + p);
                transpose8(r);
                for (int t = 0; t < 8; t++) _mm256_storeu_ps(d + (p + t) * nr + h * 8, r[t]);
            }
        }
        for (; p < kc; p++)
            for (int q = 0; q < nr; q++) d[p * nr + q] = s[q * g->csb + p];
    }
}
