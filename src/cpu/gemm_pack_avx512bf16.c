/* AVX-512 packing of bf16 panels (layout in gemm.h) for the 12 x 32 BF16 kernel,
 * bitwise equal to the portable gemm_pack_bf16.c (tests/c/test_pack.c). Two forms:
 *  - lines with contiguous depth (A's rows, B = W^T's columns): 16 depth values of 8
 *    lines at a time, normalized in float when asked and rounded to bf16, are 8 pairs
 *    (32-bit lanes) per line, which one 8 x 8 transpose turns into the panel's order;
 *  - depth rows contiguous along the panel (B's rows, A = dy^T's columns): rows p and
 *    p + 1 are interleaved value by value with one two-source permute.
 * Either form reads a 16-bit operand or a float one (x under ln_float32, whose 16-bit
 * pointer is NULL). Other slivers go to the portable code. */
#include <immintrin.h>

#include "gemm.h"
#include "round_bf16_avx512.h"
#include "transpose8_avx2.h"

/* 16 values of a line or row: float ones as they are (f), else bf16 ones widened (h). */
static inline __m512 load16(const uint16_t *h, const float *f, __mmask16 m) {
    if (f) return _mm512_maskz_loadu_ps(m, f);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, h)), 16));
}

/* 16 values normalized when xf ((v - mu) * rs, * g, + b: the portable order) and rounded
 * to bf16; lanes outside m are zero. A 16-bit operand's un-normalized values are not
 * widened and rounded again but copied. */
static inline __m256i bf16x16(const uint16_t *h, const float *f, __m512 mu, __m512 rs, __m512 g,
                              __m512 b, int has_g, int has_b, int xf, __mmask16 m) {
    if (!xf && !f) return _mm256_maskz_loadu_epi16(m, h);
    __m512 v = load16(h, f, m);
    if (xf) {
        v = _mm512_mul_ps(_mm512_sub_ps(v, mu), rs);
        if (has_g) v = _mm512_mul_ps(v, g);
        if (has_b) v = _mm512_add_ps(v, b);
    }
    return _mm256_maskz_mov_epi16(m, round_bf16x16(v));
}

/* Lines with contiguous depth: line l (< cnt <= L) holds its kc depth values at src[l]
 * (or srcf[l], a float operand); with xf, line l is normalized by mean[l], rstd[l] and
 * depth p by gamma[p], beta[p]. */
static void pack_lines(uint16_t *dst, int L, const uint16_t *const *src, const float *const *srcf,
                       int cnt, int64_t kc, const float *mean, const float *rstd,
                       const float *gamma, const float *beta, int xf) {
    for (int64_t p = 0; p < kc; p += 16) {
        const int rem = kc - p < 16 ? (int)(kc - p) : 16, units = (rem + 1) / 2;
        const __mmask16 m = (__mmask16)(rem == 16 ? 0xFFFFu : (1u << rem) - 1u);
        __m512 g = _mm512_setzero_ps(), b = _mm512_setzero_ps();
        if (xf && gamma) g = _mm512_maskz_loadu_ps(m, gamma + p);
        if (xf && beta) b = _mm512_maskz_loadu_ps(m, beta + p);
        for (int l0 = 0; l0 < L; l0 += 8) {
            __m256 r[8];
            for (int l = 0; l < 8; l++) {
                const int line = l0 + l;
                __m256i h = _mm256_setzero_si256();
                if (line < cnt)
                    h = bf16x16(srcf ? NULL : src[line] + p, srcf ? srcf[line] + p : NULL,
                                _mm512_set1_ps(xf ? mean[line] : 0.0f),
                                _mm512_set1_ps(xf ? rstd[line] : 0.0f), g, b, gamma != NULL,
                                beta != NULL, xf, m);
                r[l] = _mm256_castsi256_ps(h);
            }
            transpose8(r); /* r[u]: pair u of lines l0..l0+7 */
            uint16_t *o = dst + (p / 2) * 2 * L + 2 * l0;
            for (int u = 0; u < units; u++) {
                if (L - l0 >= 8) _mm256_storeu_ps((float *)(void *)(o + u * 2 * L), r[u]);
                else _mm_storeu_si128((__m128i *)(o + u * 2 * L), _mm256_castsi256_si128(_mm256_castps_si256(r[u])));
            }
        }
    }
}

