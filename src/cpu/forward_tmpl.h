/* Forward for one dtype, instantiated by forward.c (T, SUF defined).
 * Phase 1 (rows split): statistics, and ln_out where it is written.
 * Phase 2 (GEMM split over M or N): y = LN(x) @ W^T + bias, with the LayerNorm
 * applied while packing A (FUSED) or read from the written ln_out (UNFUSED). */
#define FW_CAT_(a, b) a##b
#define FW_CAT(a, b) FW_CAT_(a, b)
#define FN(name) FW_CAT(name, SUF)

typedef struct {
    const lnl_fwd_args *a;
    const lnl_cpu_ws *w;
    T *mean, *rstd, *lnout;
} FN(fwd_ctx_);

static void FN(fwd_body_)(const lnl_par *par, void *vctx) {
    const FN(fwd_ctx_) *c = vctx;
    const lnl_fwd_args *a = c->a;
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    const T *x = a->x, *gamma = a->ln_weight, *beta = a->ln_bias;
    int64_t r0, r1;
    lnl_par_range(par, M, 1, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        STATS(x + r * K, K, (T)a->p.eps, c->mean + r, c->rstd + r);
        if (c->lnout) FN(lnl_ln_apply_)(c->lnout + r * K, x + r * K, K, c->mean[r], c->rstd[r], gamma, beta);
    }
    lnl_par_barrier(par);
    FW_CAT(lnl_xform_, SUF) xf = {c->mean, c->rstd, gamma, beta};
    FW_CAT(lnl_gemm_, SUF) g = {0};
    g.m = M;
    g.n = N;
    g.k = K;
    g.a = c->lnout ? c->lnout : x;
    g.rsa = K;
    g.csa = 1;
    g.xa = c->lnout ? NULL : &xf;
    g.b = a->linear_weight;
    g.rsb = 1;
    g.csb = K;
    g.c = a->y;
    g.ldc = N;
    g.bias = a->linear_bias;
    FW_CAT(FW_CAT(lnl_gemm_, SUF), _run)(par, &g, c->w->gemm, c->w->gemm_stride);
}

void FN(lnl_cpu_forward_)(const lnl_fwd_args *a, const lnl_cpu_ws *w) {
    FN(fwd_ctx_) c;
    c.a = a;
    c.w = w;
    c.mean = a->mean ? a->mean : w->mean;
    c.rstd = a->rstd ? a->rstd : w->rstd;
    c.lnout = a->ln_out ? a->ln_out : w->lnout;
    lnl_par_run(lnl_cpu_threads(&a->p), FN(fwd_body_), &c);
}

#undef FN
#undef FW_CAT
#undef FW_CAT_
