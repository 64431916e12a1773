#include "testutil.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

long tu_passed, tu_failed;

void tu_expect(int ok, const char *fmt, ...) {
    if (ok) {
        tu_passed++;
        return;
    }
    tu_failed++;
    if (tu_failed <= 200) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    } else if (tu_failed == 201) {
        fprintf(stderr, "(further failures not printed)\n");
    }
}

int tu_finish(void) {
    printf("%ld passed, %ld failed\n", tu_passed, tu_failed);
    fflush(stdout);
    return tu_failed == 0 ? 0 : 1;
}

/* ---- RNG ---- */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void tu_rng_seed(tu_rng *r, uint64_t seed) {
    r->s = seed * 0x2545F4914F6CDD1Dull + 12345;
    r->have_spare = 0;
    r->spare = 0;
}

uint64_t tu_rng_u64(tu_rng *r) { return splitmix64(&r->s); }

double tu_uniform(tu_rng *r) { return (double)(tu_rng_u64(r) >> 11) * 0x1.0p-53; }

double tu_randn(tu_rng *r) {
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    double u1 = tu_uniform(r), u2 = tu_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    double rad = sqrt(-2.0 * log(u1));
    r->spare = rad * sin(2.0 * M_PI * u2);
    r->have_spare = 1;
    return rad * cos(2.0 * M_PI * u2);
}

double tu_hash_normal(uint64_t a, uint64_t b) {
    uint64_t s = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
    uint64_t h = splitmix64(&s);
    /* Sum of four 16-bit uniforms: mean 0, variance 1 after scaling (Irwin-Hall). */
    double acc = 0;
    for (int i = 0; i < 4; i++) acc += (double)((h >> (16 * i)) & 0xFFFF) / 65536.0;
    return (acc - 2.0) * sqrt(3.0);
}

/* ---- dtypes ---- */
size_t tu_dtype_size(lnl_dtype dt) {
    switch (dt) {
    case LNL_DTYPE_F32: return 4;
    case LNL_DTYPE_F64: return 8;
    case LNL_DTYPE_BF16:
    case LNL_DTYPE_F16: return 2;
    }
    return 0;
}

size_t tu_acc_size(lnl_dtype dt) { return dt == LNL_DTYPE_F64 ? 8 : 4; }

const char *tu_dtype_name(lnl_dtype dt) {
    switch (dt) {
    case LNL_DTYPE_F32: return "f32";
    case LNL_DTYPE_F64: return "f64";
    case LNL_DTYPE_BF16: return "bf16";
    case LNL_DTYPE_F16: return "f16";
    }
    return "?";
}

const char *tu_strategy_name(lnl_strategy s) {
    switch (s) {
    case LNL_STRATEGY_AUTO: return "AUTO";
    case LNL_STRATEGY_FUSED: return "FUSED";
    case LNL_STRATEGY_UNFUSED: return "UNFUSED";
    case LNL_STRATEGY_REFERENCE: return "REFERENCE";
    }
    return "?";
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t tu_f32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7FFFu + ((x >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(x >> 16);
}

float tu_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t tu_f32_to_f16(float f) {
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) return sign | 0x7E00u;  /* NaN */
    if (ax >= 0x477FF000u) return sign | 0x7C00u; /* >= 65520 rounds to Inf */
    int e = (int)(ax >> 23) - 127;
    if (e >= -14) { /* normal half */
        uint32_t mant = ax & 0x7FFFFFu;
        uint32_t h = ((uint32_t)(e + 15) << 10) | (mant >> 13);
        uint32_t rem = mant & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    if (e < -25) return sign; /* below half the smallest subnormal */
    uint32_t mant = (ax & 0x7FFFFFu) | 0x800000u; /* value = mant * 2^(e-23) */
    int shift = -(e + 1);                          /* units of 2^-24: 14..24 */
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

float tu_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (e == 0) {
        float v = ldexpf((float)mant, -24);
        return sign ? -v : v;
    }
    if (e == 31) return bits_f32(sign | 0x7F800000u | (mant << 13));
    return bits_f32(sign | ((e - 15 + 127) << 23) | (mant << 13));
}

double tu_round(lnl_dtype dt, double v) {
    switch (dt) {
    case LNL_DTYPE_F64: return v;
    case LNL_DTYPE_F32: return (double)(float)v;
    case LNL_DTYPE_BF16: return tu_bf16_to_f32(tu_f32_to_bf16((float)v));
    case LNL_DTYPE_F16: return tu_f16_to_f32(tu_f32_to_f16((float)v));
    }
    return v;
}

void tu_store(lnl_dtype dt, void *dst, const double *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case LNL_DTYPE_F64: ((double *)dst)[i] = src[i]; break;
        case LNL_DTYPE_F32: ((float *)dst)[i] = (float)src[i]; break;
        case LNL_DTYPE_BF16: ((uint16_t *)dst)[i] = tu_f32_to_bf16((float)src[i]); break;
        case LNL_DTYPE_F16: ((uint16_t *)dst)[i] = tu_f32_to_f16((float)src[i]); break;
        }
    }
}

