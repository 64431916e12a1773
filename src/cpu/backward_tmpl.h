/* Backward for one dtype, instantiated by backward.c (T, SUF, STATS, DX_COLSUMS and
 * HALF defined; DX_COLSUMS is the ISA's one-visit row pass or NULL, HALF whether the
 * instance also serves 16-bit storage).
 *   dW = dy^T @ LN(x)  (FUSED: LN applied while packing B; UNFUSED: from an M x K buffer)
 *   db = column sums of dy
 *   dxhat = dy @ W, then dx per row and dgamma/dbeta per column.
 * FUSED walks row blocks of w->rb rows so that dxhat never exists whole; UNFUSED
 * computes all of dxhat first. Both sum dgamma/dbeta per block of rb rows, in order.
 * 16-bit problems (float instance): the GEMMs widen dy, W and x while packing; the row
 * pass reads x and writes dx in 16 bits (the ISA's one-visit kernel), or with the portable
 * column sums widens a whole row block of x once; dW (by its GEMM), dgamma, dbeta and dbias
 * are summed in float and each dx row in a per-thread float row, then rounded once.
 * With ln_float32 only dy, W, dW, dbias and ln_out are 16-bit: x, dx, dgamma and dbeta are
 * float and are read and written in place, as a float problem's. */
#define BW_CAT_(a, b) a##b
#define BW_CAT(a, b) BW_CAT_(a, b)
#define FN(name) BW_CAT(name, SUF)
#define GEMM BW_CAT(lnl_gemm_, SUF)
#define GEMM_RUN BW_CAT(BW_CAT(lnl_gemm_, SUF), _run)

typedef struct {
    const lnl_bwd_args *a;
    const lnl_cpu_ws *w;
    int fused, half, xhalf; /* 16-bit: dy, W and their side; x and its side */
    const T *gamma, *beta;  /* the caller's, or widened (16-bit) */
    T *dg, *db, *dw, *dbias; /* where the sums go: the caller's, or float (16-bit) */
} FN(bwd_ctx_);

/* Row r of a block's dx: its place in the caller's dx, or (16-bit) this thread's float
 * row, rounded into place by dx_done_. */
static T *FN(dx_row_)(const lnl_par *par, const FN(bwd_ctx_) * c, int64_t row) {
    const int64_t K = c->a->p.in_features;
    if (!c->a->dx) return NULL;
#if HALF
    if (c->xhalf) return c->w->rows + 2 * K * par->tid;
#else
    (void)par;
#endif
    return (T *)c->a->dx + row * K;
}

static void FN(dx_done_)(const lnl_par *par, const FN(bwd_ctx_) * c, int64_t row) {
#if HALF
    const int64_t K = c->a->p.in_features;
    if (c->xhalf && c->a->dx)
        lnl_cpu_isa_get()->f32_to_half((uint16_t *)c->a->dx + row * K, FN(dx_row_)(par, c, row), K,
                                       c->a->p.dtype);
#else
    (void)par, (void)c, (void)row;
#endif
}