/* out[2k] = first[k], out[2k+1] = second[k]: value k of rows p and p + 1 side by side */
static void pair_indices(__m512i *lo_idx, __m512i *hi_idx) {
    uint16_t lo[32], hi[32];
    for (int k = 0; k < 16; k++) {
        lo[2 * k] = (uint16_t)k, lo[2 * k + 1] = (uint16_t)(32 + k);
        hi[2 * k] = (uint16_t)(16 + k), hi[2 * k + 1] = (uint16_t)(48 + k);
    }
    *lo_idx = _mm512_loadu_si512(lo);
    *hi_idx = _mm512_loadu_si512(hi);
}

/* Depth rows contiguous along the panel, `slivers` slivers of width L (12 or 32) side by
 * side (sliver s at dst + s * L * kp, its source columns from L s on), each holding cnt
 * (<= L) values a row: cnt < L only for a lone last sliver. Row p (< kc) is at src + p * ld
 * (or srcf + p * ld, a float operand); with xf it is normalized by mean[p], rstd[p] and
 * value j by gamma[j], beta[j]. Each pair of depth rows is walked across every sliver
 * before the next pair: sliver by sliver the reads went down 24 or 64 bytes of each row,
 * rows one or more pages apart (K = 4096 bf16: 8 KiB), which defeats the hardware
 * prefetcher; along the rows they stream. */
static void pack_rows(uint16_t *dst, int64_t kp, int L, int cnt, int64_t slivers,
                      const uint16_t *src, const float *srcf, int64_t ld, int64_t kc,
                      const float *mean, const float *rstd, const float *gamma, const float *beta,
                      int xf) {
    __m512i lo_idx, hi_idx;
    pair_indices(&lo_idx, &hi_idx);
    const __mmask32 m = cnt >= 32 ? 0xFFFFFFFFu : (1u << cnt) - 1u;
    const __mmask16 m0 = (__mmask16)m, m1 = (__mmask16)(m >> 16);
    const __mmask32 store_lo = 2 * L >= 32 ? 0xFFFFFFFFu : (1u << (2 * L)) - 1u;
    const __mmask32 store_hi = 2 * L >= 64 ? 0xFFFFFFFFu : 2 * L <= 32 ? 0u : (1u << (2 * L - 32)) - 1u;
    __m512 g0 = _mm512_setzero_ps(), g1 = g0, b0 = g0, b1 = g0;
    for (int64_t p = 0; p < kc; p += 2) {
        const int two = p + 1 < kc;
        __m512 mu[2], rs[2];
        for (int t = 0; t < 2; t++) {
            mu[t] = _mm512_set1_ps(xf && t <= two ? mean[p + t] : 0.0f);
            rs[t] = _mm512_set1_ps(xf && t <= two ? rstd[p + t] : 0.0f);
        }
        for (int64_t sl = 0; sl < slivers; sl++) {
            const int64_t j = L * sl;
            if (xf && gamma) g0 = _mm512_maskz_loadu_ps(m0, gamma + j), g1 = _mm512_maskz_loadu_ps(m1, gamma + j + 16);
            if (xf && beta) b0 = _mm512_maskz_loadu_ps(m0, beta + j), b1 = _mm512_maskz_loadu_ps(m1, beta + j + 16);
            __m512i row[2];
            for (int t = 0; t < 2; t++) {
                row[t] = _mm512_setzero_si512();
                if (t > two) continue;
                const uint16_t *h = srcf ? NULL : src + (p + t) * ld + j;
                const float *f = srcf ? srcf + (p + t) * ld + j : NULL;
                if (!xf && !srcf) {
                    row[t] = _mm512_maskz_loadu_epi16(m, h);
                    continue;
                }
                __m256i a = bf16x16(h, f, mu[t], rs[t], g0, b0, gamma != NULL, beta != NULL, xf, m0);
                __m256i c = bf16x16(h ? h + 16 : NULL, f ? f + 16 : NULL, mu[t], rs[t], g1, b1,
                                    gamma != NULL, beta != NULL, xf, m1);
                row[t] = _mm512_inserti64x4(_mm512_castsi256_si512(a), c, 1);
            }
            uint16_t *o = dst + sl * L * kp + p * L;
            _mm512_mask_storeu_epi16(o, store_lo, _mm512_permutex2var_epi16(row[0], lo_idx, row[1]));
            if (store_hi)
                _mm512_mask_storeu_epi16(o + 32, store_hi, _mm512_permutex2var_epi16(row[0], hi_idx, row[1]));
        }
    }
}

