/*
 * Numerical stress: inputs that break naive LayerNorm kernels, each compared
 * with the test's float64 reference (testutil.c) per tensor, for every CPU
 * strategy, F32, F64, BF16 and F16, backward with and without the saved statistics.
 * Reference inputs are the stored (rounded) values, so the bounds below only
 * cover the library's arithmetic plus the rounding of its stored outputs
 * (mean/rstd in float for F32, ln_out stored in the dtype; 16-bit outputs rounded
 * once, so their bound is at least the table's for the dtype). Tensors whose exact
 * value is zero are bounded by their rms instead (tu_relerr).
 *
 * Then NaN/Inf in x: the rows holding them become non-finite in y and dx, all
 * other rows stay finite and correct, and nothing crashes.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

typedef void (*gen_fn)(double *x, int64_t M, int64_t K, tu_rng *r);

typedef struct {
    const char *name;
    int64_t M, K, N;
    double eps;
    double bound_f32, bound_f64;
    gen_fn gen;
    const char *why; /* where the bound comes from */
} stress_case;

static void gen_offset1e3(double *x, int64_t M, int64_t K, tu_rng *r) {
    for (int64_t i = 0; i < M * K; i++) x[i] = 1e3 + tu_randn(r);
}
static void gen_offset1e4(double *x, int64_t M, int64_t K, tu_rng *r) {
    for (int64_t i = 0; i < M * K; i++) x[i] = 1e4 + tu_randn(r);
}
static void gen_tiny(double *x, int64_t M, int64_t K, tu_rng *r) {
    for (int64_t i = 0; i < M * K; i++) x[i] = 0.5 + 1e-4 * tu_randn(r);
}
static void gen_constant(double *x, int64_t M, int64_t K, tu_rng *r) {
    (void)r;
    static const double c[] = {2.5, 0.1, -7.0, 1e3 / 3.0};
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++) x[m * K + k] = c[m % 4];
}
static void gen_normal(double *x, int64_t M, int64_t K, tu_rng *r) {
    for (int64_t i = 0; i < M * K; i++) x[i] = 3.0 + 2.0 * tu_randn(r);
}

static const stress_case cases[] = {
    {"offset 1e3, unit spread", 16, 768, 48, 1e-5, 2e-3, 1e-11, gen_offset1e3,
     "float mean of ~1e3 carries ~6e-5 absolute rounding (stored) and ~1e-4 from summation: "
     "a 1e-4 relative shift of xhat; 2e-3 leaves 20x margin, while E[x^2]-E[x]^2 errs by O(1)"},
    {"offset 1e4, unit spread", 16, 768, 48, 1e-5, 2e-2, 1e-10, gen_offset1e4,
     "every error term of the 1e3 case scales with the offset: 10x its bound"},
    {"tiny spread (std 1e-4, eps 1e-5)", 16, 256, 32, 1e-5, 5e-3, 1e-11, gen_tiny,
     "var 1e-8 << eps: rstd ~ 316; the float mean of ~0.5 carries ~3e-8 absolute error, "
     "3e-4 of the 1e-4 spread, which xhat-dependent gradients (dln_weight, dW) inherit"},
    {"constant rows", 8, 300, 16, 1e-5, 2e-5, 5e-9, gen_constant,
     "var = 0 and rstd = 1/sqrt(eps) = 316 amplifies any rounding of the row mean: "
     "xhat ~ 316 * sqrt(K) * u * |c| (~8e-10 in f64 for c = 1e3/3), relative to ln_out ~0.5; "
     "f32 stays far below its bound because 300 * c is exact there. dln_weight is exactly 0 "
     "and checked by its absolute rms instead (1e-3 f32, 1e-8 f64)"},
    {"K = 1", 16, 1, 16, 1e-5, 1e-5, 1e-11, gen_normal,
     "xhat = 0 exactly; dx and dln_weight are exactly 0 (rms bound)"},
    {"K = 65536, small M", 2, 65536, 3, 1e-5, 1e-4, 1e-11, gen_normal,
     "float dot products of length 65536: ~sqrt(K) * 2^-24 ~ 1.5e-5 relative; bound 1e-4"},
    {"N = 1", 33, 100, 1, 1e-5, 1e-5, 1e-11, gen_normal, "ordinary float32 rounding"},
};

