/*
 * Internal interface of the CPU backend: the run-time ISA table, the per-call
 * thread team, and the helpers every CPU file shares. Not installed.
 */
#ifndef LNL_CPU_H
#define LNL_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* ---- micro-kernels ----
 * c[MR x NR] (row-major, leading dimension ldc) receives the product of a packed
 * A sliver (kc columns of MR values) and a packed B sliver (kc rows of NR values).
 * accumulate != 0: c += ab. Otherwise c = ab, plus bias[0..NR) per column when
 * bias != NULL. Edge tiles use the same kernel on a scratch tile, so every output
 * element sees the same sequence of operations wherever it falls. */
typedef void (*lnl_ukr_f32)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                            int accumulate, const float *bias);
typedef void (*lnl_ukr_f64)(int64_t kc, const double *a, const double *b, double *c,
                            int64_t ldc, int accumulate, const double *bias);
/* bf16 panels (gemm.h), float C; kc is the depth in values (pairs: (kc + 1) / 2). With
 * c16 != NULL the finished tile (c + ab where accumulate, else ab + bias) is rounded to
 * bf16 into c16 (leading dimension ldc) and c is not written. */
typedef void (*lnl_ukr_bf16)(int64_t kc, const uint16_t *a, const uint16_t *b, float *c,
                             int64_t ldc, int accumulate, const float *bias, uint16_t *c16);

/* Packing routines (gemm.h describes them); the ISA table may replace the portable
 * ones with vector versions that produce the same bits. */
struct lnl_gemm_f32;
struct lnl_gemm_f64;
typedef void (*lnl_pack_a_f32_fn)(float *dst, const struct lnl_gemm_f32 *g, int64_t i0, int64_t mc,
                                  int64_t p0, int64_t kc, int mr);
typedef void (*lnl_pack_b_f32_fn)(float *dst, const struct lnl_gemm_f32 *g, int64_t p0, int64_t kc,
                                  int64_t j0, int64_t nc, int nr);
typedef void (*lnl_pack_a_f64_fn)(double *dst, const struct lnl_gemm_f64 *g, int64_t i0, int64_t mc,
                                  int64_t p0, int64_t kc, int mr);
typedef void (*lnl_pack_b_f64_fn)(double *dst, const struct lnl_gemm_f64 *g, int64_t p0, int64_t kc,
                                  int64_t j0, int64_t nc, int nr);
typedef void (*lnl_pack_a_bf16_fn)(uint16_t *dst, const struct lnl_gemm_f32 *g, int64_t i0,
                                   int64_t mc, int64_t p0, int64_t kc, int mr);
typedef void (*lnl_pack_b_bf16_fn)(uint16_t *dst, const struct lnl_gemm_f32 *g, int64_t p0,
                                   int64_t kc, int64_t j0, int64_t nc, int nr);

/* Register tile (mr x nr) and cache blocking (mc rows of A, kc depth, nc columns of B). */
typedef struct lnl_blocking {
    int mr, nr, mc, kc, nc;
} lnl_blocking;

