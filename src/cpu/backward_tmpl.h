/* Backward for one dtype, instantiated by backward.c (T, SUF, STATS and DX_COLSUMS
 * defined; DX_COLSUMS is the ISA's one-visit row pass or NULL).
 *   dW = dy^T @ LN(x)  (FUSED: LN applied while packing B; UNFUSED: from an M x K buffer)
 *   db = column sums of dy
 *   dxhat = dy @ W, then dx per row and dgamma/dbeta per column.
 * FUSED walks row blocks of w->rb rows so that dxhat never exists whole; UNFUSED
 * computes all of dxhat first. Both sum dgamma/dbeta per block of rb rows, in order. */
#define BW_CAT_(a, b) a##b
#define BW_CAT(a, b) BW_CAT_(a, b)
#define FN(name) BW_CAT(name, SUF)
#define GEMM BW_CAT(lnl_gemm_, SUF)
#define GEMM_RUN BW_CAT(BW_CAT(lnl_gemm_, SUF), _run)

typedef struct {
    const lnl_bwd_args *a;
    const lnl_cpu_ws *w;
    int fused;
} FN(bwd_ctx_);

/* dx rows [0,nrows) and this thread's dgamma/dbeta columns for one block of rows. */
static void FN(bwd_rows_)(const lnl_par *par, const lnl_bwd_args *a, const lnl_cpu_ws *w,
                          int64_t row0, int64_t nrows, const T *dxhat, const T *mean,
                          const T *rstd) {
    const int64_t K = a->p.in_features;
    const T *x = (const T *)a->x + row0 * K;
    int64_t r0, r1, k0, k1;
    T *dg = a->dln_weight, *db = a->dln_bias, *pg = dg ? w->pg : NULL, *pb = db ? w->pb : NULL;
    void (*dx_colsums)(T *, T *, T *, const T *, const T *, int64_t, T, T, const T *, int) =
        DX_COLSUMS;
    if (dx_colsums) {
        /* One visit per row (x and dxhat are read once, not twice): the column terms
         * go to the partials of the row's group; a thread owns whole groups. */
        lnl_par_range(par, nrows, LNL_BWD_GROUP, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            int64_t gi = r / LNL_BWD_GROUP;
            dx_colsums(a->dx ? (T *)a->dx + (row0 + r) * K : NULL, pg ? pg + gi * K : NULL,
                       pb ? pb + gi * K : NULL, dxhat + r * K, x + r * K, K, mean[row0 + r],
                       rstd[row0 + r], a->ln_weight, r % LNL_BWD_GROUP == 0);
        }
        if (!pg && !pb) return;
        lnl_par_barrier(par);
        const int64_t ng = (nrows + LNL_BWD_GROUP - 1) / LNL_BWD_GROUP;
        lnl_par_range(par, K, 16, &k0, &k1);
        /* Groups in order into group 0's partials (row by row: contiguous, vectorizable). */
        for (int64_t gi = 1; gi < ng; gi++)
            for (int64_t q = k0; q < k1; q++) {
                if (pg) pg[q] += pg[gi * K + q];
                if (pb) pb[q] += pb[gi * K + q];
            }
        for (int64_t q = k0; q < k1; q++) {
            if (dg) dg[q] = row0 == 0 ? pg[q] : dg[q] + pg[q];
            if (db) db[q] = row0 == 0 ? pb[q] : db[q] + pb[q];
        }
        /* The next block (UNFUSED calls these back to back) rewrites the partials. */
        lnl_par_barrier(par);
        return;
    }
    if (a->dx) {
        lnl_par_range(par, nrows, 1, &r0, &r1);
        for (int64_t r = r0; r < r1; r++)
            FN(lnl_ln_dx_)((T *)a->dx + (row0 + r) * K, dxhat + r * K, x + r * K, K,
                           mean[row0 + r], rstd[row0 + r], a->ln_weight);
    }
    if (!pg && !pb) return;
    lnl_par_range(par, K, 16, &k0, &k1);
    FN(lnl_ln_colsums_)(pg, pb, dxhat, K, x, K, nrows, mean + row0, rstd + row0, k0, k1);
    for (int64_t q = k0; q < k1; q++) {
        if (dg) dg[q] = row0 == 0 ? pg[q] : dg[q] + pg[q];
        if (db) db[q] = row0 == 0 ? pb[q] : db[q] + pb[q];
    }
}

