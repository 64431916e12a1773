/* AVX2 LayerNorm backward for one row: dx, and this row's share of the dgamma / dbeta
 * column sums, in one visit of the row; x and dx in float, or in bf16 or f16 (read widened
 * and written rounded where the row pass touches them: a 16-bit row needs no float copy
 * of x and no float dx row rounded in a pass of its own). The portable code reads x and dxhat
 * once for dx (lnl_ln_dx_f32) and again, column-split, for the sums
 * (lnl_ln_colsums_f32); both passes are memory-bound (x comes from DRAM for large
 * problems), so vectorizing them alone gained nothing, while one visit saves a pass.
 * dx is bitwise equal to lnl_ln_dx_f32 (same 16 lanes, 256-element chunks, scalar
 * tails, no FMA); the column sums go into the caller's per-group partials (see
 * bwd_rows_ in backward_tmpl.h), so their order is fixed but not the portable one. */
#include <immintrin.h>

#include "cpu.h"
#include "half_avx2.h"

#define LANES 16
#define CHUNK 256

static float lanes_total(float tot[LANES]) {
    for (int w = LANES / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) tot[l] += tot[l + w];
    return tot[0];
}


#define XT float
#define LB_FN(name) name##f32_avx2
#define LB_API
#define LOADX8(p) _mm256_loadu_ps(p)
#define XS(v) (v)
#define STOREDX8(p, v) _mm256_storeu_ps(p, v)
#define DXS(v) (v)
#include "ln_bwd_avx2_tmpl.h"
#undef XT
#undef LB_FN
#undef LB_API
#undef LOADX8
#undef XS
#undef STOREDX8
#undef DXS

#define XT uint16_t
#define LB_API static
#define LOADX8(p) lnl_bf16x8_to_f32(p)
#define XS(v) lnl_bf16_to_f32(v)
#define STOREDX8(p, v) _mm_storeu_si128((__m128i *)(p), lnl_f32_to_bf16x8(v))
#define DXS(v) lnl_f32_to_bf16(v)
#define LB_FN(name) name##bf16_avx2
#include "ln_bwd_avx2_tmpl.h"
#undef LB_FN
#undef LOADX8
#undef XS
#undef STOREDX8
#undef DXS

#define LOADX8(p) lnl_f16x8_to_f32(p)
#define XS(v) lnl_f16_to_f32(v)
#define STOREDX8(p, v) _mm_storeu_si128((__m128i *)(p), lnl_f32_to_f16x8(v))
#define DXS(v) lnl_f32_to_f16(v)
#define LB_FN(name) name##f16_avx2
#include "ln_bwd_avx2_tmpl.h"
#undef LB_FN
#undef LOADX8
#undef XS
#undef STOREDX8
#undef DXS
#undef XT
#undef LB_API

void lnl_ln_dx_colsums_half_avx2(uint16_t *dx, float *pg, float *pb, const float *dxhat,
                                 const uint16_t *x, int64_t k, float mean, float rstd,
                                 const float *gamma, int first, lnl_dtype kind) {
    if (kind == LNL_DTYPE_BF16)
        lnl_ln_dx_colsums_bf16_avx2(dx, pg, pb, dxhat, x, k, mean, rstd, gamma, first);
    else
        lnl_ln_dx_colsums_f16_avx2(dx, pg, pb, dxhat, x, k, mean, rstd, gamma, first);
}
