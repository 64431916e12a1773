/* AVX2 LayerNorm backward for one f32 row: dx, and this row's share of the dgamma /
 * dbeta column sums, in one visit of the row. The portable code reads x and dxhat
 * once for dx (lnl_ln_dx_f32) and again, column-split, for the sums
 * (lnl_ln_colsums_f32); both passes are memory-bound (x comes from DRAM for large
 * problems), so vectorizing them alone gained nothing, while one visit saves a pass.
 * dx is bitwise equal to lnl_ln_dx_f32 (same 16 lanes, 256-element chunks, scalar
 * tails, no FMA); the column sums go into the caller's per-group partials (see
 * bwd_rows_ in backward_tmpl.h), so their order is fixed but not the portable one. */
#include <immintrin.h>

#include "cpu.h"

#define LANES 16
#define CHUNK 256

static float lanes_total(float tot[LANES]) {
    for (int w = LANES / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) tot[l] += tot[l + w];
    return tot[0];
}

/* Row means of g = dxhat * gamma and of g * xhat, summed as lnl_ln_dx_f32 does. */
static void dx_means(const float *dxhat, const float *x, int64_t k, float mean, float rstd,
                     const float *gamma, float *mg, float *mgx) {
    const __m256 mu = _mm256_set1_ps(mean), rs = _mm256_set1_ps(rstd);
    float tg[LANES] = {0}, tgx[LANES] = {0};
    for (int64_t c = 0; c < k; c += CHUNK) {
        int64_t n = k - c < CHUNK ? k - c : CHUNK, q = 0;
        const float *d = dxhat + c, *xr = x + c, *gm = gamma ? gamma + c : NULL;
        __m256 g0 = _mm256_setzero_ps(), g1 = g0, h0 = g0, h1 = g0;
        for (; q + LANES <= n; q += LANES) {
            __m256 a0 = _mm256_loadu_ps(d + q), a1 = _mm256_loadu_ps(d + q + 8);
            if (gm) {
                a0 = _mm256_mul_ps(a0, _mm256_loadu_ps(gm + q));
                a1 = _mm256_mul_ps(a1, _mm256_loadu_ps(gm + q + 8));
            }
            __m256 x0 = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + q), mu), rs);
            __m256 x1 = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + q + 8), mu), rs);
            g0 = _mm256_add_ps(g0, a0);
            g1 = _mm256_add_ps(g1, a1);
            h0 = _mm256_add_ps(h0, _mm256_mul_ps(a0, x0));
            h1 = _mm256_add_ps(h1, _mm256_mul_ps(a1, x1));
        }
        float ag[LANES], agx[LANES];
        _mm256_storeu_ps(ag, g0);
        _mm256_storeu_ps(ag + 8, g1);
        _mm256_storeu_ps(agx, h0);
        _mm256_storeu_ps(agx + 8, h1);
        for (int l = 0; q < n; q++, l++) {
            float g = gm ? d[q] * gm[q] : d[q];
            ag[l] += g;
            agx[l] += g * ((xr[q] - mean) * rstd);
        }
        for (int l = 0; l < LANES; l++) {
            tg[l] += ag[l];
            tgx[l] += agx[l];
        }
    }
    *mg = lanes_total(tg) / (float)k;
    *mgx = lanes_total(tgx) / (float)k;
}

void lnl_ln_dx_colsums_f32_avx2(float *dx, float *pg, float *pb, const float *dxhat,
                                const float *x, int64_t k, float mean, float rstd,
                                const float *gamma, int first) {
    float mg = 0, mgx = 0;
    if (dx) dx_means(dxhat, x, k, mean, rstd, gamma, &mg, &mgx);
    const __m256 mu = _mm256_set1_ps(mean), rs = _mm256_set1_ps(rstd);
    const __m256 vmg = _mm256_set1_ps(mg), vmgx = _mm256_set1_ps(mgx);
    int64_t q = 0;
    /* The three optional outputs are tested per vector: the tests are loop-invariant
     * and the loop waits on memory anyway. */
    for (; q + 8 <= k; q += 8) {
        __m256 d = _mm256_loadu_ps(dxhat + q);
        __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + q), mu), rs);
        if (dx) {
            __m256 g = gamma ? _mm256_mul_ps(d, _mm256_loadu_ps(gamma + q)) : d;
            __m256 t = _mm256_sub_ps(_mm256_sub_ps(g, vmg), _mm256_mul_ps(xh, vmgx));
            _mm256_storeu_ps(dx + q, _mm256_mul_ps(rs, t));
        }
        if (pg) {
            __m256 v = _mm256_mul_ps(d, xh);
            _mm256_storeu_ps(pg + q, first ? v : _mm256_add_ps(_mm256_loadu_ps(pg + q), v));
        }
        if (pb) _mm256_storeu_ps(pb + q, first ? d : _mm256_add_ps(_mm256_loadu_ps(pb + q), d));
    }
    for (; q < k; q++) {
        float d = dxhat[q], xh = (x[q] - mean) * rstd;
        if (dx) {
            float g = gamma ? d * gamma[q] : d;
            dx[q] = rstd * (g - mg - xh * mgx);
        }
        if (pg) pg[q] = first ? d * xh : pg[q] + d * xh;
        if (pb) pb[q] = first ? d : pb[q] + d;
    }
}
