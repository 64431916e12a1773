/* Packing routines, instantiated once per dtype by gemm_pack.c (T, SUF defined). */
#define PK_CAT_(a, b) a##b
#define PK_CAT(a, b) PK_CAT_(a, b)
#define GEMM PK_CAT(lnl_gemm_, SUF)
#define XFORM PK_CAT(lnl_xform_, SUF)

/* LayerNorm of one contiguous run of a row into tmp, in torch's operation order. */
static void PK_CAT(ln_run_, SUF)(T *tmp, const T *s, int64_t n, T mu, T rs, const T *gamma,
                                 const T *beta) {
    for (int64_t q = 0; q < n; q++) tmp[q] = (s[q] - mu) * rs;
    if (gamma)
        for (int64_t q = 0; q < n; q++) tmp[q] = tmp[q] * gamma[q];
    if (beta)
        for (int64_t q = 0; q < n; q++) tmp[q] = tmp[q] + beta[q];
}

void PK_CAT(lnl_pack_a_, SUF)(T *dst, const GEMM *g, int64_t i0, int64_t mc, int64_t p0,
                              int64_t kc, int mr) {
    const XFORM *x = g->xa;
    T tmp[PACK_MAX_KC];
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int mm = (int)(mc - ir < mr ? mc - ir : mr);
        T *d = dst + ir * kc;
        if (x) {
            for (int i = 0; i < mm; i++) {
                int64_t row = i0 + ir + i;
                PK_CAT(ln_run_, SUF)(tmp, g->a + row * g->rsa + p0, kc, x->mean[row], x->rstd[row],
                                     x->gamma ? x->gamma + p0 : NULL, x->beta ? x->beta + p0 : NULL);
                for (int64_t p = 0; p < kc; p++) d[p * mr + i] = tmp[p];
            }
        } else if (g->csa == 1) {
            for (int i = 0; i < mm; i++) {
                const T *s = g->a + (i0 + ir + i) * g->rsa + p0;
                for (int64_t p = 0; p < kc; p++) d[p * mr + i] = s[p];
            }
        } else {
            for (int64_t p = 0; p < kc; p++) {
                const T *s = g->a + (i0 + ir) * g->rsa + (p0 + p) * g->csa;
                for (int i = 0; i < mm; i++) d[p * mr + i] = s[i * g->rsa];
            }
        }
        for (int i = mm; i < mr; i++)
            for (int64_t p = 0; p < kc; p++) d[p * mr + i] = 0;
    }
}

void PK_CAT(lnl_pack_b_, SUF)(T *dst, const GEMM *g, int64_t p0, int64_t kc, int64_t j0,
                              int64_t nc, int nr) {
    const XFORM *x = g->xb;
    T tmp[PACK_MAX_NR];
    for (int64_t jr = 0; jr < nc; jr += nr) {
        int nn = (int)(nc - jr < nr ? nc - jr : nr);
        int64_t j = j0 + jr;
        T *d = dst + jr * kc;
        if (g->csb == 1) {
            for (int64_t p = 0; p < kc; p++) {
                const T *s = g->b + (p0 + p) * g->rsb + j;
                T *dp = d + p * nr;
                if (x) {
                    PK_CAT(ln_run_, SUF)(tmp, s, nn, x->mean[p0 + p], x->rstd[p0 + p],
                                         x->gamma ? x->gamma + j : NULL, x->beta ? x->beta + j : NULL);
                    s = tmp;
                }
                for (int q = 0; q < nn; q++) dp[q] = s[q];
                for (int q = nn; q < nr; q++) dp[q] = 0;
            }
        } else {
            for (int q = 0; q < nn; q++) {
                const T *s = g->b + p0 * g->rsb + (j + q) * g->csb;
                for (int64_t p = 0; p < kc; p++) d[p * nr + q] = s[p * g->rsb];
            }
            for (int q = nn; q < nr; q++)
                for (int64_t p = 0; p < kc; p++) d[p * nr + q] = 0;
        }
    }
}

#undef GEMM
#undef XFORM
#undef PK_CAT
#undef PK_CAT_
