/* Forward for one dtype, instantiated by forward.c (T, SUF, STATS and HALF, whether
 * the instance also serves 16-bit storage, defined).
 * Phase 1 (rows split): statistics, and ln_out where it is written.
 * Phase 2 (GEMM split over M or N): y = LN(x) @ W^T + bias, with the LayerNorm
 * applied while packing A (FUSED) or read from the written ln_out (UNFUSED).
 * 16-bit problems (float instance): rows are widened into a per-thread float row for
 * the statistics, and the GEMM takes 16-bit operands and rounds y into the caller's
 * buffer once its sums are done (partial sums in the workspace's float M x N). With
 * ln_float32, x and its parameters are float already: only W, the bias, y and ln_out are
 * 16-bit, and the GEMM packs LN(x) from the float x. */
#define FW_CAT_(a, b) a##b
#define FW_CAT(a, b) FW_CAT_(a, b)
#define FN(name) FW_CAT(name, SUF)

typedef struct {
    const lnl_fwd_args *a;
    const lnl_cpu_ws *w;
    T *mean, *rstd;
    void *lnout; /* in the problem's dtype */
    const T *gamma, *beta, *bias;
} FN(fwd_ctx_);

static void FN(fwd_body_)(const lnl_par *par, void *vctx) {
    const FN(fwd_ctx_) *c = vctx;
    const lnl_fwd_args *a = c->a;
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    const T *x = a->x, *gamma = c->gamma, *beta = c->beta;
    int64_t r0, r1;
    lnl_par_range(par, M, 1, &r0, &r1);
#if HALF
    const lnl_dtype kind = a->p.dtype;
    const int half = lnl_is_half(kind), xhalf = half && !a->p.ln_float32; /* y's, x's */
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    T *xrow = half ? c->w->rows + 2 * K * par->tid : NULL, *lnrow = xrow ? xrow + K : NULL;
#endif
    for (int64_t r = r0; r < r1; r++) {
        const T *xr;
#if HALF
        if (xhalf) { /* (x holds 16-bit values: no float pointer into it is formed) */
            isa->half_to_f32(xrow, (const uint16_t *)a->x + r * K, K, kind);
            xr = xrow;
        } else
#endif
            xr = x + r * K;
        STATS(xr, K, (T)a->p.eps, c->mean + r, c->rstd + r);
        if (!c->lnout) continue;
#if HALF
        if (half) {
            FN(lnl_ln_apply_)(lnrow, xr, K, c->mean[r], c->rstd[r], gamma, beta);
            isa->f32_to_half((uint16_t *)c->lnout + r * K, lnrow, K, kind);
            continue;
        }
#endif
        FN(lnl_ln_apply_)((T *)c->lnout + r * K, xr, K, c->mean[r], c->rstd[r], gamma, beta);
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
    g.bias = c->bias;
#if HALF
    if (half) {
        /* A: the 16-bit ln_out, or x (16-bit, or with ln_float32 the float x in g.a) */
        g.a_half = c->lnout || xhalf ? (const uint16_t *)(c->lnout ? c->lnout : a->x) : NULL;
        if (g.a_half) g.a = NULL;
        g.b_half = (const uint16_t *)a->linear_weight;
        g.b = NULL;
        g.half = kind;
        g.c = c->w->c32;
        g.c_half = a->y;
    }
#endif
    FW_CAT(FW_CAT(lnl_gemm_, SUF), _run)(par, &g, c->w->gemm, c->w->gemm_stride);
}

void FN(lnl_cpu_forward_)(const lnl_fwd_args *a, const lnl_cpu_ws *w) {
    FN(fwd_ctx_) c;
    c.a = a;
    c.w = w;
    c.mean = a->mean ? a->mean : w->mean;
    c.rstd = a->rstd ? a->rstd : w->rstd;
    c.lnout = a->ln_out ? a->ln_out : w->lnout;
    c.gamma = a->ln_weight;
    c.beta = a->ln_bias;
    c.bias = a->linear_bias;
#if HALF
    if (lnl_is_half(a->p.dtype)) {
        const int64_t K = a->p.in_features, N = a->p.out_features;
        if (!a->p.ln_float32) {
            c.gamma = lnl_widen_param(w->params, a->ln_weight, K, a->p.dtype);
            c.beta = lnl_widen_param(w->params + K, a->ln_bias, K, a->p.dtype);
        }
        c.bias = lnl_widen_param(w->params + 2 * K, a->linear_bias, N, a->p.dtype);
    }
#endif
    lnl_par_run(lnl_cpu_threads(&a->p), FN(fwd_body_), &c);
}

#undef FN
#undef FW_CAT
#undef FW_CAT_
