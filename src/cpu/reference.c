/*
 * REFERENCE strategy: the oracle every test compares against. Plain loops, every
 * sum in float64, any storage dtype, one thread. Written for obviousness, not
 * speed: a reader should be able to check each line against the formulas in
 * ../shared/guide/numerics.md.
 */
#include <math.h>
#include <string.h>

#include "half.h"
#include "internal.h"

/* Element i of a buffer of the problem's dtype, as double. */
static double load(const void *buf, lnl_dtype dt, size_t i) {
    switch (dt) {
    case LNL_DTYPE_F64: return ((const double *)buf)[i];
    case LNL_DTYPE_BF16:
    case LNL_DTYPE_F16: return (double)lnl_half_to_f32(((const uint16_t *)buf)[i], dt);
    default: return (double)((const float *)buf)[i];
    }
}
/* 16-bit values are rounded through float: a double rounding, off by one unit in the
 * last place only for values within 2^-29 relative of a tie, far below what any test of
 * a 16-bit result can see. */
static void store(void *buf, lnl_dtype dt, size_t i, double v) {
    switch (dt) {
    case LNL_DTYPE_F64: ((double *)buf)[i] = v; break;
    case LNL_DTYPE_BF16:
    case LNL_DTYPE_F16: ((uint16_t *)buf)[i] = lnl_f32_to_half((float)v, dt); break;
    default: ((float *)buf)[i] = (float)v; break;
    }
}
/* Optional parameters: NULL means the value `absent` everywhere. */
static double param(const void *buf, lnl_dtype dt, size_t i, double absent) {
    return buf ? load(buf, dt, i) : absent;
}
/* mean/rstd are in the accumulation type: double for F64, float otherwise. */
static double load_acc(const void *buf, lnl_dtype dt, size_t i) {
    return dt == LNL_DTYPE_F64 ? ((const double *)buf)[i] : (double)((const float *)buf)[i];
}
static void store_acc(void *buf, lnl_dtype dt, size_t i, double v) {
    if (dt == LNL_DTYPE_F64) ((double *)buf)[i] = v;
    else ((float *)buf)[i] = (float)v;
}

/* Biased two-pass statistics of row m of x, exactly as layer_norm defines them. */
static void row_stats(const void *x, lnl_dtype dt, size_t m, size_t K, double eps, double *mean,
                      double *rstd) {
    double sum = 0.0, sq = 0.0;
    for (size_t k = 0; k < K; k++) sum += load(x, dt, m * K + k);
    double mu = sum / (double)K;
    for (size_t k = 0; k < K; k++) {
        double d = load(x, dt, m * K + k) - mu;
        sq += d * d;
    }
    *mean = mu;
    *rstd = 1.0 / sqrt(sq / (double)K + eps);
}

size_t lnl_reference_forward_workspace_size(const lnl_problem *p) {
    return (size_t)p->in_features * sizeof(double); /* one normalized row */
}

/* The dtype of x, its parameters and their gradients: float32 with ln_float32. */
static lnl_dtype ln_dtype(const lnl_problem *p) { return p->ln_float32 ? LNL_DTYPE_F32 : p->dtype; }

void lnl_reference_forward(const lnl_fwd_args *a, void *workspace) {
    const lnl_dtype dt = a->p.dtype, lt = ln_dtype(&a->p);
    const size_t M = (size_t)a->p.rows, K = (size_t)a->p.in_features, N = (size_t)a->p.out_features;
    double *row = workspace; /* ln_out of the current row, in double */
    for (size_t m = 0; m < M; m++) {
        double mu, rs;
        row_stats(a->x, lt, m, K, a->p.eps, &mu, &rs);
        for (size_t k = 0; k < K; k++) {
            double xhat = (load(a->x, lt, m * K + k) - mu) * rs;
            row[k] = xhat * param(a->ln_weight, lt, k, 1.0) + param(a->ln_bias, lt, k, 0.0);
            if (a->ln_out) store(a->ln_out, dt, m * K + k, row[k]);
        }
        for (size_t n = 0; n < N; n++) {
            double acc = param(a->linear_bias, dt, n, 0.0);
            for (size_t k = 0; k < K; k++) acc += row[k] * load(a->linear_weight, dt, n * K + k);
            store(a->y, dt, m * N + n, acc);
        }
        if (a->mean) {
            store_acc(a->mean, dt, m, mu);
            store_acc(a->rstd, dt, m, rs);
        }
    }
}

