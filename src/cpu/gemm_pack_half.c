/* Packing from 16-bit operands (gemm.h): a sliver is widened to float HALF_DEPTH
 * columns (A) or rows (B) at a time into a stack tile laid out like its source, and the
 * ISA's float packer packs that tile, normalizing on the way when asked. Widening is
 * exact, so the panels hold the bits a float operand with the same values would give;
 * the tile stays in L1 between the two steps. */
#include "gemm.h"
#include "half.h"

#define HALF_DEPTH 64
#define HALF_TILE (HALF_DEPTH * 64) /* >= HALF_DEPTH x (largest mr or nr) */

/* Widens the r x c block whose element (i, q) is src[i*rs + q*cs] into tmp, keeping
 * its contiguous dimension contiguous (every operand here has one: cs == 1, or rs == 1
 * for a transposed one); returns tmp's strides. */
static void widen(float *tmp, const uint16_t *src, int64_t rs, int64_t cs, int64_t r, int64_t c,
                  lnl_dtype kind, int64_t *trs, int64_t *tcs) {
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    if (cs == 1) {
        *trs = c;
        *tcs = 1;
        for (int64_t i = 0; i < r; i++) isa->half_to_f32(tmp + i * c, src + i * rs, c, kind);
        return;
    }
    *trs = 1;
    *tcs = r;
    for (int64_t q = 0; q < c; q++) isa->half_to_f32(tmp + q * r, src + q * cs, r, kind);
}

/* x with its per-row vectors starting at row0 and per-column ones at col0, in xf (NULL
 * where x is NULL): the transform as seen from a tile whose first element is (row0, col0). */
static const lnl_xform_f32 *shifted(lnl_xform_f32 *xf, const lnl_xform_f32 *x, int64_t row0,
                                    int64_t col0) {
    if (!x) return NULL;
    xf->mean = x->mean + row0;
    xf->rstd = x->rstd + row0;
    xf->gamma = x->gamma ? x->gamma + col0 : NULL;
    xf->beta = x->beta ? x->beta + col0 : NULL;
    return xf;
}

void lnl_pack_a_half(float *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                     int64_t kc, int mr) {
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    float tmp[HALF_TILE];
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int64_t mm = mc - ir < mr ? mc - ir : mr;
        for (int64_t p1 = 0; p1 < kc; p1 += HALF_DEPTH) {
            int64_t c = kc - p1 < HALF_DEPTH ? kc - p1 : HALF_DEPTH;
            lnl_gemm_f32 t = {0};
            lnl_xform_f32 xf;
            widen(tmp, g->a_half + (i0 + ir) * g->rsa + (p0 + p1) * g->csa, g->rsa, g->csa, mm, c,
                  g->half, &t.rsa, &t.csa);
            t.a = tmp;
            t.m = mm;
            t.k = c;
            t.xa = shifted(&xf, g->xa, i0 + ir, p0 + p1);
            /* one sliver, depth c: its columns p1.. of the kc-deep sliver at dst + ir*kc */
            isa->pack_a_f32(dst + ir * kc + p1 * mr, &t, 0, mm, 0, c, mr);
        }
    }
}

void lnl_pack_b_half(float *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                     int64_t nc, int nr) {
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    float tmp[HALF_TILE];
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int64_t nn = nc - jr < nr ? nc - jr : nr, j = j0 + jr;
        for (int64_t p1 = 0; p1 < kc; p1 += HALF_DEPTH) {
            int64_t c = kc - p1 < HALF_DEPTH ? kc - p1 : HALF_DEPTH;
            lnl_gemm_f32 t = {0};
            lnl_xform_f32 xf;
            widen(tmp, g->b_half + (p0 + p1) * g->rsb + j * g->csb, g->rsb, g->csb, c, nn, g->half,
                  &t.rsb, &t.csb);
            t.b = tmp;
            t.k = c;
            t.n = nn;
            t.xb = shifted(&xf, g->xb, p0 + p1, j); /* B's rows are x's rows */
            isa->pack_b_f32(dst + jr * kc + p1 * nr, &t, 0, c, 0, nn, nr);
        }
    }
}
