/* Portable packing of bf16 panels (layout in gemm.h): the definition the AVX-512
 * packer (gemm_pack_avx512bf16.c) must match bit for bit, and its fallback for the
 * slivers it does not take. A value is widened, normalized in float in the float
 * packer's operation order ((v - mean) * rstd, * gamma, + beta), and rounded to bf16
 * once; un-normalized bf16 values pass through unchanged. */
#include "gemm.h"
#include "half.h"

static inline float ln_value(float v, const lnl_xform_f32 *x, int64_t row, int64_t col) {
    if (!x) return v;
    v = (v - x->mean[row]) * x->rstd[row];
    if (x->gamma) v = v * x->gamma[col];
    if (x->beta) v = v + x->beta[col];
    return v;
}

void lnl_pack_a_bf16(uint16_t *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                     int64_t kc, int mr) {
    const int64_t kp = (kc + 1) & ~(int64_t)1;
    for (int64_t ir = 0; ir < mc; ir += mr) {
        const int64_t mm = mc - ir < mr ? mc - ir : mr;
        uint16_t *d = dst + ir * kp;
        for (int64_t p = 0; p < kp; p++)
            for (int64_t i = 0; i < mr; i++) {
                uint16_t h = 0;
                if (i < mm && p < kc) {
                    const int64_t row = i0 + ir + i, col = p0 + p;
                    h = g->a_half[row * g->rsa + col * g->csa];
                    if (g->xa) h = lnl_f32_to_bf16(ln_value(lnl_bf16_to_f32(h), g->xa, row, col));
                }
                d[(p >> 1) * 2 * mr + 2 * i + (p & 1)] = h;
            }
    }
}

void lnl_pack_b_bf16(uint16_t *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                     int64_t nc, int nr) {
    const int64_t kp = (kc + 1) & ~(int64_t)1;
    for (int64_t jr = 0; jr < nc; jr += nr) {
        const int64_t nn = nc - jr < nr ? nc - jr : nr;
        uint16_t *d = dst + jr * kp;
        for (int64_t p = 0; p < kp; p++)
            for (int64_t q = 0; q < nr; q++) {
                uint16_t h = 0;
                if (q < nn && p < kc) {
                    const int64_t row = p0 + p, col = j0 + jr + q;
                    h = g->b_half[row * g->rsb + col * g->csb];
                    if (g->xb) h = lnl_f32_to_bf16(ln_value(lnl_bf16_to_f32(h), g->xb, row, col));
                }
                d[(p >> 1) * 2 * nr + 2 * q + (p & 1)] = h;
            }
    }
}
