/* Portable packing of bf16 panels (layout in gemm.h): the definition the AVX-512
 * packer (gemm_pack_avx512bf16.c) must match bit for bit, and its fallback for the
 * slivers it does not take. A value is widened (a float operand's is read as it is),
 * normalized in float in the float packer's operation order ((v - mean) * rstd,
 * * gamma, + beta), and rounded to bf16 once; un-normalized bf16 values pass through
 * unchanged, un-normalized float ones are rounded. An operand is float where its 16-bit
 * pointer (a_half / b_half) is NULL: x under ln_float32 (lnlinear.h). */
#include "gemm.h"
#include "half.h"

/* Slivers of L lines (cnt of them real, the rest zero) and kc depth values: value (l, p)
 * is src[l * ls + p * ps] (or srcf's, a float operand), normalized (when x) with row =
 * line0 + l and column = depth0 + p for A's slivers (lines are x's rows), or the other
 * way round for B's (lines_are_rows 0: depth runs along x's rows). Panel order
 * [p/2][L][2]. */
static void pack_sliver(uint16_t *d, int64_t L, int64_t cnt, int64_t kc, const uint16_t *src,
                        const float *srcf, int64_t ls, int64_t ps, const lnl_xform_f32 *x,
                        int lines_are_rows, int64_t line0, int64_t depth0) {
    const int64_t kp = (kc + 1) & ~(int64_t)1;
    for (int64_t p = 0; p < kp; p++)
        for (int64_t l = 0; l < L; l++) {
            uint16_t h = 0;
            if (l < cnt && p < kc) {
                const int64_t at = l * ls + p * ps;
                if (x) {
                    const int64_t row = lines_are_rows ? line0 + l : depth0 + p;
                    const int64_t col = lines_are_rows ? depth0 + p : line0 + l;
                    float v = ((srcf ? srcf[at] : lnl_bf16_to_f32(src[at])) - x->mean[row]) *
                              x->rstd[row];
                    if (x->gamma) v = v * x->gamma[col];
                    if (x->beta) v = v + x->beta[col];
                    h = lnl_f32_to_bf16(v);
                } else {
                    h = srcf ? lnl_f32_to_bf16(srcf[at]) : src[at];
                }
            }
            d[(p >> 1) * 2 * L + 2 * l + (p & 1)] = h;
        }
}

void lnl_pack_a_bf16(uint16_t *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                     int64_t kc, int mr) {
    const int64_t kp = (kc + 1) & ~(int64_t)1, off = p0 * g->csa;
    for (int64_t ir = 0; ir < mc; ir += mr) {
        const int64_t at = (i0 + ir) * g->rsa + off;
        pack_sliver(dst + ir * kp, mr, mc - ir < mr ? mc - ir : mr, kc,
                    g->a_half ? g->a_half + at : NULL, g->a_half ? NULL : g->a + at, g->rsa,
                    g->csa, g->xa, 1, i0 + ir, p0);
    }
}

void lnl_pack_b_bf16(uint16_t *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                     int64_t nc, int nr) {
    const int64_t kp = (kc + 1) & ~(int64_t)1;
    for (int64_t jr = 0; jr < nc; jr += nr) {
        const int64_t at = p0 * g->rsb + (j0 + jr) * g->csb;
        pack_sliver(dst + jr * kp, nr, nc - jr < nr ? nc - jr : nr, kc,
                    g->b_half ? g->b_half + at : NULL, g->b_half ? NULL : g->b + at, g->csb,
                    g->rsb, g->xb, 0, j0 + jr, p0);
    }
}