/* pack_rows over a whole panel of n values a row: its full slivers, then the part of one. */
static void pack_rows_panel(uint16_t *dst, int64_t kp, int L, int64_t n, const uint16_t *src,
                            const float *srcf, int64_t ld, int64_t kc, const float *mean,
                            const float *rstd, const float *gamma, const float *beta, int xf) {
    const int64_t full = n / L, done = full * L;
    pack_rows(dst, kp, L, L, full, src, srcf, ld, kc, mean, rstd, gamma, beta, xf);
    if (done < n)
        pack_rows(dst + done * kp, kp, L, (int)(n - done), 1, src ? src + done : NULL,
                  srcf ? srcf + done : NULL, ld, kc, mean, rstd, gamma ? gamma + done : NULL,
                  beta ? beta + done : NULL, xf);
}

void lnl_pack_a_bf16_avx512(uint16_t *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc,
                            int64_t p0, int64_t kc, int mr) {
    const lnl_xform_f32 *x = g->xa;
    const int64_t kp = (kc + 1) & ~(int64_t)1;
    if (mr != 12 || !(g->csa == 1 || (g->rsa == 1 && !x))) {
        lnl_pack_a_bf16(dst, g, i0, mc, p0, kc, mr);
        return;
    }
    if (g->csa != 1) { /* dy^T's form: rows of dy */
        const int64_t at = i0 + p0 * g->csa;
        pack_rows_panel(dst, kp, mr, mc, g->a_half ? g->a_half + at : NULL,
                        g->a_half ? NULL : g->a + at, g->csa, kc, NULL, NULL, NULL, NULL, 0);
        return;
    }
    for (int64_t ir = 0; ir < mc; ir += mr) {
        const int mm = (int)(mc - ir < mr ? mc - ir : mr);
        uint16_t *d = dst + ir * kp;
        const uint16_t *s[12];
        const float *sf[12];
        float mu[12] = {0}, rs[12] = {0};
        for (int i = 0; i < mm; i++) {
            const int64_t row = i0 + ir + i;
            s[i] = g->a_half ? g->a_half + row * g->rsa + p0 : NULL;
            sf[i] = g->a_half ? NULL : g->a + row * g->rsa + p0;
            if (x) mu[i] = x->mean[row], rs[i] = x->rstd[row];
        }
        pack_lines(d, mr, s, g->a_half ? NULL : sf, mm, kc, mu, rs,
                   x && x->gamma ? x->gamma + p0 : NULL, x && x->beta ? x->beta + p0 : NULL,
                   x != NULL);
    }
}

void lnl_pack_b_bf16_avx512(uint16_t *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc,
                            int64_t j0, int64_t nc, int nr) {
    const lnl_xform_f32 *x = g->xb;
    const int64_t kp = (kc + 1) & ~(int64_t)1;
    if (nr != 32 || !(g->csb == 1 || (g->rsb == 1 && !x))) {
        lnl_pack_b_bf16(dst, g, p0, kc, j0, nc, nr);
        return;
    }
    if (g->csb == 1) { /* rows of x (dW) or of W (dy @ W) */
        const int64_t at = p0 * g->rsb + j0;
        pack_rows_panel(dst, kp, nr, nc, g->b_half ? g->b_half + at : NULL,
                        g->b_half ? NULL : g->b + at, g->rsb, kc, x ? x->mean + p0 : NULL,
                        x ? x->rstd + p0 : NULL, x && x->gamma ? x->gamma + j0 : NULL,
                        x && x->beta ? x->beta + j0 : NULL, x != NULL);
        return;
    }
    for (int64_t jr = 0; jr < nc; jr += nr) {
        const int nn = (int)(nc - jr < nr ? nc - jr : nr);
        const int64_t j = j0 + jr;
        uint16_t *d = dst + jr * kp;
        const uint16_t *s[32];
        const float *sf[32];
        for (int q = 0; q < nn; q++) {
            s[q] = g->b_half ? g->b_half + p0 + (j + q) * g->csb : NULL;
            sf[q] = g->b_half ? NULL : g->b + p0 + (j + q) * g->csb;
        }
        pack_lines(d, nr, s, g->b_half ? NULL : sf, nn, kc, NULL, NULL, NULL, NULL, 0);
    }
}
