/* The body of ln_bwd_avx2.c's row pass for one storage type of x and dx, included once
 * per type with XT (float or uint16_t), LB_FN(name) (name with the type's suffix), LB_API,
 * LOADX8 (eight values widened to floats), XS (one value widened), STOREDX8 (eight floats
 * stored rounded once) and DXS (one float rounded). */

/* Row means of g = dxhat * gamma and of g * xhat, summed as lnl_ln_dx_f32 does. */
static void LB_FN(dx_means_)(const float *dxhat, const XT *x, int64_t k, float mean, float rstd,
                     const float *gamma, float *mg, float *mgx) {
    const __m256 mu = _mm256_set1_ps(mean), rs = _mm256_set1_ps(rstd);
    float tg[LANES] = {0}, tgx[LANES] = {0};
    for (int64_t c = 0; c < k; c += CHUNK) {
        int64_t n = k - c < CHUNK ? k - c : CHUNK, q = 0;
        const float *d = dxhat + c, *gm = gamma ? gamma + c : NULL;
        const XT *xr = x + c;
        __m256 g0 = _mm256_setzero_ps(), g1 = g0, h0 = g0, h1 = g0;
        for (; q + LANES <= n; q += LANES) {
            __m256 a0 = _mm256_loadu_ps(d + q), a1 = _mm256_loadu_ps(d + q + 8);
            if (gm) {
                a0 = _mm256_mul_ps(a0, _mm256_loadu_ps(gm + q));
                a1 = _mm256_mul_ps(a1, _mm256_loadu_ps(gm + q + 8));
            }
            __m256 x0 = _mm256_mul_ps(_mm256_sub_ps(LOADX8(xr + q), mu), rs);
            __m256 x1 = _mm256_mul_ps(_mm256_sub_ps(LOADX8(xr + q + 8), mu), rs);
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
            agx[l] += g * ((XS(xr[q]) - mean) * rstd);
        }
        for (int l = 0; l < LANES; l++) {
            tg[l] += ag[l];
            tgx[l] += agx[l];
        }
    }
    *mg = lanes_total(tg) / (float)k;
    *mgx = lanes_total(tgx) / (float)k;
}

LB_API void LB_FN(lnl_ln_dx_colsums_)(XT *dx, float *pg, float *pb, const float *dxhat,
                                      const XT *x, int64_t k, float mean, float rstd,
                                      const float *gamma, int first) {
    float mg = 0, mgx = 0;
    if (dx) LB_FN(dx_means_)(dxhat, x, k, mean, rstd, gamma, &mg, &mgx);
    const __m256 mu = _mm256_set1_ps(mean), rs = _mm256_set1_ps(rstd);
    const __m256 vmg = _mm256_set1_ps(mg), vmgx = _mm256_set1_ps(mgx);
    int64_t q = 0;
    /* The three optional outputs are tested per vector: the tests are loop-invariant
     * and the loop waits on memory anyway. */
    for (; q + 8 <= k; q += 8) {
        __m256 d = _mm256_loadu_ps(dxhat + q);
        __m256 xh = _mm256_mul_ps(_mm256_sub_ps(LOADX8(x + q), mu), rs);
        if (dx) {
            __m256 g = gamma ? _mm256_mul_ps(d, _mm256_loadu_ps(gamma + q)) : d;
            __m256 t = _mm256_sub_ps(_mm256_sub_ps(g, vmg), _mm256_mul_ps(xh, vmgx));
            STOREDX8(dx + q, _mm256_mul_ps(rs, t));
        }
        if (pg) {
            __m256 v = _mm256_mul_ps(d, xh);
            _mm256_storeu_ps(pg + q, first ? v : _mm256_add_ps(_mm256_loadu_ps(pg + q), v));
        }
        if (pb) _mm256_storeu_ps(pb + q, first ? d : _mm256_add_ps(_mm256_loadu_ps(pb + q), d));
    }
    for (; q < k; q++) {
        float d = dxhat[q], xh = (XS(x[q]) - mean) * rstd;
        if (dx) {
            float g = gamma ? d * gamma[q] : d;
            dx[q] = DXS(rstd * (g - mg - xh * mgx));
        }
        if (pg) pg[q] = first ? d * xh : pg[q] + d * xh;
        if (pb) pb[q] = first ? d : pb[q] + d;
    }
}
