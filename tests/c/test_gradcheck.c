/*
 * Finite-difference check of all five gradients (F64, tiny shapes) for the
 * REFERENCE, FUSED and UNFUSED strategies: loss = sum(y * r) with random r, so
 * dloss/dinput must equal lnl_backward with dy = r. Central differences with
 * step h have truncation error O(h^2) and rounding error O(eps_f64 / h); with
 * h = 1e-5 and values of order 1 both are below 1e-8, so a bound of 1e-6 on
 * the per-tensor relative norm error leaves room and still catches any wrong
 * term (those give errors of order 1e-1).
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

typedef struct {
    int64_t M, K, N;
} gshape;

enum { T_X, T_LNW, T_LNB, T_W, T_B, NT };
static const char *tname[NT] = {"x", "ln_weight", "ln_bias", "linear_weight", "linear_bias"};

static double loss(const lnl_problem *p, double *t[NT], const double *r, double *y) {
    lnl_status st = lnl_forward(p, t[T_X], t[T_LNW], t[T_LNB], t[T_W], t[T_B], y, NULL, NULL, NULL, NULL, 0);
    TU_CHECK(st == LNL_STATUS_SUCCESS);
    double l = 0;
    for (int64_t i = 0; i < p->rows * p->out_features; i++) l += y[i] * r[i];
    return l;
}

static void gradcheck(const gshape *s, lnl_strategy strat, int use_saved, uint64_t seed) {
    lnl_problem p;
    memset(&p, 0, sizeof p);
    p.rows = s->M, p.in_features = s->K, p.out_features = s->N;
    p.eps = 1e-5, p.dtype = LNL_DTYPE_F64, p.strategy = strat, p.threads = 1;
    size_t n[NT] = {(size_t)(s->M * s->K), (size_t)s->K, (size_t)s->K, (size_t)(s->N * s->K), (size_t)s->N};
    double *t[NT], *g[NT], *num[NT];
    tu_rng rng;
    tu_rng_seed(&rng, seed);
    for (int i = 0; i < NT; i++) {
        t[i] = tu_galloc(n[i] * 8);
        g[i] = tu_galloc(n[i] * 8);
        num[i] = tu_galloc(n[i] * 8);
        for (size_t j = 0; j < n[i]; j++) {
            double z = tu_randn(&rng);
            t[i][j] = i == T_X ? 3 + 2 * z : i == T_LNW ? 1 + 0.3 * z : 0.5 * z;
        }
    }
    size_t my = (size_t)(s->M * s->N);
    double *r = tu_galloc(my * 8), *y = tu_galloc(my * 8);
    double *mean = tu_galloc((size_t)s->M * 8), *rstd = tu_galloc((size_t)s->M * 8);
    double *lnout = tu_galloc(n[T_X] * 8);
    for (size_t j = 0; j < my; j++) r[j] = tu_randn(&rng);

    lnl_status st = lnl_forward(&p, t[T_X], t[T_LNW], t[T_LNB], t[T_W], t[T_B], y, mean, rstd, lnout, NULL, 0);
    TU_CHECK(st == LNL_STATUS_SUCCESS);
    st = lnl_backward(&p, r, t[T_X], t[T_LNW], t[T_LNB], t[T_W], use_saved ? mean : NULL,
                      use_saved ? rstd : NULL, use_saved ? lnout : NULL, g[T_X], g[T_LNW], g[T_LNB],
                      g[T_W], g[T_B], NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "gradcheck backward %s: %s (%s)", tu_strategy_name(strat),
              lnl_status_string(st), lnl_last_error());

    const double h = 1e-5;
    for (int i = 0; i < NT; i++) {
        for (size_t j = 0; j < n[i]; j++) {
            double keep = t[i][j];
            t[i][j] = keep + h;
            double lp = loss(&p, t, r, y);
            t[i][j] = keep - h;
            double lm = loss(&p, t, r, y);
            t[i][j] = keep;
            num[i][j] = (lp - lm) / (2 * h);
        }
        double e = tu_relerr(g[i], num[i], n[i]);
        tu_expect(e <= 1e-6, "gradcheck %s M=%lld K=%lld N=%lld saved=%d: d%s rel err %.3e vs finite differences",
                  tu_strategy_name(strat), (long long)s->M, (long long)s->K, (long long)s->N, use_saved,
                  tname[i], e);
        printf("%-9s M=%lld K=%lld N=%lld saved=%d d%-13s rel err %.2e\n", tu_strategy_name(strat),
               (long long)s->M, (long long)s->K, (long long)s->N, use_saved, tname[i], e);
    }
    for (int i = 0; i < NT; i++) {
        tu_gfree(t[i]);
        tu_gfree(g[i]);
        tu_gfree(num[i]);
    }
    tu_gfree(r), tu_gfree(y), tu_gfree(mean), tu_gfree(rstd), tu_gfree(lnout);
}

int main(void) {
    static const gshape shapes[] = {{3, 5, 4}, {2, 1, 3}, {1, 7, 1}, {4, 3, 2}};
    static const lnl_strategy strats[] = {LNL_STRATEGY_REFERENCE, LNL_STRATEGY_FUSED, LNL_STRATEGY_UNFUSED};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t k = 0; k < 3; k++)
            for (int saved = 0; saved < 2; saved++) gradcheck(&shapes[s], strats[k], saved, 17 + s * 3 + k);
    return tu_finish();
}
