/* Direct kernels for tiny problems, instantiated by small.c (T, SUF defined): row by
 * row with K-long stack buffers, so a call allocates nothing and starts no thread. */
#define SM_CAT_(a, b) a##b
#define SM_CAT(a, b) SM_CAT_(a, b)
#define FN(name) SM_CAT(name, SUF)

/* Dot product in 8 fixed lanes: for long rows, more accurate than one running sum. */
static T FN(dot_)(const T *u, const T *v, int64_t k) {
    T acc[8] = {0};
    int64_t q = 0;
    for (; q + 8 <= k; q += 8)
        for (int l = 0; l < 8; l++) acc[l] += u[q + l] * v[q + l];
    for (int l = 0; q < k; q++, l++) acc[l] += u[q] * v[q];
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

/* y[n] = row . w[n] for n in [0, N). Short rows sum in plain k order, eight outputs at
 * a time so that the eight dependency chains overlap (the 1-microsecond case). */
static void FN(row_times_wt_)(T *y, const T *row, const T *w, int64_t k, int64_t nout,
                              const T *bias) {
    int64_t n = 0;
    if (k > 32) {
        for (; n < nout; n++) {
            T v = FN(dot_)(row, w + n * k, k);
            y[n] = bias ? v + bias[n] : v;
        }
        return;
    }
    for (; n + 8 <= nout; n += 8) {
        T acc[8] = {0};
        for (int64_t q = 0; q < k; q++)
            for (int l = 0; l < 8; l++) acc[l] += row[q] * w[(n + l) * k + q];
        for (int l = 0; l < 8; l++) y[n + l] = bias ? acc[l] + bias[n + l] : acc[l];
    }
    for (; n < nout; n++) {
        T acc = 0;
        for (int64_t q = 0; q < k; q++) acc += row[q] * w[n * k + q];
        y[n] = bias ? acc + bias[n] : acc;
    }
}

void FN(lnl_cpu_small_forward_)(const lnl_fwd_args *a) {
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    const T *x = a->x, *w = a->linear_weight, *bias = a->linear_bias;
    T *y = a->y, *mean = a->mean, *rstd = a->rstd, *lnout = a->ln_out;
    T row[LNL_TINY_MAX_K];
    for (int64_t m = 0; m < M; m++) {
        T mu, rs;
        FN(lnl_ln_stats_)(x + m * K, K, (T)a->p.eps, &mu, &rs);
        FN(lnl_ln_apply_)(row, x + m * K, K, mu, rs, a->ln_weight, a->ln_bias);
        if (mean) {
            mean[m] = mu;
            rstd[m] = rs;
        }
        if (lnout)
            for (int64_t q = 0; q < K; q++) lnout[m * K + q] = row[q];
        FN(row_times_wt_)(y + m * N, row, w, K, N, bias);
    }
}

void FN(lnl_cpu_small_backward_)(const lnl_bwd_args *a) {
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    const T *x = a->x, *dy = a->dy, *w = a->linear_weight, *gamma = a->ln_weight;
    T *dx = a->dx, *dg = a->dln_weight, *db = a->dln_bias, *dw = a->dlinear_weight,
      *dbias = a->dlinear_bias;
    const int need_rows = dx || dg || db;
    T lnrow[LNL_TINY_MAX_K], dxh[LNL_TINY_MAX_K];
    if (dw)
        for (int64_t q = 0; q < N * K; q++) dw[q] = 0;
    if (dbias)
        for (int64_t n = 0; n < N; n++) dbias[n] = 0;
    for (int64_t q = 0; q < K; q++) {
        if (dg) dg[q] = 0;
        if (db) db[q] = 0;
    }
    for (int64_t m = 0; m < M; m++) {
        const T *xr = x + m * K, *dyr = dy + m * N;
        T mu = 0, rs = 0;
        if (need_rows || (dw && !a->ln_out)) {
            if (a->mean) {
                mu = ((const T *)a->mean)[m];
                rs = ((const T *)a->rstd)[m];
            } else {
                FN(lnl_ln_stats_)(xr, K, (T)a->p.eps, &mu, &rs);
            }
        }
        if (dw) {
            const T *ln = lnrow;
            if (a->ln_out) ln = (const T *)a->ln_out + m * K;
            else FN(lnl_ln_apply_)(lnrow, xr, K, mu, rs, gamma, a->ln_bias);
            for (int64_t n = 0; n < N; n++)
                for (int64_t q = 0; q < K; q++) dw[n * K + q] += dyr[n] * ln[q];
        }
        if (dbias)
            for (int64_t n = 0; n < N; n++) dbias[n] += dyr[n];
        if (!need_rows) continue;
        for (int64_t q = 0; q < K; q++) dxh[q] = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t q = 0; q < K; q++) dxh[q] += dyr[n] * w[n * K + q];
        if (dx) FN(lnl_ln_dx_)(dx + m * K, dxh, xr, K, mu, rs, gamma);
        for (int64_t q = 0; q < K; q++) {
            if (dg) dg[q] += dxh[q] * ((xr[q] - mu) * rs);
            if (db) db[q] += dxh[q];
        }
    }
}

#undef FN
#undef SM_CAT
#undef SM_CAT_
