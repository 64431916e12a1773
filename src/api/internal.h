/*
 * What the API layer hands to a backend once every argument is validated.
 * Backends never re-validate; they may assume sizes fit in int64_t products,
 * pointers that must be non-NULL are non-NULL, and no buffers overlap.
 */
#ifndef LNL_INTERNAL_H
#define LNL_INTERNAL_H

#include <stdarg.h>
#include "lnlinear.h"

typedef struct lnl_fwd_args {
    lnl_problem p;          /* copy; p.strategy already resolved (never AUTO), p.threads >= 1 */
    const void *x, *ln_weight, *ln_bias, *linear_weight, *linear_bias;
    void *y, *mean, *rstd, *ln_out;   /* mean/rstd: both or neither; ln_out optional */
    void *workspace;        /* may be NULL: the backend allocates (and frees) what it needs */
    size_t workspace_bytes; /* >= the backend's size query when workspace != NULL */
} lnl_fwd_args;

typedef struct lnl_bwd_args {
    lnl_problem p;          /* as above */
    const void *dy, *x, *ln_weight, *ln_bias, *linear_weight;
    const void *mean, *rstd; /* both or neither (NULL: recompute from x) */
    const void *ln_out;      /* optional: the normalized activation saved by the forward */
    void *dx, *dln_weight, *dln_bias, *dlinear_weight, *dlinear_bias; /* each optional */
    void *workspace;
    size_t workspace_bytes;
    const void *y, *linear_bias; /* optional (lnl_backward_ex): the forward's y and bias */
    const char *fn;              /* the entry point (lnl_backward or lnl_backward_ex), for messages */
} lnl_bwd_args;

/* Records this thread's last error (printf-style); returns status for tail calls. */
lnl_status lnl_set_error(lnl_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Threads a CPU call will use: p->threads, else LNL_NUM_THREADS, else online CPUs. */
int lnl_resolve_threads(const lnl_problem *p);

/* ---- CPU backend (src/cpu) ---- */
/* UNSUPPORTED (with a message) for combinations the CPU cannot serve. */
lnl_status lnl_cpu_check(const lnl_problem *p);
/* AUTO's choice for p on the CPU: LNL_STRATEGY_FUSED or LNL_STRATEGY_UNFUSED. */
lnl_strategy lnl_cpu_auto_strategy(const lnl_problem *p);
/* Workspace for p with p->strategy resolved and p->threads >= 1. */
size_t lnl_cpu_forward_workspace_size(const lnl_problem *p);
size_t lnl_cpu_backward_workspace_size(const lnl_problem *p);
lnl_status lnl_cpu_forward(const lnl_fwd_args *a);
lnl_status lnl_cpu_backward(const lnl_bwd_args *a);

/* The float64 oracle (src/cpu/reference.c): F32 and F64, single-threaded. */
size_t lnl_reference_forward_workspace_size(const lnl_problem *p);
size_t lnl_reference_backward_workspace_size(const lnl_problem *p);
void lnl_reference_forward(const lnl_fwd_args *a, void *workspace);
void lnl_reference_backward(const lnl_bwd_args *a, void *workspace);

/* ---- CUDA backend (src/cuda; stubs answering UNSUPPORTED in CPU-only builds) ---- */
lnl_status lnl_cuda_check(const lnl_problem *p);
/* AUTO's choice for p on CUDA, for the forward (backward = 0) or the backward: the two
 * may differ, since the backward needs only x, mean and rstd from the forward. */
lnl_strategy lnl_cuda_auto_strategy(const lnl_problem *p, int backward);
size_t lnl_cuda_forward_workspace_size(const lnl_problem *p);
size_t lnl_cuda_backward_workspace_size(const lnl_problem *p);
/* Whether p's backward (strategy resolved) takes the dx epilogue when given y. */
int lnl_cuda_backward_wants_y(const lnl_problem *p);
lnl_status lnl_cuda_forward(const lnl_fwd_args *a);
lnl_status lnl_cuda_backward(const lnl_bwd_args *a);

#endif /* LNL_INTERNAL_H */
