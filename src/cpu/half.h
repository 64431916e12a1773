/*
 * 16-bit storage on the CPU (bf16 and f16). The CPU never computes in 16 bits: values
 * are widened to float where they are read (while packing GEMM panels, or a row at a
 * time for the LayerNorm row passes), every sum runs in float, and each output is
 * rounded once, to nearest even, where it is stored. A `kind` is LNL_DTYPE_BF16 or
 * LNL_DTYPE_F16.
 */
#ifndef LNL_HALF_H
#define LNL_HALF_H

#include <stdint.h>
#include <string.h>

#include "lnlinear.h"

static inline int lnl_is_half(lnl_dtype dt) { return dt == LNL_DTYPE_BF16 || dt == LNL_DTYPE_F16; }

static inline float lnl_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint32_t lnl_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* bf16 is float's upper half: widening is exact. */
static inline float lnl_bf16_to_f32(uint16_t h) { return lnl_bits_f32((uint32_t)h << 16); }

/* Round to nearest even on the lower 16 bits; a NaN stays a (quiet) NaN. */
static inline uint16_t lnl_f32_to_bf16(float f) {
    uint32_t u = lnl_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Every f16 is a float. */
static inline float lnl_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float */
        float v = (float)m * 0x1p-24f;
        return lnl_bits_f32(lnl_f32_bits(v) | sign);
    }
    if (e == 31) return lnl_bits_f32(sign | 0x7F800000u | (m << 13) | (m ? 0x00400000u : 0));
    return lnl_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

/* Round to nearest even; past 65504 (from 65520 up) to infinity; NaN stays NaN. */
static inline uint16_t lnl_f32_to_f16(float f) {
    uint32_t u = lnl_f32_bits(f), a = u & 0x7FFFFFFFu;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (a > 0x7F800000u) return sign | 0x7E00u | (uint16_t)((a >> 13) & 0x3FFu);
    if (a >= 0x477FF000u) return sign | 0x7C00u; /* 65520 and up, infinity included */
    uint32_t r, rem, halfway;
    if (a >= 0x38800000u) { /* normal f16: drop 13 mantissa bits */
        r = (a - (112u << 23)) >> 13;
        rem = a & 0x1FFFu;
        halfway = 0x1000u;
    } else { /* subnormal f16 (or zero): units of 2^-24 */
        if (a < 0x33000000u) return sign; /* below 2^-25: rounds to zero (2^-25 ties to 0) */
        uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | 0x800000u, s = 126u - e;
        r = m >> s;
        rem = m & ((1u << s) - 1u);
        halfway = 1u << (s - 1u);
    }
    if (rem > halfway || (rem == halfway && (r & 1u))) r++;
    return sign | (uint16_t)r;
}

static inline float lnl_half_to_f32(uint16_t h, lnl_dtype kind) {
    return kind == LNL_DTYPE_BF16 ? lnl_bf16_to_f32(h) : lnl_f16_to_f32(h);
}
static inline uint16_t lnl_f32_to_half(float f, lnl_dtype kind) {
    return kind == LNL_DTYPE_BF16 ? lnl_f32_to_bf16(f) : lnl_f32_to_f16(f);
}

/* Whole runs, portable; the ISA table (cpu.h) holds the ones that run, which give the
 * same bits (tests/c/test_pack.c). */
void lnl_half_to_f32_row(float *dst, const uint16_t *src, int64_t n, lnl_dtype kind);
void lnl_f32_to_half_row(uint16_t *dst, const float *src, int64_t n, lnl_dtype kind);
void lnl_half_to_f32_row_avx2(float *dst, const uint16_t *src, int64_t n, lnl_dtype kind);
void lnl_f32_to_half_row_avx2(uint16_t *dst, const float *src, int64_t n, lnl_dtype kind);

/* out[n0..n1) = column sums in float of the 16-bit a [rows, ld], summed per block of rb
 * rows in order (as lnl_colsum_f32: the order never depends on threads). */
void lnl_colsum_half(float *out, const void *a, int64_t rows, int64_t ld, int64_t n0, int64_t n1,
                     int64_t rb, lnl_dtype kind);

/* An optional 16-bit parameter vector widened into dst: dst, or NULL where src is NULL. */
static inline const float *lnl_widen_param(float *dst, const void *src, int64_t n, lnl_dtype kind) {
    if (!src) return NULL;
    lnl_half_to_f32_row(dst, (const uint16_t *)src, n, kind);
    return dst;
}

#endif /* LNL_HALF_H */