enum { NOUT = 9 };
static const char *oname[NOUT] = {"y", "mean", "rstd", "ln_out", "dx", "dln_weight", "dln_bias",
                                  "dlinear_weight", "dlinear_bias"};

/* A 16-bit output is computed in float and rounded once: half a unit in the last place
 * (2^-9 bf16, 2^-12 f16 relative) on top of the float arithmetic's error. */
static double bound_of(lnl_dtype dt, double bound_f32, double bound_f64) {
    switch (dt) {
    case LNL_DTYPE_F64: return bound_f64;
    case LNL_DTYPE_BF16: return fmax(bound_f32, 1e-2);
    case LNL_DTYPE_F16: return fmax(bound_f32, 2e-3);
    default: return bound_f32;
    }
}

static void run_stress(const stress_case *sc, lnl_dtype dt, lnl_strategy strat) {
    int64_t M = sc->M, K = sc->K, N = sc->N;
    size_t es = tu_dtype_size(dt), as = tu_acc_size(dt);
    size_t n[NOUT] = {(size_t)(M * N), (size_t)M, (size_t)M, (size_t)(M * K), (size_t)(M * K),
                      (size_t)K, (size_t)K, (size_t)(N * K), (size_t)N};
    tu_rng r;
    tu_rng_seed(&r, (uint64_t)K * 31 + (uint64_t)M);
    double *x = malloc((size_t)(M * K) * 8), *g = malloc(K * 8), *be = malloc(K * 8);
    double *W = malloc((size_t)(N * K) * 8), *b = malloc(N * 8), *dy = malloc((size_t)(M * N) * 8);
    TU_CHECK(x && g && be && W && b && dy);
    sc->gen(x, M, K, &r);
    for (int64_t i = 0; i < M * K; i++) x[i] = tu_round(dt, x[i]);
    for (int64_t k = 0; k < K; k++) g[k] = tu_round(dt, 1 + 0.3 * tu_randn(&r)), be[k] = tu_round(dt, 0.5 * tu_randn(&r));
    for (int64_t i = 0; i < N * K; i++) W[i] = tu_round(dt, tu_randn(&r) / sqrt((double)K));
    for (int64_t i = 0; i < N; i++) b[i] = tu_round(dt, 0.5 * tu_randn(&r));
    for (int64_t i = 0; i < M * N; i++) dy[i] = tu_round(dt, tu_randn(&r));
    double *ref[NOUT], *got = malloc(((size_t)(M * K) + (size_t)(N * K) + (size_t)(M * N) + 1) * 8);
    void *buf[NOUT];
    for (int i = 0; i < NOUT; i++) {
        ref[i] = malloc((n[i] + 1) * 8);
        buf[i] = tu_galloc(n[i] * ((i == 1 || i == 2) ? as : es));
        tu_fill_nan(dt, i == 1 || i == 2, buf[i], n[i]);
    }
    tu_ref_forward(M, K, N, sc->eps, x, g, be, W, b, ref[0], ref[1], ref[2], ref[3]);
    tu_ref_backward(M, K, N, sc->eps, dy, x, g, be, W, ref[4], ref[5], ref[6], ref[7], ref[8]);
    void *dx_ = tu_galloc((size_t)(M * K) * es), *dg = tu_galloc(K * es), *dbe = tu_galloc(K * es);
    void *dW_ = tu_galloc((size_t)(N * K) * es), *db_ = tu_galloc(N * es), *dy_ = tu_galloc((size_t)(M * N) * es);
    void *x_ = tu_galloc((size_t)(M * K) * es), *W_ = tu_galloc((size_t)(N * K) * es);
    void *g_ = tu_galloc(K * es), *be_ = tu_galloc(K * es), *b_ = tu_galloc(N * es);
    tu_store(dt, x_, x, M * K), tu_store(dt, W_, W, N * K), tu_store(dt, g_, g, K);
    tu_store(dt, be_, be, K), tu_store(dt, b_, b, N), tu_store(dt, dy_, dy, M * N);

    lnl_problem p;
    memset(&p, 0, sizeof p);
    p.rows = M, p.in_features = K, p.out_features = N, p.eps = sc->eps, p.dtype = dt;
    p.strategy = strat, p.threads = 2;
    double bound = bound_of(dt, sc->bound_f32, sc->bound_f64);
    lnl_status st = lnl_forward(&p, x_, g_, be_, W_, b_, buf[0], buf[1], buf[2], buf[3], NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "%s forward: %s (%s)", sc->name, lnl_status_string(st), lnl_last_error());
    for (int saved = 0; saved < 2; saved++) {
        void *outs[5] = {dx_, dg, dbe, dW_, db_};
        for (int i = 0; i < 5; i++) tu_fill_nan(dt, 0, outs[i], n[4 + i]);
        st = lnl_backward(&p, dy_, x_, g_, be_, W_, saved ? buf[1] : NULL, saved ? buf[2] : NULL,
                          saved ? buf[3] : NULL, dx_, dg, dbe, dW_, db_, NULL, 0);
        tu_expect(st == LNL_STATUS_SUCCESS, "%s backward: %s (%s)", sc->name, lnl_status_string(st),
                  lnl_last_error());
        double worst = 0;
        int worst_i = 0;
        for (int i = saved ? 4 : 0; i < NOUT; i++) {
            void *src = i < 4 ? buf[i] : outs[i - 4];
            if (i == 1 || i == 2)
                tu_load_acc(dt, got, src, n[i]);
            else
                tu_load(dt, got, src, n[i]);
            double e = tu_relerr(got, ref[i], n[i]);
            if (sc->gen == gen_constant && i == 5) { /* exact value 0: absolute rms */
                double ss = 0, zero_bound = dt == LNL_DTYPE_F64 ? 1e-8 : 1e-3;
                for (size_t k = 0; k < n[i]; k++) ss += got[k] * got[k];
                e = isfinite(ss) ? sqrt(ss / (double)n[i]) * (bound / zero_bound) : INFINITY;
            }
            tu_expect(e <= bound, "stress %s %s %s saved=%d: %s rel err %.3e > %.1e (%s)", sc->name,
                      tu_dtype_name(dt), tu_strategy_name(strat), saved, oname[i], e, bound, sc->why);
            if (!(e <= worst)) worst = e, worst_i = i;
        }
        printf("%-34s %s %-9s saved=%d worst %-14s %.2e (bound %.0e)\n", sc->name, tu_dtype_name(dt),
               tu_strategy_name(strat), saved, oname[worst_i], worst, bound);
    }
    void *all[] = {dx_, dg, dbe, dW_, db_, dy_, x_, W_, g_, be_, b_};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tu_gfree(all[i]);
    for (int i = 0; i < NOUT; i++) free(ref[i]), tu_gfree(buf[i]);
    free(x), free(g), free(be), free(W), free(b), free(dy), free(got);
}

