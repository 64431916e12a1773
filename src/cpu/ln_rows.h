/* LayerNorm row kernels shared by every CPU strategy, one instance per dtype. All
 * sums go through fixed lanes and fixed chunks, so results never depend on threads. */
#ifndef LNL_LN_ROWS_H
#define LNL_LN_ROWS_H

#include <stdint.h>

#define LNL_LN_ROWS_DECLARE(SUF, T)                                                            \
    /* Two-pass statistics of one row: mean, then rstd = 1/sqrt(biased var + eps). */          \
    void lnl_ln_stats_##SUF(const T *x, int64_t k, T eps, T *mean, T *rstd);                   \
    /* out = ((x - mean) * rstd) * gamma + beta, gamma/beta NULL = ones/zeros. */               \
    void lnl_ln_apply_##SUF(T *out, const T *x, int64_t k, T mean, T rstd, const T *gamma,     \
                            const T *beta);                                                    \
    /* dx of one row from dxhat (the gradient reaching the LayerNorm output). */               \
    void lnl_ln_dx_##SUF(T *dx, const T *dxhat, const T *x, int64_t k, T mean, T rstd,         \
                         const T *gamma);                                                      \
    /* Columns [k0,k1) of sum over nrows rows of dxhat*xhat (pg) and dxhat (pb), each       \
     * optional, overwriting pg/pb. dxhat rows have leading dimension ldd, x rows k. */        \
    void lnl_ln_colsums_##SUF(T *pg, T *pb, const T *dxhat, int64_t ldd, const T *x,           \
                              int64_t k, int64_t nrows, const T *mean, const T *rstd,          \
                              int64_t k0, int64_t k1);                                         \
    /* out[n0..n1) = column sums of a [rows, ld], summed per block of rb rows in order. */   \
    void lnl_colsum_##SUF(T *out, const T *a, int64_t rows, int64_t ld, int64_t n0,            \
                          int64_t n1, int64_t rb);

LNL_LN_ROWS_DECLARE(f32, float)
LNL_LN_ROWS_DECLARE(f64, double)

#endif /* LNL_LN_ROWS_H */
