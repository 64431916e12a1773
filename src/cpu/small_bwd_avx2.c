/* AVX2 backward for tiny f32 problems with short rows (K <= 16), beside the forward of
 * small_avx2.c. The generic path (small_tmpl.h) walks every gradient element by element
 * and spent ~2.1 us at M=16, K=8, N=16, more than the reference (1.8); this takes 0.4.
 * Here a row of K values is one or two vectors (masked past K), and rows go in blocks
 * of eight:
 *   dxhat[r]  = sum_n dy[r,n] W[n,:]        one W row load serves the block's 8 rows;
 *   dW[n,:]  += sum_r dy[r,n] LN(x)[r,:]    added to memory once a block, not once a row;
 *   dgamma, dbeta, dbias                    summed in registers.
 * Sums run in a fixed order (blocks in order, rows in order within a block), so a call
 * repeats bitwise; they are not the generic path's order, so results differ from it in
 * the last bits, as every kernel table's do. Masked lanes load as zeros, which keeps
 * them zero in dxhat and everything summed from it. */
#include <immintrin.h>

#include "cpu.h"
#include "ln_rows.h"

#define TB_MAX_K 16
#define TB_ROWS 8

static float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Lanes [0, n) of a vector, n in [0, 8]. */
static __m256i lanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Stores of a row's last, partial vector. A masked store (vmaskmovps) costs several
 * times a plain one on AMD cores (64,16,64's backward: 9.7 us with masked stores, 6.7
 * without), so a partial vector is stored whole wherever its 8 lanes stay inside the
 * buffer, and masked only at the buffer's end:
 *   add_to: the lanes past the row hold zeros, so the next row's values are written
 *           back unchanged;
 *   put:    the lanes past the row write junk into the next row's first values, which
 *           that row's own store, always later (rows go in order), overwrites. */
static inline void add_to(float *p, __m256 v, __m256i m, const float *end) {
    if (p + 8 <= end) _mm256_storeu_ps(p, _mm256_add_ps(_mm256_loadu_ps(p), v));
    else _mm256_maskstore_ps(p, m, _mm256_add_ps(_mm256_maskload_ps(p, m), v));
}

static inline void put(float *p, __m256 v, __m256i m, const float *end) {
    if (p + 8 <= end) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, m, v);
}

/* What one call shares between its row blocks. */
typedef struct {
    const lnl_bwd_args *a;
    int64_t M, N, K;
    float eps;
    int need_rows, need_stats;
    __m256i mk[2];
    __m256 gam[2], bet[2], inv_k;
    __m256 sum_dg[2], sum_db[2];
} tb_ctx;

/* Rows [m0, m0 + rows) with NC vectors a row. Always inlined with constant rows and NC
 * for the full blocks, so their loops unroll; the tail block takes the general copy. */
