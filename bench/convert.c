/* Host-side dtype conversion for the benchmark (bit-exact, round to nearest even). */
#include <math.h>
#include <string.h>

#include "bench.h"

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu, man = u & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* subnormal or zero: shift in the hidden bit, round to nearest even */
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = 1u << (shift - 1), rest = man & ((1u << shift) - 1u);
        uint32_t r = man >> shift;
        if (rest > half || (rest == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (r & 1u))) r++; /* may carry into the exponent */
    return (uint16_t)(sign | r);
}
static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    uint32_t u = exp == 31 ? sign | 0x7f800000u | (man << 13)
                           : sign | ((exp - 15 + 127) << 23) | (man << 13);
    memcpy(&f, &u, 4);
    return f;
}

void bench_from_double(lnl_dtype dt, const double *src, void *dst, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case LNL_DTYPE_F64: ((double *)dst)[i] = src[i]; break;
        case LNL_DTYPE_F32: ((float *)dst)[i] = (float)src[i]; break;
        case LNL_DTYPE_BF16: ((uint16_t *)dst)[i] = f32_to_bf16((float)src[i]); break;
        case LNL_DTYPE_F16: ((uint16_t *)dst)[i] = f32_to_f16((float)src[i]); break;
        }
    }
}

void bench_to_double(lnl_dtype dt, const void *src, double *dst, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case LNL_DTYPE_F64: dst[i] = ((const double *)src)[i]; break;
        case LNL_DTYPE_F32: dst[i] = ((const float *)src)[i]; break;
        case LNL_DTYPE_BF16: dst[i] = bf16_to_f32(((const uint16_t *)src)[i]); break;
        case LNL_DTYPE_F16: dst[i] = f16_to_f32(((const uint16_t *)src)[i]); break;
        }
    }
}