/* dx rows [0,nrows) and this thread's dgamma/dbeta columns for one block of rows. */
static void FN(bwd_rows_)(const lnl_par *par, const FN(bwd_ctx_) * c, int64_t row0, int64_t nrows,
                          const T *dxhat, const T *mean, const T *rstd) {
    const lnl_bwd_args *a = c->a;
    const lnl_cpu_ws *w = c->w;
    const int64_t K = a->p.in_features;
    const T *x = c->xhalf ? NULL : (const T *)a->x + row0 * K; /* 16-bit: widened below */
    int64_t r0, r1, k0, k1;
    T *dg = c->dg, *db = c->db, *pg = dg ? w->pg : NULL, *pb = db ? w->pb : NULL;
    void (*dx_colsums)(T *, T *, T *, const T *, const T *, int64_t, T, T, const T *, int) =
        DX_COLSUMS;
#if HALF
    if (c->xhalf && !dx_colsums) { /* the block's x widened once: the column sums read it by columns */
        lnl_par_range(par, nrows, 1, &r0, &r1);
        for (int64_t r = r0; r < r1; r++)
            lnl_cpu_isa_get()->half_to_f32(w->xblk + r * K, (const uint16_t *)a->x + (row0 + r) * K,
                                           K, a->p.dtype);
        lnl_par_barrier(par);
        x = w->xblk;
    }
#endif
    if (dx_colsums) {
        /* One visit per row (x and dxhat are read once, not twice): the column terms
         * go to the partials of the row's group; a thread owns whole groups. */
        lnl_par_range(par, nrows, LNL_BWD_GROUP, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            int64_t gi = r / LNL_BWD_GROUP;
            T *pgr = pg ? pg + gi * K : NULL, *pbr = pb ? pb + gi * K : NULL;
            const int first = r % LNL_BWD_GROUP == 0;
#if HALF
            if (c->xhalf) { /* x read and dx written in 16 bits, rounded once, same visit */
                lnl_cpu_isa_get()->ln_dx_colsums_half(
                    a->dx ? (uint16_t *)a->dx + (row0 + r) * K : NULL, pgr, pbr, dxhat + r * K,
                    (const uint16_t *)a->x + (row0 + r) * K, K, mean[row0 + r], rstd[row0 + r],
                    c->gamma, first, a->p.dtype);
                continue;
            }
#endif
            dx_colsums(a->dx ? (T *)a->dx + (row0 + r) * K : NULL, pgr, pbr, dxhat + r * K,
                       x + r * K, K, mean[row0 + r], rstd[row0 + r], c->gamma, first);
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
        for (int64_t r = r0; r < r1; r++) {
            FN(lnl_ln_dx_)(FN(dx_row_)(par, c, row0 + r), dxhat + r * K, x + r * K, K,
                           mean[row0 + r], rstd[row0 + r], c->gamma);
            FN(dx_done_)(par, c, row0 + r);
        }
    }
    if (!pg && !pb) {
        if (c->xhalf) lnl_par_barrier(par); /* xblk is rewritten by the next block */
        return;
    }
    lnl_par_range(par, K, 16, &k0, &k1);
    FN(lnl_ln_colsums_)(pg, pb, dxhat, K, x, K, nrows, mean + row0, rstd + row0, k0, k1);
    for (int64_t q = k0; q < k1; q++) {
        if (dg) dg[q] = row0 == 0 ? pg[q] : dg[q] + pg[q];
        if (db) db[q] = row0 == 0 ? pb[q] : db[q] + pb[q];
    }
    if (c->xhalf) lnl_par_barrier(par);
}

/* 16-bit: rounds float sums into the caller's buffer (dgamma/dbeta and dbias: this
 * thread's columns, which it summed itself). */
#if HALF
static void FN(round_vec_)(void *dst, const T *src, int64_t i0, int64_t i1, lnl_dtype kind) {
    if (dst && i1 > i0) lnl_cpu_isa_get()->f32_to_half((uint16_t *)dst + i0, src + i0, i1 - i0, kind);
}
#endif

static void FN(bwd_body_)(const lnl_par *par, void *vctx) {
    const FN(bwd_ctx_) *c = vctx;
    const lnl_bwd_args *a = c->a;
    const lnl_cpu_ws *w = c->w;
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    const T *x = a->x, *dy = a->dy, *gamma = c->gamma, *beta = c->beta;
    const int need_rows = a->dx || a->dln_weight || a->dln_bias;
    const T *mean = a->mean, *rstd = a->rstd;
    int64_t r0, r1;
#if HALF
    const lnl_dtype kind = a->p.dtype;
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    T *xrow = c->half ? w->rows + 2 * K * par->tid : NULL, *lnrow = xrow ? xrow + K : NULL;
#endif

    if (!mean && (need_rows || (a->dlinear_weight && !a->ln_out))) {
        T *wm = w->mean, *wr = w->rstd;
        lnl_par_range(par, M, 1, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const T *xr;
#if HALF
            if (c->xhalf) {
                isa->half_to_f32(xrow, (const uint16_t *)a->x + r * K, K, kind);
                xr = xrow;
            } else
#endif
                xr = x + r * K;
            STATS(xr, K, (T)a->p.eps, wm + r, wr + r);
        }
        mean = wm;
        rstd = wr;
        lnl_par_barrier(par);
    }
    if (a->dlinear_weight) {
        const void *lnout = a->ln_out;
        if (!lnout && !c->fused) {
            lnl_par_range(par, M, 1, &r0, &r1);
            for (int64_t r = r0; r < r1; r++) {
#if HALF
                if (c->half) { /* ln_out in 16 bits, from x widened (or float) */
                    const T *xr;
                    if (c->xhalf) {
                        isa->half_to_f32(xrow, (const uint16_t *)a->x + r * K, K, kind);
                        xr = xrow;
                    } else {
                        xr = x + r * K;
                    }
                    FN(lnl_ln_apply_)(lnrow, xr, K, mean[r], rstd[r], gamma, beta);
                    isa->f32_to_half((uint16_t *)w->lnout + r * K, lnrow, K, kind);
                    continue;
                }
#endif
                FN(lnl_ln_apply_)((T *)w->lnout + r * K, x + r * K, K, mean[r], rstd[r], gamma, beta);
            }
            lnout = w->lnout;
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
        g.c = c->dw;
        g.ldc = K;
#if HALF
        if (c->half) {
            g.a_half = (const uint16_t *)a->dy;
            g.a = NULL;
            /* B: the 16-bit ln_out, or x (16-bit, or with ln_float32 the float x in g.b) */
            g.b_half = lnout || c->xhalf ? (const uint16_t *)(lnout ? lnout : a->x) : NULL;
            if (g.b_half) g.b = NULL;
            g.half = kind;
            g.c_half = a->dlinear_weight;
        }
#endif
        GEMM_RUN(par, &g, w->gemm, w->gemm_stride);
    }
    if (a->dlinear_bias) {
        int64_t n0, n1;
        lnl_par_range(par, N, 16, &n0, &n1);
#if HALF
        if (c->half) {
            lnl_colsum_half(c->dbias, a->dy, M, N, n0, n1, w->rb, kind);
            FN(round_vec_)(a->dlinear_bias, c->dbias, n0, n1, kind);
        } else
#endif
            FN(lnl_colsum_)(c->dbias, dy, M, N, n0, n1, w->rb);
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
#if HALF
    if (c->half) {
        g.b_half = (const uint16_t *)a->linear_weight;
        g.b = NULL;
        g.half = kind;
    }
#endif
    const int64_t gm = c->fused ? w->rb : M; /* rows of dy per dxhat GEMM */
    for (int64_t gr = 0; gr < M; gr += gm) {
        int64_t grows = M - gr < gm ? M - gr : gm;
        g.m = grows;
#if HALF
        if (c->half)
            g.a_half = (const uint16_t *)a->dy + gr * N;
        else
#endif
            g.a = dy + gr * N;
        GEMM_RUN(par, &g, w->gemm, w->gemm_stride);
        lnl_par_barrier(par);
        for (int64_t row0 = gr; row0 < gr + grows; row0 += w->rb) {
            int64_t nrows = gr + grows - row0 < w->rb ? gr + grows - row0 : w->rb;
            FN(bwd_rows_)(par, c, row0, nrows, (const T *)w->dxhat + (row0 - gr) * K, mean, rstd);
        }
        if (c->fused) lnl_par_barrier(par);
    }
#if HALF
    if (c->xhalf && (c->dg || c->db)) {
        int64_t k0, k1;
        lnl_par_range(par, K, 16, &k0, &k1);
        FN(round_vec_)(a->dln_weight, c->dg, k0, k1, kind);
        FN(round_vec_)(a->dln_bias, c->db, k0, k1, kind);
    }
#endif
}

void FN(lnl_cpu_backward_)(const lnl_bwd_args *a, const lnl_cpu_ws *w) {
    FN(bwd_ctx_) c;
    c.a = a;
    c.w = w;
    c.fused = a->p.strategy != LNL_STRATEGY_UNFUSED;
    c.half = c.xhalf = 0;
    c.gamma = a->ln_weight;
    c.beta = a->ln_bias;
    c.dg = a->dln_weight;
    c.db = a->dln_bias;
    c.dw = a->dlinear_weight;
    c.dbias = a->dlinear_bias;
#if HALF
    if (lnl_is_half(a->p.dtype)) {
        const int64_t K = a->p.in_features;
        c.half = 1;
        c.xhalf = !a->p.ln_float32;
        if (c.xhalf) {
            c.gamma = lnl_widen_param(w->params, a->ln_weight, K, a->p.dtype);
            c.beta = lnl_widen_param(w->params + K, a->ln_bias, K, a->p.dtype);
            c.dg = a->dln_weight ? w->acc : NULL;
            c.db = a->dln_bias ? w->acc + K : NULL;
        }
        c.dbias = a->dlinear_bias ? w->acc + 2 * K : NULL;
        c.dw = a->dlinear_weight ? w->c32 : NULL;
    }
#endif
    lnl_par_run(lnl_cpu_threads(&a->p), FN(bwd_body_), &c);
}

#undef GEMM_RUN
#undef GEMM
#undef FN
#undef BW_CAT
#undef BW_CAT_
