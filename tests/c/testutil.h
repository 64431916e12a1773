/*
 * Helpers shared by the C tests: checking macros, a seeded RNG, bit-exact
 * bf16/f16 conversion, guarded and poisoned buffers, the relative-norm error,
 * and a float64 reference of LayerNorm+Linear written independently of the
 * library (plain loops, double accumulation) so that the library's own
 * REFERENCE strategy is checked too.
 */
#ifndef LNL_TESTUTIL_H
#define LNL_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lnlinear.h"

/* Aborts the test program, naming file and line. For setup errors, not for results. */
#define TU_CHECK(cond)                                                                    \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);      \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

/* Counts one result check; prints the formatted message when it fails. */
void tu_expect(int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
extern long tu_passed, tu_failed;
/* Prints the final "N passed, N failed" line; returns the process exit code. */
int tu_finish(void);

/* ---- RNG: splitmix64 seeded, Box-Muller normals ---- */
typedef struct {
    uint64_t s;
    int have_spare;
    double spare;
} tu_rng;
void tu_rng_seed(tu_rng *r, uint64_t seed);
uint64_t tu_rng_u64(tu_rng *r);
double tu_uniform(tu_rng *r); /* [0, 1) */
double tu_randn(tu_rng *r);
/* A stateless hash of (a, b) to a standard normal-ish value (for huge tensors). */
double tu_hash_normal(uint64_t a, uint64_t b);

/* ---- dtypes ---- */
size_t tu_dtype_size(lnl_dtype dt);
size_t tu_acc_size(lnl_dtype dt); /* mean/rstd element: double for F64, float otherwise */
const char *tu_dtype_name(lnl_dtype dt);
const char *tu_strategy_name(lnl_strategy s);
uint16_t tu_f32_to_bf16(float f);
float tu_bf16_to_f32(uint16_t h);
uint16_t tu_f32_to_f16(float f);
float tu_f16_to_f32(uint16_t h);
/* The value v rounded to the nearest value of dtype dt (double for F64). */
double tu_round(lnl_dtype dt, double v);
void tu_store(lnl_dtype dt, void *dst, const double *src, size_t n);
void tu_load(lnl_dtype dt, double *dst, const void *src, size_t n);
/* Stores/loads in the accumulation type of dt (mean/rstd). */
void tu_store_acc(lnl_dtype dt, void *dst, const double *src, size_t n);
void tu_load_acc(lnl_dtype dt, double *dst, const void *src, size_t n);
/* Fills n elements of dtype dt (or of its accumulation type when acc) with NaN. */
void tu_fill_nan(lnl_dtype dt, int acc, void *dst, size_t n);

/* ---- guarded host buffers: TU_GUARD pattern bytes follow every allocation ---- */
#define TU_GUARD 64
void *tu_galloc(size_t bytes);
int tu_guard_ok(const void *p, size_t bytes);
void tu_gfree(void *p);
/* The byte pattern written after buffers (also used on the device). */
const unsigned char *tu_guard_pattern(void);

/* ||out - ref|| / ||ref|| (or the rms of out when ref is all zeros);
 * +Inf when out holds a NaN or Inf. */
double tu_relerr(const double *out, const double *ref, size_t n);

/* ---- float64 reference: ln_weight/ln_bias/linear_bias NULL mean ones/zeros/zeros.
 * Any output pointer may be NULL. ---- */
void tu_ref_forward(int64_t M, int64_t K, int64_t N, double eps, const double *x,
                    const double *ln_weight, const double *ln_bias, const double *W,
                    const double *b, double *y, double *mean, double *rstd, double *ln_out);
void tu_ref_backward(int64_t M, int64_t K, int64_t N, double eps, const double *dy,
                     const double *x, const double *ln_weight, const double *ln_bias,
                     const double *W, double *dx, double *dln_weight, double *dln_bias,
                     double *dW, double *db);

#endif /* LNL_TESTUTIL_H */
