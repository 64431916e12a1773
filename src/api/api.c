/* The public entry points: validate every argument, resolve AUTO and the thread
 * count, then hand one lnl_fwd_args / lnl_bwd_args to the CPU or CUDA backend.
 * Nothing is written to a caller's buffer until every check has passed. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "validate.h"

/* The default thread count is read once: sysconf() reads sysfs, several
 * microseconds that a small problem cannot afford on every call. */
static int default_threads;
static pthread_once_t default_threads_once = PTHREAD_ONCE_INIT;

static void init_default_threads(void) {
    const char *env = getenv("LNL_NUM_THREADS");
    long v = env ? strtol(env, NULL, 10) : 0;
    if (v <= 0 || v > 1024) v = sysconf(_SC_NPROCESSORS_ONLN);
    default_threads = v > 0 ? (int)(v < 1024 ? v : 1024) : 1;
}

int lnl_resolve_threads(const lnl_problem *p) {
    if (p->threads > 0) return p->threads;
    pthread_once(&default_threads_once, init_default_threads);
    return default_threads;
}

/* p with AUTO resolved for the forward (backward = 0) or the backward, and the thread
 * count fixed: what backends see. */
static lnl_problem resolved(const lnl_problem *p, int backward) {
    lnl_problem r = *p;
    r.threads = p->device == LNL_DEVICE_CPU ? lnl_resolve_threads(p) : 1;
    if (r.strategy == LNL_STRATEGY_AUTO)
        r.strategy = p->device == LNL_DEVICE_CPU ? lnl_cpu_auto_strategy(&r)
                                                 : lnl_cuda_auto_strategy(&r, backward);
    return r;
}

lnl_status lnl_check(const lnl_problem *p) { return lnl_validate_and_check("lnl_check", p); }

lnl_strategy lnl_resolve_strategy(const lnl_problem *p) {
    if (lnl_validate_problem("lnl_resolve_strategy", p) != LNL_STATUS_SUCCESS)
        return LNL_STRATEGY_AUTO;
    return resolved(p, 0).strategy;
}

lnl_strategy lnl_resolve_backward_strategy(const lnl_problem *p) {
    if (lnl_validate_problem("lnl_resolve_backward_strategy", p) != LNL_STATUS_SUCCESS)
        return LNL_STRATEGY_AUTO;
    return resolved(p, 1).strategy;
}

size_t lnl_saved_bytes(const lnl_problem *p, int keep_ln_out) {
    if (lnl_validate_problem("lnl_saved_bytes", p) != LNL_STATUS_SUCCESS) return 0;
    size_t stats = 2 * (size_t)p->rows * lnl_acc_size(p->dtype);
    size_t act = (size_t)p->rows * (size_t)p->in_features * lnl_dtype_size(p->dtype);
    return stats + (keep_ln_out ? act : 0);
}

size_t lnl_forward_workspace_size(const lnl_problem *p) {
    if (lnl_validate_and_check("lnl_forward_workspace_size", p) != LNL_STATUS_SUCCESS) return 0;
    lnl_problem r = resolved(p, 0);
    return r.device == LNL_DEVICE_CPU ? lnl_cpu_forward_workspace_size(&r)
                                      : lnl_cuda_forward_workspace_size(&r);
}

size_t lnl_backward_workspace_size(const lnl_problem *p) {
    if (lnl_validate_and_check("lnl_backward_workspace_size", p) != LNL_STATUS_SUCCESS) return 0;
    lnl_problem r = resolved(p, 1);
    return r.device == LNL_DEVICE_CPU ? lnl_cpu_backward_workspace_size(&r)
                                      : lnl_cuda_backward_workspace_size(&r);
}

static lnl_status require(const char *fn, const void *ptr, const char *name) {
    if (ptr) return LNL_STATUS_SUCCESS;
    return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
}

static lnl_status both_or_neither(const char *fn, const void *mean, const void *rstd) {
    if ((mean == NULL) == (rstd == NULL)) return LNL_STATUS_SUCCESS;
    return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT,
                         "%s: mean and rstd must both be given or both be NULL (%s is NULL)", fn,
                         mean ? "rstd" : "mean");
}