typedef struct lnl_cpu_isa {
    const char *name;
    lnl_ukr_f32 ukr_f32;
    lnl_blocking blk_f32;
    lnl_ukr_f64 ukr_f64;
    lnl_blocking blk_f64;
    lnl_pack_a_f32_fn pack_a_f32;
    lnl_pack_b_f32_fn pack_b_f32;
    lnl_pack_a_f64_fn pack_a_f64;
    lnl_pack_b_f64_fn pack_b_f64;
    /* Tiny f32 forward and backward for the shapes they take (return 1), else NULL or 0. */
    int (*small_fwd_f32)(const lnl_fwd_args *a);
    int (*small_bwd_f32)(const lnl_bwd_args *a);
    /* Row statistics, bitwise equal to lnl_ln_stats_f32 (ln_rows.h). */
    void (*ln_stats_f32)(const float *x, int64_t k, float eps, float *mean, float *rstd);
    /* Backward row pass in one visit of the row, or NULL (then lnl_ln_dx_f32 and
     * lnl_ln_colsums_f32 run): dx (optional; bitwise equal to lnl_ln_dx_f32) and the
     * row's dxhat*xhat / dxhat terms written (first != 0) or added to pg / pb (each
     * optional). */
    void (*ln_dx_colsums_f32)(float *dx, float *pg, float *pb, const float *dxhat, const float *x,
                              int64_t k, float mean, float rstd, const float *gamma, int first);
    /* The same for a 16-bit x and dx (kind BF16 or F16), each dx value the rounding of
     * ln_dx_colsums_f32's on the widened row; set exactly where ln_dx_colsums_f32 is
     * (the backward relies on it). */
    void (*ln_dx_colsums_half)(uint16_t *dx, float *pg, float *pb, const float *dxhat,
                               const uint16_t *x, int64_t k, float mean, float rstd,
                               const float *gamma, int first, lnl_dtype kind);
    /* 16-bit (bf16 / f16) runs to float and back (half.h): bitwise the portable ones. */
    void (*half_to_f32)(float *dst, const uint16_t *src, int64_t n, lnl_dtype kind);
    void (*f32_to_half)(uint16_t *dst, const float *src, int64_t n, lnl_dtype kind);
    /* B panels from a 16-bit operand for the float engine, bitwise lnl_pack_b_half's
     * (NULL: lnl_pack_b_half itself). */
    lnl_pack_b_f32_fn pack_b_half;
    /* bf16 problems' GEMMs on bf16 panels (NULL: they widen to float instead). */
    lnl_ukr_bf16 ukr_bf16;
    lnl_blocking blk_bf16;
    lnl_pack_a_bf16_fn pack_a_bf16;
    lnl_pack_b_bf16_fn pack_b_bf16;
} lnl_cpu_isa;

/* Largest mr * nr of any kernel: sizes the scratch tile for edges. */
#define LNL_UKR_MAX_TILE (16 * 32)

void lnl_ukr_f32_scalar(int64_t, const float *, const float *, float *, int64_t, int, const float *);
void lnl_ukr_f64_scalar(int64_t, const double *, const double *, double *, int64_t, int, const double *);
void lnl_ukr_f32_avx2(int64_t, const float *, const float *, float *, int64_t, int, const float *);
void lnl_ukr_f64_avx2(int64_t, const double *, const double *, double *, int64_t, int, const double *);
void lnl_ukr_f32_avx512(int64_t, const float *, const float *, float *, int64_t, int, const float *);
void lnl_ukr_f64_avx512(int64_t, const double *, const double *, double *, int64_t, int, const double *);
void lnl_ukr_bf16_avx512(int64_t, const uint16_t *, const uint16_t *, float *, int64_t, int, const float *,
                         uint16_t *);

/* The best kernels this CPU runs, lowered by LNL_CPU_ISA=scalar|avx2|avx512|avx512bf16;
 * chosen once per process. */
const lnl_cpu_isa *lnl_cpu_isa_get(void);
/* "scalar", "avx2", "avx512" or "avx512bf16": which kernels run (for benchmarks and tests). */
const char *lnl_cpu_isa_name(void);

/* ---- threads: one team per call, SPMD style ---- */
typedef struct lnl_team lnl_team;
typedef struct lnl_par {
    int tid, nth;
    lnl_team *team;
} lnl_par;
typedef void (*lnl_par_fn)(const lnl_par *par, void *ctx);

/* Runs fn on up to nth threads (the caller is tid 0). If a worker cannot be
 * started, fewer run: the partitions read par->nth, and results do not depend on it. */
void lnl_par_run(int nth, lnl_par_fn fn, void *ctx);
void lnl_par_barrier(const lnl_par *par);
/* This thread's share [*begin, *end) of [0, n), cut at multiples of align. */
void lnl_par_range(const lnl_par *par, int64_t n, int64_t align, int64_t *begin, int64_t *end);

/* ---- workspace carving ---- */
#define LNL_WS_ALIGN 64
static inline size_t lnl_ws_round(size_t bytes) {
    return (bytes + LNL_WS_ALIGN - 1) & ~(size_t)(LNL_WS_ALIGN - 1);
}
/* Hands out aligned slices of one buffer; with base == NULL it only counts. */
typedef struct lnl_carver {
    char *base;
    size_t used;
} lnl_carver;
static inline void *lnl_carve(lnl_carver *cv, size_t bytes) {
    void *p = cv->base ? cv->base + cv->used : NULL;
    cv->used += lnl_ws_round(bytes);
    return p;
}

