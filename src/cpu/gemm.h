/*
 * The packed GEMM engine: C[m,n] = A[m,k] @ B[k,n] (+ bias[n]), written once for
 * every transpose through element strides, with an optional LayerNorm applied to
 * A or B while packing: value = ((v - mean[row]) * rstd[row]) * gamma[col] + beta[col]
 * where row/col are the operand's own indices (A: i, p; B: p, j). A transformed
 * operand must be row-contiguous (column stride 1).
 */
#ifndef LNL_GEMM_H
#define LNL_GEMM_H

#include "cpu.h"

#define LNL_GEMM_DECLARE(SUF, T)                                                               \
    typedef struct lnl_xform_##SUF {                                                           \
        const T *mean, *rstd;  /* per operand row */                                           \
        const T *gamma, *beta; /* per operand column; NULL = ones / zeros */                   \
    } lnl_xform_##SUF;                                                                         \
    typedef struct lnl_gemm_##SUF {                                                            \
        int64_t m, n, k;                                                                       \
        const T *a;                                                                            \
        int64_t rsa, csa; /* A(i,p) = a[i*rsa + p*csa] */                                      \
        const lnl_xform_##SUF *xa;                                                             \
        const T *b;                                                                            \
        int64_t rsb, csb; /* B(p,j) = b[p*rsb + j*csb] */                                      \
        const lnl_xform_##SUF *xb;                                                             \
        T *c;                                                                                  \
        int64_t ldc;                                                                           \
        const T *bias; /* per column of C, or NULL */                                          \
        /* f32 only: A and/or B held in 16 bits of kind `half` (then a / b are unused),      \
         * widened while packing (gemm_pack_half.c); strides as above. */                     \
        const uint16_t *a_half, *b_half;                                                       \
        lnl_dtype half;                                                                        \
        /* f32 only: C's final values rounded into this 16-bit matrix (ldc, kind `half`),     \
         * c then holding float partial sums (gemm_loop_tmpl.h). */                           \
        uint16_t *c_half;                                                                      \
    } lnl_gemm_##SUF;                                                                          \
    void lnl_pack_a_##SUF(T *dst, const lnl_gemm_##SUF *g, int64_t i0, int64_t mc, int64_t p0, \
                          int64_t kc, int mr);                                                 \
    void lnl_pack_b_##SUF(T *dst, const lnl_gemm_##SUF *g, int64_t p0, int64_t kc, int64_t j0, \
                          int64_t nc, int nr);                                                 \
    /* This thread's share of the GEMM (split over m or n, never over k), using its own  \
     * packing buffers at ws + tid * ws_stride. No barrier inside. */                          \
    void lnl_gemm_##SUF##_run(const lnl_par *par, const lnl_gemm_##SUF *g, char *ws,          \
                              size_t ws_stride);

LNL_GEMM_DECLARE(f32, float)
LNL_GEMM_DECLARE(f64, double)

/* AVX2 packing of 6- or 12-row A / 16- or 32-column B slivers (the AVX2 and AVX-512
 * kernels' shapes); other cases go to the portable code. */
void lnl_pack_a_f32_avx2(float *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                         int64_t kc, int mr);
void lnl_pack_b_f32_avx2(float *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                         int64_t nc, int nr);

/* Packing from 16-bit operands (g->a_half / g->b_half): each sliver is widened in short
 * depth chunks and packed by the ISA's f32 routine, so the panels are what a float
 * operand holding the widened values would give. */
void lnl_pack_a_half(float *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                     int64_t kc, int mr);
void lnl_pack_b_half(float *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                     int64_t nc, int nr);
/* The same with row-contiguous B (x in dW, W in dy @ W) walked row by row across every full
 * sliver, widened where loaded (AVX2 + F16C); other B go to lnl_pack_b_half. */
void lnl_pack_b_half_avx2(float *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, int nr);

/* bf16 panels for the AVX-512 BF16 kernel (lnl_ukr_bf16): A slivers as [kc/2][mr][2],
 * B slivers as [kc/2][nr][2], a sliver every mr * KPAD(kc) (nr * KPAD(kc)) values, an odd
 * depth padded with zero; operands 16-bit (a_half, b_half), LayerNorm computed in float
 * and rounded to bf16 once. lnl_gemm_f32_run hands bf16 problems to lnl_gemm_bf16_run
 * where the ISA has the kernel. */
void lnl_pack_a_bf16(uint16_t *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc, int64_t p0,
                     int64_t kc, int mr);
void lnl_pack_b_bf16(uint16_t *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc, int64_t j0,
                     int64_t nc, int nr);
void lnl_pack_a_bf16_avx512(uint16_t *dst, const lnl_gemm_f32 *g, int64_t i0, int64_t mc,
                            int64_t p0, int64_t kc, int mr);
void lnl_pack_b_bf16_avx512(uint16_t *dst, const lnl_gemm_f32 *g, int64_t p0, int64_t kc,
                            int64_t j0, int64_t nc, int nr);
void lnl_gemm_bf16_run(const lnl_par *par, const lnl_gemm_f32 *g, char *ws, size_t ws_stride);

#endif /* LNL_GEMM_H */