static lnl_status check_workspace(const char *fn, const void *ws, size_t have, size_t need) {
    if (!ws || have >= need) return LNL_STATUS_SUCCESS;
    return lnl_set_error(LNL_STATUS_WORKSPACE_TOO_SMALL,
                         "%s: workspace_bytes is %zu, this problem needs %zu", fn, have, need);
}

/* Extents of the five kinds of buffer, in bytes. */
/* The LayerNorm side (x, its parameters and their gradients: mk_ln, k, ln_elem) is float32
 * with ln_float32, in dtype otherwise; ln_out (mk) is always in dtype. */
typedef struct extents {
    size_t mk, mk_ln, mn, nk, k, n, m_acc, elem, ln_elem, acc;
} extents;

static extents extents_of(const lnl_problem *p) {
    extents e;
    e.elem = lnl_dtype_size(p->dtype);
    e.ln_elem = p->ln_float32 ? sizeof(float) : e.elem;
    e.acc = lnl_acc_size(p->dtype);
    size_t M = (size_t)p->rows, K = (size_t)p->in_features, N = (size_t)p->out_features;
    e.mk = M * K * e.elem;
    e.mk_ln = M * K * e.ln_elem;
    e.mn = M * N * e.elem;
    e.nk = N * K * e.elem;
    e.k = K * e.ln_elem;
    e.n = N * e.elem;
    e.m_acc = M * e.acc;
    return e;
}

lnl_status lnl_forward(const lnl_problem *p, const void *x, const void *ln_weight,
                       const void *ln_bias, const void *linear_weight, const void *linear_bias,
                       void *y, void *mean, void *rstd, void *ln_out, void *workspace,
                       size_t workspace_bytes) {
    static const char fn[] = "lnl_forward";
    lnl_status s = lnl_validate_and_check(fn, p);
    if (s) return s;
    if ((s = both_or_neither(fn, mean, rstd))) return s;
    if ((s = require(fn, linear_weight, "linear_weight"))) return s;
    if (p->rows > 0) {
        if ((s = require(fn, x, "x")) || (s = require(fn, y, "y"))) return s;
    }
    lnl_fwd_args a = {resolved(p, 0), x, ln_weight, ln_bias, linear_weight, linear_bias,
                      y, mean, rstd, ln_out, workspace, workspace_bytes};
    size_t need = a.p.device == LNL_DEVICE_CPU ? lnl_cpu_forward_workspace_size(&a.p)
                                               : lnl_cuda_forward_workspace_size(&a.p);
    if ((s = check_workspace(fn, workspace, workspace_bytes, need))) return s;
    extents e = extents_of(p);
    const lnl_buffer b[] = {
        {"x", x, e.mk_ln, e.ln_elem, 0},
        {"ln_weight", ln_weight, e.k, e.ln_elem, 0},
        {"ln_bias", ln_bias, e.k, e.ln_elem, 0},
        {"linear_weight", linear_weight, e.nk, e.elem, 0},
        {"linear_bias", linear_bias, e.n, e.elem, 0},
        {"y", y, e.mn, e.elem, 1},
        {"mean", mean, e.m_acc, e.acc, 1},
        {"rstd", rstd, e.m_acc, e.acc, 1},
        {"ln_out", ln_out, e.mk, e.elem, 1},
        {"workspace", workspace, workspace ? need : 0, 1, 1},
    };
    if ((s = lnl_validate_buffers(fn, b, (int)(sizeof b / sizeof b[0])))) return s;
    if (p->rows == 0) return LNL_STATUS_SUCCESS; /* empty batch: nothing to write */
    return a.p.device == LNL_DEVICE_CPU ? lnl_cpu_forward(&a) : lnl_cuda_forward(&a);
}