/* Workspace layout of the backward, all double: dW accumulator [N*K], then
 * dgamma, dbeta [K] each, dbias [N], and the rows xhat, dxhat, ln_out [K] each. */
size_t lnl_reference_backward_workspace_size(const lnl_problem *p) {
    size_t K = (size_t)p->in_features, N = (size_t)p->out_features;
    return (N * K + 5 * K + N) * sizeof(double);
}

void lnl_reference_backward(const lnl_bwd_args *a, void *workspace) {
    const lnl_dtype dt = a->p.dtype, lt = ln_dtype(&a->p);
    const size_t M = (size_t)a->p.rows, K = (size_t)a->p.in_features, N = (size_t)a->p.out_features;
    double *dw = workspace, *dgamma = dw + N * K, *dbeta = dgamma + K, *dbias = dbeta + K;
    double *xhat = dbias + N, *dxhat = xhat + K, *lnrow = dxhat + K;
    memset(workspace, 0, lnl_reference_backward_workspace_size(&a->p));

    for (size_t m = 0; m < M; m++) {
        double mu, rs;
        if (a->mean) {
            mu = load_acc(a->mean, dt, m);
            rs = load_acc(a->rstd, dt, m);
        } else {
            row_stats(a->x, lt, m, K, a->p.eps, &mu, &rs);
        }
        for (size_t k = 0; k < K; k++) {
            xhat[k] = (load(a->x, lt, m * K + k) - mu) * rs;
            lnrow[k] = a->ln_out ? load(a->ln_out, dt, m * K + k)
                                 : xhat[k] * param(a->ln_weight, lt, k, 1.0) +
                                       param(a->ln_bias, lt, k, 0.0);
            dxhat[k] = 0.0;
        }
        /* dxhat = dy @ W (the gradient reaching the LayerNorm output); dW += dy^T lnrow. */
        for (size_t n = 0; n < N; n++) {
            double g = load(a->dy, dt, m * N + n);
            dbias[n] += g;
            for (size_t k = 0; k < K; k++) {
                dxhat[k] += g * load(a->linear_weight, dt, n * K + k);
                dw[n * K + k] += g * lnrow[k];
            }
        }
        double mean_g = 0.0, mean_gx = 0.0;
        for (size_t k = 0; k < K; k++) {
            dgamma[k] += dxhat[k] * xhat[k];
            dbeta[k] += dxhat[k];
            double g = dxhat[k] * param(a->ln_weight, lt, k, 1.0);
            mean_g += g;
            mean_gx += g * xhat[k];
        }
        mean_g /= (double)K;
        mean_gx /= (double)K;
        if (a->dx) {
            for (size_t k = 0; k < K; k++) {
                double g = dxhat[k] * param(a->ln_weight, lt, k, 1.0);
                store(a->dx, lt, m * K + k, rs * (g - mean_g - xhat[k] * mean_gx));
            }
        }
    }
    for (size_t k = 0; k < K; k++) {
        if (a->dln_weight) store(a->dln_weight, lt, k, dgamma[k]);
        if (a->dln_bias) store(a->dln_bias, lt, k, dbeta[k]);
    }
    for (size_t n = 0; n < N; n++) {
        if (a->dlinear_bias) store(a->dlinear_bias, dt, n, dbias[n]);
        if (a->dlinear_weight)
            for (size_t k = 0; k < K; k++) store(a->dlinear_weight, dt, n * K + k, dw[n * K + k]);
    }
}