void tu_load(lnl_dtype dt, double *dst, const void *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case LNL_DTYPE_F64: dst[i] = ((const double *)src)[i]; break;
        case LNL_DTYPE_F32: dst[i] = ((const float *)src)[i]; break;
        case LNL_DTYPE_BF16: dst[i] = tu_bf16_to_f32(((const uint16_t *)src)[i]); break;
        case LNL_DTYPE_F16: dst[i] = tu_f16_to_f32(((const uint16_t *)src)[i]); break;
        }
    }
}

void tu_store_acc(lnl_dtype dt, void *dst, const double *src, size_t n) {
    tu_store(dt == LNL_DTYPE_F64 ? LNL_DTYPE_F64 : LNL_DTYPE_F32, dst, src, n);
}

void tu_load_acc(lnl_dtype dt, double *dst, const void *src, size_t n) {
    tu_load(dt == LNL_DTYPE_F64 ? LNL_DTYPE_F64 : LNL_DTYPE_F32, dst, src, n);
}

void tu_fill_nan(lnl_dtype dt, int acc, void *dst, size_t n) {
    if (acc) dt = dt == LNL_DTYPE_F64 ? LNL_DTYPE_F64 : LNL_DTYPE_F32;
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case LNL_DTYPE_F64: ((double *)dst)[i] = NAN; break;
        case LNL_DTYPE_F32: ((float *)dst)[i] = NAN; break;
        case LNL_DTYPE_BF16: ((uint16_t *)dst)[i] = 0x7FC0u; break;
        case LNL_DTYPE_F16: ((uint16_t *)dst)[i] = 0x7E00u; break;
        }
    }
}

/* ---- guarded buffers ---- */
const unsigned char *tu_guard_pattern(void) {
    static unsigned char pat[TU_GUARD];
    static int init;
    if (!init) {
        for (int i = 0; i < TU_GUARD; i++) pat[i] = (unsigned char)(0xA5 ^ (i * 29));
        init = 1;
    }
    return pat;
}

void *tu_galloc(size_t bytes) {
    /* 64-byte aligned start; the guard follows the last byte directly. */
    size_t total = (bytes + TU_GUARD + 63) / 64 * 64;
    unsigned char *p = aligned_alloc(64, total);
    TU_CHECK(p != NULL);
    memset(p, 0x5A, bytes);
    memcpy(p + bytes, tu_guard_pattern(), TU_GUARD);
    return p;
}

int tu_guard_ok(const void *p, size_t bytes) {
    return memcmp((const unsigned char *)p + bytes, tu_guard_pattern(), TU_GUARD) == 0;
}

void tu_gfree(void *p) { free(p); }

double tu_relerr(const double *out, const double *ref, size_t n) {
    double num = 0, den = 0, onorm = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(out[i])) return INFINITY;
        double d = out[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
        onorm += out[i] * out[i];
    }
    if (n == 0) return 0;
    if (den == 0) return sqrt(onorm / (double)n);
    return sqrt(num / den);
}