/* lnl_backward and lnl_backward_ex: fn names the entry point in messages. */
static lnl_status backward_checked(const char *fn, const lnl_problem *p, const lnl_backward_args *g) {
    lnl_status s = lnl_validate_and_check(fn, p);
    if (s) return s;
    if ((s = both_or_neither(fn, g->mean, g->rstd))) return s;
    if ((s = require(fn, g->linear_weight, "linear_weight"))) return s;
    if (p->rows > 0) {
        if ((s = require(fn, g->dy, "dy")) || (s = require(fn, g->x, "x"))) return s;
    }
    if (g->dln_weight && !g->ln_weight)
        return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT,
                             "%s: dln_weight requested but ln_weight is NULL (absent parameter)", fn);
    if (g->dln_bias && !g->ln_bias)
        return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT,
                             "%s: dln_bias requested but ln_bias is NULL (absent parameter)", fn);
    /* dlinear_bias needs no check: the bias gradient (the column sums of dy) does not
     * depend on linear_bias, which only the dx epilogue reads, and only with y. */
    lnl_bwd_args a = {resolved(p, 1), g->dy, g->x, g->ln_weight, g->ln_bias, g->linear_weight,
                      g->mean, g->rstd, g->ln_out, g->dx, g->dln_weight, g->dln_bias,
                      g->dlinear_weight, g->dlinear_bias, g->workspace, g->workspace_bytes,
                      g->y, g->y ? g->linear_bias : NULL, fn};
    size_t need = a.p.device == LNL_DEVICE_CPU ? lnl_cpu_backward_workspace_size(&a.p)
                                               : lnl_cuda_backward_workspace_size(&a.p);
    if ((s = check_workspace(fn, g->workspace, g->workspace_bytes, need))) return s;
    extents e = extents_of(p);
    const lnl_buffer b[] = {
        {"dy", g->dy, e.mn, e.elem, 0},
        {"x", g->x, e.mk_ln, e.ln_elem, 0},
        {"ln_weight", g->ln_weight, e.k, e.ln_elem, 0},
        {"ln_bias", g->ln_bias, e.k, e.ln_elem, 0},
        {"linear_weight", g->linear_weight, e.nk, e.elem, 0},
        {"mean", g->mean, e.m_acc, e.acc, 0},
        {"rstd", g->rstd, e.m_acc, e.acc, 0},
        {"ln_out", g->ln_out, e.mk, e.elem, 0},
        {"y", g->y, e.mn, e.elem, 0},
        {"linear_bias", a.linear_bias, e.n, e.elem, 0},
        {"dx", g->dx, e.mk_ln, e.ln_elem, 1},
        {"dln_weight", g->dln_weight, e.k, e.ln_elem, 1},
        {"dln_bias", g->dln_bias, e.k, e.ln_elem, 1},
        {"dlinear_weight", g->dlinear_weight, e.nk, e.elem, 1},
        {"dlinear_bias", g->dlinear_bias, e.n, e.elem, 1},
        {"workspace", g->workspace, g->workspace ? need : 0, 1, 1},
    };
    if ((s = lnl_validate_buffers(fn, b, (int)(sizeof b / sizeof b[0])))) return s;
    if (!g->dx && !g->dln_weight && !g->dln_bias && !g->dlinear_weight && !g->dlinear_bias)
        return LNL_STATUS_SUCCESS; /* nothing requested */
    return a.p.device == LNL_DEVICE_CPU ? lnl_cpu_backward(&a) : lnl_cuda_backward(&a);
}

lnl_status lnl_backward(const lnl_problem *p, const void *dy, const void *x, const void *ln_weight,
                        const void *ln_bias, const void *linear_weight, const void *mean,
                        const void *rstd, const void *ln_out, void *dx, void *dln_weight,
                        void *dln_bias, void *dlinear_weight, void *dlinear_bias, void *workspace,
                        size_t workspace_bytes) {
    const lnl_backward_args g = {dy, x, ln_weight, ln_bias, linear_weight, mean, rstd, ln_out,
                                 dx, dln_weight, dln_bias, dlinear_weight, dlinear_bias,
                                 workspace, workspace_bytes, NULL, NULL};
    return backward_checked("lnl_backward", p, &g);
}

lnl_status lnl_backward_ex(const lnl_problem *p, const lnl_backward_args *args) {
    if (!args)
        return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT, "lnl_backward_ex: args is NULL");
    return backward_checked("lnl_backward_ex", p, args);
}

int lnl_backward_wants_y(const lnl_problem *p) {
    if (lnl_validate_and_check("lnl_backward_wants_y", p) != LNL_STATUS_SUCCESS) return 0;
    lnl_problem r = resolved(p, 1);
    return r.device == LNL_DEVICE_CUDA && lnl_cuda_backward_wants_y(&r);
}