/* Rows 1 (a NaN), 4 (+Inf) and 6 (-Inf) are poisoned; the other rows must not notice. */
static void run_nonfinite(lnl_dtype dt, lnl_strategy strat, int threads) {
    enum { NM = 8, NK = 37, NN = 11 };
    static const int bad_row[3] = {1, 4, 6};
    const double bad_val[3] = {NAN, INFINITY, -INFINITY};
    tu_rng r;
    tu_rng_seed(&r, 99);
    double x[NM * NK], W[NN * NK], g[NK], be[NK], b[NN], dy[NM * NN], ry[NM * NN], rdx[NM * NK];
    for (int i = 0; i < NM * NK; i++) x[i] = tu_round(dt, 3 + 2 * tu_randn(&r));
    for (int i = 0; i < NN * NK; i++) W[i] = tu_round(dt, tu_randn(&r) / sqrt((double)NK));
    for (int k = 0; k < NK; k++) g[k] = tu_round(dt, 1 + 0.3 * tu_randn(&r)), be[k] = tu_round(dt, 0.5 * tu_randn(&r));
    for (int i = 0; i < NN; i++) b[i] = tu_round(dt, 0.5 * tu_randn(&r));
    for (int i = 0; i < NM * NN; i++) dy[i] = tu_round(dt, tu_randn(&r));
    tu_ref_forward(NM, NK, NN, 1e-5, x, g, be, W, b, ry, NULL, NULL, NULL);
    tu_ref_backward(NM, NK, NN, 1e-5, dy, x, g, be, W, rdx, NULL, NULL, NULL, NULL);
    for (int i = 0; i < 3; i++) x[bad_row[i] * NK + 5 + 7 * i] = bad_val[i];
    size_t es = tu_dtype_size(dt);
    void *x_ = tu_galloc(sizeof x / 8 * es), *W_ = tu_galloc(sizeof W / 8 * es), *g_ = tu_galloc(NK * es);
    void *be_ = tu_galloc(NK * es), *b_ = tu_galloc(NN * es), *dy_ = tu_galloc(sizeof dy / 8 * es);
    void *y_ = tu_galloc(NM * NN * es), *dx_ = tu_galloc(NM * NK * es), *dW_ = tu_galloc(NN * NK * es);
    void *dg_ = tu_galloc(NK * es), *dbe_ = tu_galloc(NK * es), *db_ = tu_galloc(NN * es);
    tu_store(dt, x_, x, NM * NK), tu_store(dt, W_, W, NN * NK), tu_store(dt, g_, g, NK);
    tu_store(dt, be_, be, NK), tu_store(dt, b_, b, NN), tu_store(dt, dy_, dy, NM * NN);
    lnl_problem p;
    memset(&p, 0, sizeof p);
    p.rows = NM, p.in_features = NK, p.out_features = NN, p.eps = 1e-5, p.dtype = dt;
    p.strategy = strat, p.threads = threads;
    lnl_status st = lnl_forward(&p, x_, g_, be_, W_, b_, y_, NULL, NULL, NULL, NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "nonfinite forward: %s", lnl_status_string(st));
    st = lnl_backward(&p, dy_, x_, g_, be_, W_, NULL, NULL, NULL, dx_, dg_, dbe_, dW_, db_, NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "nonfinite backward: %s", lnl_status_string(st));
    double y[NM * NN], dx[NM * NK];
    tu_load(dt, y, y_, NM * NN);
    tu_load(dt, dx, dx_, NM * NK);
    double bound = bound_of(dt, 1e-5, 1e-11);
    for (int m = 0; m < NM; m++) {
        int bad = m == bad_row[0] || m == bad_row[1] || m == bad_row[2];
        int all_nonfinite_y = 1, all_nonfinite_dx = 1;
        for (int n = 0; n < NN; n++) all_nonfinite_y &= !isfinite(y[m * NN + n]);
        for (int k = 0; k < NK; k++) all_nonfinite_dx &= !isfinite(dx[m * NK + k]);
        if (bad) {
            tu_expect(all_nonfinite_y, "nonfinite %s %s threads=%d: row %d of y holds a finite value",
                      tu_dtype_name(dt), tu_strategy_name(strat), threads, m);
            tu_expect(all_nonfinite_dx, "nonfinite %s %s threads=%d: row %d of dx holds a finite value",
                      tu_dtype_name(dt), tu_strategy_name(strat), threads, m);
        } else {
            double ey = tu_relerr(y + m * NN, ry + m * NN, NN), ed = tu_relerr(dx + m * NK, rdx + m * NK, NK);
            tu_expect(ey <= bound && ed <= bound,
                      "nonfinite %s %s threads=%d: clean row %d disturbed (y %.2e, dx %.2e)",
                      tu_dtype_name(dt), tu_strategy_name(strat), threads, m, ey, ed);
        }
    }
    void *all[] = {x_, W_, g_, be_, b_, dy_, y_, dx_, dW_, dg_, dbe_, db_};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tu_gfree(all[i]);
}

int main(void) {
    static const lnl_dtype dts[] = {LNL_DTYPE_F32, LNL_DTYPE_F64, LNL_DTYPE_BF16, LNL_DTYPE_F16};
    static const lnl_strategy strats[] = {LNL_STRATEGY_REFERENCE, LNL_STRATEGY_UNFUSED, LNL_STRATEGY_FUSED,
                                          LNL_STRATEGY_AUTO};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int d = 0; d < 4; d++)
            for (int s = 0; s < 4; s++) run_stress(&cases[c], dts[d], strats[s]);
    for (int d = 0; d < 4; d++)
        for (int s = 0; s < 4; s++)
            for (int t = 1; t <= 2; t++) run_nonfinite(dts[d], strats[s], t);
    return tu_finish();
}