/* Problems up to LNL_TINY_MAX_MNK multiply-adds (and K <= LNL_TINY_MAX_K) take the
 * direct path (small.c): no workspace, no threads, no allocation. Below
 * LNL_SERIAL_MAX_MNK the GEMM path runs on one thread: starting workers costs more. */
#define LNL_TINY_MAX_MNK 65536.0
#define LNL_TINY_MAX_K 2048
#define LNL_SERIAL_MAX_MNK 2000000.0
int lnl_cpu_is_tiny(const lnl_problem *p); /* never for 16-bit problems */
/* p->threads, or 1 when the problem is too small to pay for threads. */
int lnl_cpu_threads(const lnl_problem *p);

/* Where each scratch array of one call lives (NULL: not part of this layout). */
typedef struct lnl_cpu_ws {
    void *mean, *rstd; /* statistics when the caller did not supply/request them */
    void *lnout;       /* UNFUSED: the whole M x K normalized activation */
    void *dxhat;       /* backward: rb x K (FUSED) or M x K (UNFUSED) */
    void *pg, *pb;     /* backward: per-row-block partial dgamma / dbeta, K each, or K
                        * per group of LNL_BWD_GROUP rows with ln_dx_colsums_f32 */
    char *gemm;        /* packing buffers, gemm_stride bytes per thread */
    size_t gemm_stride;
    int64_t rb;        /* backward row block */
    /* 16-bit problems only (float arithmetic on 16-bit storage, half.h): */
    float *rows;       /* per thread: two float rows of K (x widened, a result before rounding) */
    float *params;     /* gamma, beta (K each) and linear_bias (N), widened */
    float *c32;        /* the GEMM result before rounding: y (M x N) or dW (N x K) */
    float *xblk;       /* backward, portable row pass: x of one row block, widened */
    float *acc;        /* backward: dgamma, dbeta (K each) and dbias (N) before rounding */
} lnl_cpu_ws;
/* Carve base (NULL: only count) for p; returns the bytes needed. */
size_t lnl_cpu_fwd_layout(const lnl_problem *p, char *base, lnl_cpu_ws *w);
size_t lnl_cpu_bwd_layout(const lnl_problem *p, char *base, lnl_cpu_ws *w);

void lnl_cpu_forward_f32(const lnl_fwd_args *a, const lnl_cpu_ws *w);
void lnl_cpu_forward_f64(const lnl_fwd_args *a, const lnl_cpu_ws *w);
void lnl_cpu_backward_f32(const lnl_bwd_args *a, const lnl_cpu_ws *w);
void lnl_cpu_backward_f64(const lnl_bwd_args *a, const lnl_cpu_ws *w);
void lnl_cpu_small_forward_f32(const lnl_fwd_args *a);
void lnl_cpu_small_forward_f64(const lnl_fwd_args *a);
int lnl_cpu_small_forward_f32_avx2(const lnl_fwd_args *a);
int lnl_cpu_small_backward_f32_avx2(const lnl_bwd_args *a);
void lnl_ln_stats_f32_avx2(const float *x, int64_t k, float eps, float *mean, float *rstd);
void lnl_ln_dx_colsums_f32_avx2(float *dx, float *pg, float *pb, const float *dxhat,
                                const float *x, int64_t k, float mean, float rstd,
                                const float *gamma, int first);
void lnl_ln_dx_colsums_half_avx2(uint16_t *dx, float *pg, float *pb, const float *dxhat,
                                 const uint16_t *x, int64_t k, float mean, float rstd,
                                 const float *gamma, int first, lnl_dtype kind);
void lnl_cpu_small_backward_f32(const lnl_bwd_args *a);
void lnl_cpu_small_backward_f64(const lnl_bwd_args *a);

/* Rows per block of the fused backward (and of the unfused row pass, so both sum
 * dgamma/dbeta in the same order). Depends on K only, never on the thread count. */
int64_t lnl_cpu_row_block(int64_t k);
/* With ln_dx_colsums_f32, dgamma/dbeta are summed per group of this many rows of a
 * block (one thread per group), then over the groups in order: the order depends on
 * the block and the group, never on the thread count. */
#define LNL_BWD_GROUP 32

/* Bytes of one thread's packing buffers for an m x n x k GEMM with blocking b. */
size_t lnl_gemm_thread_ws(const lnl_blocking *b, size_t elem, int64_t m, int64_t n, int64_t k);

#endif /* LNL_CPU_H */