/* ---- float64 reference ---- */
static void ref_row_stats(int64_t K, double eps, const double *xr, double *mean, double *rstd) {
    double s = 0;
    for (int64_t k = 0; k < K; k++) s += xr[k];
    double mu = s / (double)K;
    double v = 0;
    for (int64_t k = 0; k < K; k++) v += (xr[k] - mu) * (xr[k] - mu);
    *mean = mu;
    *rstd = 1.0 / sqrt(v / (double)K + eps);
}

void tu_ref_forward(int64_t M, int64_t K, int64_t N, double eps, const double *x,
                    const double *ln_weight, const double *ln_bias, const double *W,
                    const double *b, double *y, double *mean, double *rstd, double *ln_out) {
    double *h = malloc((size_t)K * sizeof(double) + 8);
    TU_CHECK(h != NULL);
    for (int64_t m = 0; m < M; m++) {
        const double *xr = x + m * K;
        double mu, rs;
        ref_row_stats(K, eps, xr, &mu, &rs);
        for (int64_t k = 0; k < K; k++) {
            double g = ln_weight ? ln_weight[k] : 1.0, be = ln_bias ? ln_bias[k] : 0.0;
            h[k] = (xr[k] - mu) * rs * g + be;
        }
        if (mean) mean[m] = mu;
        if (rstd) rstd[m] = rs;
        if (ln_out) memcpy(ln_out + m * K, h, (size_t)K * sizeof(double));
        if (y) {
            for (int64_t n = 0; n < N; n++) {
                double acc = b ? b[n] : 0.0;
                const double *wr = W + n * K;
                for (int64_t k = 0; k < K; k++) acc += h[k] * wr[k];
                y[m * N + n] = acc;
            }
        }
    }
    free(h);
}

void tu_ref_backward(int64_t M, int64_t K, int64_t N, double eps, const double *dy,
                     const double *x, const double *ln_weight, const double *ln_bias,
                     const double *W, double *dx, double *dln_weight, double *dln_bias,
                     double *dW, double *db) {
    double *xhat = malloc((size_t)K * sizeof(double) + 8);
    double *dxhat = malloc((size_t)K * sizeof(double) + 8);
    TU_CHECK(xhat && dxhat);
    if (dln_weight) memset(dln_weight, 0, (size_t)K * sizeof(double));
    if (dln_bias) memset(dln_bias, 0, (size_t)K * sizeof(double));
    if (dW) memset(dW, 0, (size_t)(N * K) * sizeof(double));
    if (db) memset(db, 0, (size_t)N * sizeof(double));
    for (int64_t m = 0; m < M; m++) {
        const double *xr = x + m * K, *dyr = dy + m * N;
        double mu, rs;
        ref_row_stats(K, eps, xr, &mu, &rs);
        for (int64_t k = 0; k < K; k++) {
            xhat[k] = (xr[k] - mu) * rs;
            dxhat[k] = 0;
        }
        for (int64_t n = 0; n < N; n++) {
            const double *wr = W + n * K;
            for (int64_t k = 0; k < K; k++) dxhat[k] += dyr[n] * wr[k];
            if (db) db[n] += dyr[n];
            if (dW) {
                double *dwr = dW + n * K;
                for (int64_t k = 0; k < K; k++) {
                    double g = ln_weight ? ln_weight[k] : 1.0, be = ln_bias ? ln_bias[k] : 0.0;
                    dwr[k] += dyr[n] * (xhat[k] * g + be);
                }
            }
        }
        double mg = 0, mgx = 0;
        for (int64_t k = 0; k < K; k++) {
            double g = dxhat[k] * (ln_weight ? ln_weight[k] : 1.0);
            mg += g;
            mgx += g * xhat[k];
            if (dln_weight) dln_weight[k] += dxhat[k] * xhat[k];
            if (dln_bias) dln_bias[k] += dxhat[k];
        }
        mg /= (double)K;
        mgx /= (double)K;
        if (dx) {
            for (int64_t k = 0; k < K; k++) {
                double g = dxhat[k] * (ln_weight ? ln_weight[k] : 1.0);
                dx[m * K + k] = rs * (g - mg - xhat[k] * mgx);
            }
        }
    }
    free(xhat);
    free(dxhat);
}