static void FN(bwd_body_)(const lnl_par *par, void *vctx) {
    const FN(bwd_ctx_) *c = vctx;
    const lnl_bwd_args *a = c->a;
    const lnl_cpu_ws *w = c->w;
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    const T *x = a->x, *dy = a->dy, *gamma = a->ln_weight, *beta = a->ln_bias;
    const int need_rows = a->dx || a->dln_weight || a->dln_bias;
    const T *mean = a->mean, *rstd = a->rstd;
    int64_t r0, r1;

    if (!mean && (need_rows || (a->dlinear_weight && !a->ln_out))) {
        T *wm = w->mean, *wr = w->rstd;
        lnl_par_range(par, M, 1, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) STATS(x + r * K, K, (T)a->p.eps, wm + r, wr + r);
        mean = wm;
        rstd = wr;
        lnl_par_barrier(par);
    }
    if (a->dlinear_weight) {
        const T *lnout = a->ln_out;
        if (!lnout && !c->fused) {
            T *buf = w->lnout;
            lnl_par_range(par, M, 1, &r0, &r1);
            for (int64_t r = r0; r < r1; r++)
                FN(lnl_ln_apply_)(buf + r * K, x + r * K, K, mean[r], rstd[r], gamma, beta);
            lnout = buf;
            lnl_par_barrier(par);
        }
        BW_CAT(lnl_xform_, SUF) xf = {mean, rstd, gamma, beta};
        GEMM g = {0};
        g.m = N;
        g.n = K;
        g.k = M;
        g.a = dy;
        g.rsa = 1;
        g.csa = N;
        g.b = lnout ? lnout : x;
        g.rsb = K;
        g.csb = 1;
        g.xb = lnout ? NULL : &xf;
        g.c = a->dlinear_weight;
        g.ldc = K;
        GEMM_RUN(par, &g, w->gemm, w->gemm_stride);
    }
    if (a->dlinear_bias) {
        int64_t n0, n1;
        lnl_par_range(par, N, 16, &n0, &n1);
        FN(lnl_colsum_)(a->dlinear_bias, dy, M, N, n0, n1, w->rb);
    }
    if (!need_rows) return;
    GEMM g = {0};
    g.n = K;
    g.k = N;
    g.rsa = N;
    g.csa = 1;
    g.b = a->linear_weight;
    g.rsb = K;
    g.csb = 1;
    g.c = w->dxhat;
    g.ldc = K;
    if (c->fused) {
        for (int64_t row0 = 0; row0 < M; row0 += w->rb) {
            int64_t nrows = M - row0 < w->rb ? M - row0 : w->rb;
            g.m = nrows;
            g.a = dy + row0 * N;
            GEMM_RUN(par, &g, w->gemm, w->gemm_stride);
            lnl_par_barrier(par);
            FN(bwd_rows_)(par, a, w, row0, nrows, w->dxhat, mean, rstd);
            lnl_par_barrier(par);
        }
    } else {
        g.m = M;
        g.a = dy;
        GEMM_RUN(par, &g, w->gemm, w->gemm_stride);
        lnl_par_barrier(par);
        for (int64_t row0 = 0; row0 < M; row0 += w->rb) {
            int64_t nrows = M - row0 < w->rb ? M - row0 : w->rb;
            FN(bwd_rows_)(par, a, w, row0, nrows, (const T *)w->dxhat + row0 * K, mean, rstd);
        }
    }
}

void FN(lnl_cpu_backward_)(const lnl_bwd_args *a, const lnl_cpu_ws *w) {
    FN(bwd_ctx_) c;
    c.a = a;
    c.w = w;
    c.fused = a->p.strategy != LNL_STRATEGY_UNFUSED;
    lnl_par_run(lnl_cpu_threads(&a->p), FN(bwd_body_), &c);
}

#undef GEMM_RUN
#undef GEMM
#undef FN
#undef BW_CAT
#undef BW_CAT_