static inline __attribute__((always_inline)) void block(tb_ctx *t, int64_t m0, const int rows,
                                                        const int NC) {
    const lnl_bwd_args *a = t->a;
    const int64_t N = t->N, K = t->K;
    const float *x = a->x, *dyb = (const float *)a->dy + m0 * N, *w = a->linear_weight,
                *ln_out = a->ln_out;
    float *dx = a->dx, *dw = a->dlinear_weight, *dbias = a->dlinear_bias;
    __m256 xh[TB_ROWS][2], ln[TB_ROWS][2], dxh[TB_ROWS][2];
    float rs[TB_ROWS] = {0};
    for (int r = 0; r < TB_ROWS; r++) xh[r][0] = xh[r][1] = _mm256_setzero_ps(); /* quiets -Wmaybe-uninitialized */
    if (t->need_stats)
        for (int r = 0; r < rows; r++) {
            const float *xr = x + (m0 + r) * K;
            float mu, s;
            if (a->mean) {
                mu = ((const float *)a->mean)[m0 + r];
                s = ((const float *)a->rstd)[m0 + r];
            } else {
                lnl_ln_stats_f32(xr, K, t->eps, &mu, &s);
            }
            rs[r] = s;
            for (int c = 0; c < NC; c++) {
                __m256 v = _mm256_maskload_ps(xr + 8 * c, t->mk[c]);
                /* lanes past K: zero (x - mean would not be), so LN(x) is zero there too */
                xh[r][c] = _mm256_and_ps(_mm256_mul_ps(_mm256_sub_ps(v, _mm256_set1_ps(mu)), _mm256_set1_ps(s)),
                                         _mm256_castsi256_ps(t->mk[c]));
            }
        }
    if (dw) {
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < NC; c++)
                ln[r][c] = ln_out ? _mm256_maskload_ps(ln_out + (m0 + r) * K + 8 * c, t->mk[c])
                                  : _mm256_fmadd_ps(xh[r][c], t->gam[c], t->bet[c]);
        for (int64_t n = 0; n < N; n++)
            for (int c = 0; c < NC; c++) {
                __m256 acc = _mm256_setzero_ps();
                for (int r = 0; r < rows; r++)
                    acc = _mm256_fmadd_ps(_mm256_set1_ps(dyb[r * N + n]), ln[r][c], acc);
                add_to(dw + n * K + 8 * c, acc, t->mk[c], dw + N * K);
            }
    }
    if (dbias) {
        int64_t n = 0;
        for (; n + 8 <= N; n += 8) {
            __m256 acc = _mm256_loadu_ps(dbias + n);
            for (int r = 0; r < rows; r++) acc = _mm256_add_ps(acc, _mm256_loadu_ps(dyb + r * N + n));
            _mm256_storeu_ps(dbias + n, acc);
        }
        for (; n < N; n++) {
            float s = dbias[n];
            for (int r = 0; r < rows; r++) s += dyb[r * N + n];
            dbias[n] = s;
        }
    }
    if (!t->need_rows) return;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < NC; c++) dxh[r][c] = _mm256_setzero_ps();
    for (int64_t n = 0; n < N; n++)
        for (int c = 0; c < NC; c++) {
            __m256 wn = _mm256_maskload_ps(w + n * K + 8 * c, t->mk[c]);
            for (int r = 0; r < rows; r++)
                dxh[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(dyb[r * N + n]), wn, dxh[r][c]);
        }
    for (int r = 0; r < rows; r++) {
        /* dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dxhat gamma */
        __m256 g[2], tg = _mm256_setzero_ps(), tgx = _mm256_setzero_ps();
        for (int c = 0; c < NC; c++) {
            g[c] = _mm256_mul_ps(dxh[r][c], t->gam[c]);
            tg = _mm256_add_ps(tg, g[c]);
            tgx = _mm256_fmadd_ps(g[c], xh[r][c], tgx);
            t->sum_dg[c] = _mm256_fmadd_ps(dxh[r][c], xh[r][c], t->sum_dg[c]);
            t->sum_db[c] = _mm256_add_ps(t->sum_db[c], dxh[r][c]);
        }
        if (!dx) continue;
        __m256 mg = _mm256_mul_ps(_mm256_set1_ps(hsum(tg)), t->inv_k);
        __m256 mgx = _mm256_mul_ps(_mm256_set1_ps(hsum(tgx)), t->inv_k);
        __m256 s = _mm256_set1_ps(rs[r]);
        for (int c = 0; c < NC; c++) {
            __m256 v = _mm256_sub_ps(_mm256_sub_ps(g[c], mg), _mm256_mul_ps(xh[r][c], mgx));
            put(dx + (m0 + r) * K + 8 * c, _mm256_mul_ps(s, v), t->mk[c], dx + t->M * K);
        }
    }
}

/* Returns 0 (nothing done) when the problem is not of the shape handled here. */
int lnl_cpu_small_backward_f32_avx2(const lnl_bwd_args *a) {
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    if (K > TB_MAX_K) return 0;
    const float *gamma = a->ln_weight, *beta = a->ln_bias;
    float *dg = a->dln_weight, *db = a->dln_bias, *dw = a->dlinear_weight, *dbias = a->dlinear_bias;
    tb_ctx t = {.a = a, .M = M, .N = N, .K = K, .eps = (float)a->p.eps};
    t.need_rows = a->dx || dg || db;
    t.need_stats = t.need_rows || (dw && !a->ln_out);
    const int nc = K > 8 ? 2 : 1; /* vectors a row */
    t.mk[0] = lanes(K < 8 ? K : 8);
    t.mk[1] = lanes(K > 8 ? K - 8 : 0);
    t.inv_k = _mm256_set1_ps(1.0f / (float)K);
    for (int c = 0; c < 2; c++) {
        t.gam[c] = gamma ? _mm256_maskload_ps(gamma + 8 * c, t.mk[c]) : _mm256_set1_ps(1.0f);
        t.bet[c] = beta ? _mm256_maskload_ps(beta + 8 * c, t.mk[c]) : _mm256_setzero_ps();
        t.sum_dg[c] = t.sum_db[c] = _mm256_setzero_ps();
    }
    if (dw)
        for (int64_t q = 0; q < N * K; q++) dw[q] = 0;
    if (dbias)
        for (int64_t n = 0; n < N; n++) dbias[n] = 0;
    const int64_t full = M / TB_ROWS * TB_ROWS;
    const int tail = (int)(M - full);
    if (nc == 1) {
        for (int64_t m0 = 0; m0 < full; m0 += TB_ROWS) block(&t, m0, TB_ROWS, 1);
        if (tail) block(&t, full, tail, 1);
    } else {
        for (int64_t m0 = 0; m0 < full; m0 += TB_ROWS) block(&t, m0, TB_ROWS, 2);
        if (tail) block(&t, full, tail, 2);
    }
    for (int c = 0; c < nc; c++) {
        if (dg) _mm256_maskstore_ps(dg + 8 * c, t.mk[c], t.sum_dg[c]);
        if (db) _mm256_maskstore_ps(db + 8 * c, t.mk[c], t.sum_db[c]);
    }
    return 1;
}
