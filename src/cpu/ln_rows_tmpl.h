/* Instantiated once per dtype by ln_rows.c (T, SUF, SQRT defined). */
#define LR_CAT_(a, b) a##b
#define LR_CAT(a, b) LR_CAT_(a, b)
#define FN(name) LR_CAT(name, SUF)

/* A sum in LANES independent accumulators, merged per CHUNK and pairwise at the end:
 * vectorizable, and accurate enough for rows offset by 1e3 in float. */
static void FN(lanes_add_)(T tot[LANES], const T *v, int64_t n) {
    T acc[LANES] = {0};
    int64_t q = 0;
    for (; q + LANES <= n; q += LANES)
        for (int l = 0; l < LANES; l++) acc[l] += v[q + l];
    for (int l = 0; q < n; q++, l++) acc[l] += v[q];
    for (int l = 0; l < LANES; l++) tot[l] += acc[l];
}

static T FN(lanes_total_)(T tot[LANES]) {
    for (int w = LANES / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) tot[l] += tot[l + w];
    return tot[0];
}

/* Short rows (tiny problems must cost ~1 us) sum in plain order. */
static void FN(stats_short_)(const T *x, int64_t k, T eps, T *mean, T *rstd) {
    T s = 0, v = 0;
    for (int64_t q = 0; q < k; q++) s += x[q];
    T mu = s / (T)k;
    for (int64_t q = 0; q < k; q++) v += (x[q] - mu) * (x[q] - mu);
    *mean = mu;
    *rstd = (T)1 / SQRT(v / (T)k + eps);
}

void FN(lnl_ln_stats_)(const T *x, int64_t k, T eps, T *mean, T *rstd) {
    if (k <= LANES) {
        FN(stats_short_)(x, k, eps, mean, rstd);
        return;
    }
    T tot[LANES] = {0}, tmp[CHUNK];
    for (int64_t c = 0; c < k; c += CHUNK) FN(lanes_add_)(tot, x + c, k - c < CHUNK ? k - c : CHUNK);
    T mu = FN(lanes_total_)(tot) / (T)k;
    for (int l = 0; l < LANES; l++) tot[l] = 0;
    for (int64_t c = 0; c < k; c += CHUNK) {
        int64_t n = k - c < CHUNK ? k - c : CHUNK;
        for (int64_t q = 0; q < n; q++) {
            T d = x[c + q] - mu;
            tmp[q] = d * d;
        }
        FN(lanes_add_)(tot, tmp, n);
    }
    T var = FN(lanes_total_)(tot) / (T)k;
    *mean = mu;
    *rstd = (T)1 / SQRT(var + eps);
}

void FN(lnl_ln_apply_)(T *out, const T *x, int64_t k, T mean, T rstd, const T *gamma,
                       const T *beta) {
    for (int64_t q = 0; q < k; q++) out[q] = (x[q] - mean) * rstd;
    if (gamma)
        for (int64_t q = 0; q < k; q++) out[q] = out[q] * gamma[q];
    if (beta)
        for (int64_t q = 0; q < k; q++) out[q] = out[q] + beta[q];
}

void FN(lnl_ln_dx_)(T *dx, const T *dxhat, const T *x, int64_t k, T mean, T rstd,
                    const T *gamma) {
    T tg[LANES] = {0}, tgx[LANES] = {0}, g[CHUNK], gx[CHUNK];
    for (int64_t c = 0; c < k; c += CHUNK) {
        int64_t n = k - c < CHUNK ? k - c : CHUNK;
        for (int64_t q = 0; q < n; q++) g[q] = gamma ? dxhat[c + q] * gamma[c + q] : dxhat[c + q];
        for (int64_t q = 0; q < n; q++) gx[q] = g[q] * ((x[c + q] - mean) * rstd);
        FN(lanes_add_)(tg, g, n);
        FN(lanes_add_)(tgx, gx, n);
    }
    T mg = FN(lanes_total_)(tg) / (T)k;
    T mgx = FN(lanes_total_)(tgx) / (T)k;
    for (int64_t q = 0; q < k; q++) {
        T gq = gamma ? dxhat[q] * gamma[q] : dxhat[q];
        T xh = (x[q] - mean) * rstd;
        dx[q] = rstd * (gq - mg - xh * mgx);
    }
}

void FN(lnl_ln_colsums_)(T *pg, T *pb, const T *dxhat, int64_t ldd, const T *x, int64_t k,
                         int64_t nrows, const T *mean, const T *rstd, int64_t k0, int64_t k1) {
    for (int64_t q = k0; q < k1; q++) {
        if (pg) pg[q] = 0;
        if (pb) pb[q] = 0;
    }
    for (int64_t r = 0; r < nrows; r++) {
        const T *d = dxhat + r * ldd, *xr = x + r * k;
        T mu = mean[r], rs = rstd[r];
        if (pg)
            for (int64_t q = k0; q < k1; q++) pg[q] += d[q] * ((xr[q] - mu) * rs);
        if (pb)
            for (int64_t q = k0; q < k1; q++) pb[q] += d[q];
    }
}

void FN(lnl_colsum_)(T *out, const T *a, int64_t rows, int64_t ld, int64_t n0, int64_t n1,
                     int64_t rb) {
    T tot[CHUNK], blk[CHUNK];
    for (int64_t c = n0; c < n1; c += CHUNK) {
        int64_t n = n1 - c < CHUNK ? n1 - c : CHUNK;
        for (int64_t q = 0; q < n; q++) tot[q] = 0;
        for (int64_t r0 = 0; r0 < rows; r0 += rb) {
            int64_t r1 = rows - r0 < rb ? rows : r0 + rb;
            for (int64_t q = 0; q < n; q++) blk[q] = 0;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t q = 0; q < n; q++) blk[q] += a[r * ld + c + q];
            for (int64_t q = 0; q < n; q++) tot[q] += blk[q];
        }
        for (int64_t q = 0; q < n; q++) out[c + q] = tot[q];
    }
}

#undef FN
#undef LR_CAT
#undef LR_CAT_
