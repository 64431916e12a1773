/* The AVX2 packing routines (src/cpu/gemm_pack_avx2.c) against the portable ones
 * (gemm_pack_tmpl.h): the packed values must be bitwise the same, with and without the
 * LayerNorm, for the AVX2 kernel's slivers (6-row A, 16-column B) and the AVX-512
 * kernel's (12-row A, 32-column B), over row, column and depth tails. Then the 16-bit
 * conversions (src/cpu/half.h): every bf16 and f16 value widened, and 2^24 float bit
 * patterns plus the edge cases rounded, AVX2 + F16C against portable, bitwise; every
 * finite 16-bit value survives the round trip; and known roundings. Then the AVX-512
 * bf16 panel packers (gemm_pack_avx512bf16.c) against the portable ones
 * (gemm_pack_bf16.c), bitwise, in the four operand forms and the fallbacks, with and
 * without the LayerNorm, over row, column and odd depth tails. The routines are
 * internal, so this program compiles their sources itself (tests/CMakeLists.txt).
 * With --time it also prints the best of 30 timings of each at the AVX-512 kernel's
 * block sizes (the evidence behind using them there; docs/cpu-performance-notes.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm.h"
#include "half.h"

static int failures = 0;

static float *filled(size_t n, unsigned seed) {
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)((int)(seed >> 9) % 2001 - 1000) / 97.0f + 3.0f; /* non-zero mean */
    }
    return v;
}

static void expect_same(const char *what, const float *a, const float *b, size_t n) {
    if (memcmp(a, b, n * sizeof(float)) != 0) {
        size_t i = 0;
        while (i < n && memcmp(a + i, b + i, sizeof(float)) == 0) i++;
        printf("FAIL %s: first difference at %zu (%.9g vs %.9g)\n", what, i, a[i], b[i]);
        failures++;
    }
}

/* A = x [M, K] (row-contiguous, LayerNorm optional) or its transpose view (column-
 * contiguous, no LayerNorm); B = W^T (column-contiguous) or a row-contiguous matrix
 * (LayerNorm optional), as the forward and the backward GEMMs present them. */
static void check_shapes(int mr, int nr) {
    const int64_t M = 45, K = 203, N = 77;
    float *x = filled((size_t)(M * K), 1), *w = filled((size_t)(N * K), 2);
    float *mean = filled((size_t)(M > K ? M : K), 3), *rstd = filled((size_t)(M > K ? M : K), 4);
    float *gamma = filled((size_t)(K > N ? K : N), 5), *beta = filled((size_t)(K > N ? K : N), 6);
    const size_t cap = (size_t)(M + 16) * (size_t)(K + 16) + (size_t)(N + 32) * (size_t)(K + 32);
    float *p1 = calloc(cap, sizeof(float)), *p2 = calloc(cap, sizeof(float));
    char what[160];
    for (int xf = 0; xf < 4; xf++) { /* none; LN; LN without gamma; LN without beta */
        lnl_xform_f32 t = {mean, rstd, xf == 2 ? NULL : gamma, xf == 3 ? NULL : beta};
        const lnl_xform_f32 *tx = xf ? &t : NULL;
        /* A row-contiguous: rows i0.., mc rows (tails of mr), depth p0.., kc (tails of 8) */
        for (int64_t mc = 1; mc <= 2 * mr + 1; mc += mr - 1)
            for (int64_t kc = 1; kc <= 19; kc += 9) {
                lnl_gemm_f32 g = {0};
                g.m = M, g.n = N, g.k = K, g.a = x, g.rsa = K, g.csa = 1, g.xa = tx;
                const int64_t i0 = 3, p0 = 5;
                const size_t n = (size_t)((mc + mr - 1) / mr * mr * kc);
                memset(p1, 0xff, n * 4), memset(p2, 0xee, n * 4);
                lnl_pack_a_f32(p1, &g, i0, mc, p0, kc, mr);
                lnl_pack_a_f32_avx2(p2, &g, i0, mc, p0, kc, mr);
                snprintf(what, sizeof what, "pack A rows mr=%d mc=%ld kc=%ld xform=%d", mr, (long)mc,
                         (long)kc, xf);
                expect_same(what, p1, p2, n);
            }
        /* B row-contiguous (rows p of a [K, N] matrix), LN per row p */
        for (int64_t nc = 1; nc <= 2 * nr + 3; nc += nr + 1) {
            lnl_gemm_f32 g = {0};
            g.m = M, g.n = N, g.k = K, g.b = w, g.rsb = N, g.csb = 1, g.xb = tx;
            const int64_t p0 = 2, kc = 17, j0 = 4;
            const size_t n = (size_t)((nc + nr - 1) / nr * nr * kc);
            memset(p1, 0xff, n * 4), memset(p2, 0xee, n * 4);
            lnl_pack_b_f32(p1, &g, p0, kc, j0, nc, nr);
            lnl_pack_b_f32_avx2(p2, &g, p0, kc, j0, nc, nr);
            snprintf(what, sizeof what, "pack B rows nr=%d nc=%ld xform=%d", nr, (long)nc, xf);
            expect_same(what, p1, p2, n);
        }
        if (xf) continue;
        /* A column-contiguous (dW = dy^T @ ...) and B = W^T (the forward): no LN */
        for (int64_t mc = 1; mc <= 2 * mr + 1; mc += mr - 1) {
            lnl_gemm_f32 g = {0};
            g.m = K, g.n = N, g.k = M, g.a = x, g.rsa = 1, g.csa = K;
            const int64_t kc = 13, n = (mc + mr - 1) / mr * mr * kc;
            memset(p1, 0xff, (size_t)n * 4), memset(p2, 0xee, (size_t)n * 4);
            lnl_pack_a_f32(p1, &g, 7, mc, 2, kc, mr);
            lnl_pack_a_f32_avx2(p2, &g, 7, mc, 2, kc, mr);
            snprintf(what, sizeof what, "pack A columns mr=%d mc=%ld", mr, (long)mc);
            expect_same(what, p1, p2, (size_t)n);
        }
        for (int64_t nc = 1; nc <= 2 * nr + 3; nc += nr + 1)
            for (int64_t kc = 1; kc <= 19; kc += 9) {
                lnl_gemm_f32 g = {0};
                g.m = M, g.n = N, g.k = K, g.b = w, g.rsb = 1, g.csb = K;
                const size_t n = (size_t)((nc + nr - 1) / nr * nr * kc);
                memset(p1, 0xff, n * 4), memset(p2, 0xee, n * 4);
                lnl_pack_b_f32(p1, &g, 3, kc, 6, nc, nr);
                lnl_pack_b_f32_avx2(p2, &g, 3, kc, 6, nc, nr);
                snprintf(what, sizeof what, "pack B = W^T nr=%d nc=%ld kc=%ld", nr, (long)nc, (long)kc);
                expect_same(what, p1, p2, n);
            }
    }
    free(x), free(w), free(mean), free(rstd), free(gamma), free(beta), free(p1), free(p2);
}

/* Rounds src[0..n) both ways and compares; returns the failures' count. */
static int round_both(const float *src, int n, lnl_dtype kind, uint16_t *h1, uint16_t *h2) {
    lnl_f32_to_half_row(h1, src, n, kind);
    lnl_f32_to_half_row_avx2(h2, src, n, kind);
    for (int i = 0; i < n; i++)
        if (h1[i] != h2[i]) {
            printf("FAIL %s rounding of %a (bits %08x): portable %04x, avx2 %04x\n",
                   kind == LNL_DTYPE_BF16 ? "bf16" : "f16", (double)src[i], lnl_f32_bits(src[i]),
                   h1[i], h2[i]);
            return 1;
        }
    return 0;
}

static void check_half(void) {
    static uint16_t all[65536], h1[4096], h2[4096];
    static float f1[65536], f2[65536];
    for (int i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    const lnl_dtype kinds[2] = {LNL_DTYPE_BF16, LNL_DTYPE_F16};
    for (int k = 0; k < 2; k++) {
        const lnl_dtype kind = kinds[k];
        const char *name = kind == LNL_DTYPE_BF16 ? "bf16" : "f16";
        /* widening: all 2^16 values (odd lengths, so the scalar tails run too) */
        lnl_half_to_f32_row(f1, all, 65535, kind);
        lnl_half_to_f32_row_avx2(f2, all, 65535, kind);
        f1[65535] = lnl_half_to_f32(65535, kind), f2[65535] = f1[65535];
        expect_same(name, f1, f2, 65536);
        /* round trip of every value (NaNs stay NaNs) */
        int bad = 0;
        for (int i = 0; i < 65536; i++) {
            uint16_t back = lnl_f32_to_half(f1[i], kind);
            if (f1[i] != f1[i] ? back == lnl_f32_to_half(f1[i], kind) && lnl_half_to_f32(back, kind) != lnl_half_to_f32(back, kind)
                               : back == (uint16_t)i)
                continue;
            if (bad++ < 3) printf("FAIL %s round trip of %04x gave %04x\n", name, i, back);
        }
        failures += bad != 0;
        /* rounding: 2^24 pseudo-random bit patterns, in rows of 4093 */
        uint32_t seed = 12345u + (uint32_t)k;
        for (int rep = 0; rep < 4096 && !failures; rep++) {
            float src[4093];
            for (int i = 0; i < 4093; i++) {
                seed = seed * 1664525u + 1013904223u;
                uint32_t u = seed ^ (seed >> 15) * 2654435761u;
                /* half of them near the 16-bit range's interesting exponents */
                if (i & 1) u = (u & 0x807FFFFFu) | ((uint32_t)(96 + (u >> 23) % 48) << 23);
                src[i] = lnl_bits_f32(u);
            }
            failures += round_both(src, 4093, kind, h1, h2);
        }
    }
    /* edge cases by value: ties to even, the f16 overflow threshold, subnormals, NaN, Inf */
    const float edges[] = {0.0f, -0.0f, 1.0f, 1.00390625f, 1.01171875f, 1.0009765625f,
                           1.00048828125f, 1.00146484375f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 0x1p-14f,
                           0x1p-24f, 0x1p-25f, 0x1.000002p-25f, 0x1.8p-24f, 0x1.4p-23f, 0x1p-26f,
                           3.4028235e38f, -3.4028235e38f, 1e-45f, __builtin_inff(),
                           -__builtin_inff(), __builtin_nanf(""), -__builtin_nanf("")};
    const int ne = (int)(sizeof edges / sizeof edges[0]);
    failures += round_both(edges, ne, LNL_DTYPE_BF16, h1, h2);
    failures += round_both(edges, ne, LNL_DTYPE_F16, h1, h2);
    /* known answers (IEEE round to nearest even) */
    struct { float v; lnl_dtype kind; uint16_t want; } known[] = {
        {1.00390625f, LNL_DTYPE_BF16, 0x3F80},    /* 1 + 2^-8: a tie, to even (1.0) */
        {1.01171875f, LNL_DTYPE_BF16, 0x3F82},    /* 1 + 3 * 2^-8: a tie, to even (up) */
        {3.4028235e38f, LNL_DTYPE_BF16, 0x7F80},  /* float's largest: rounds to infinity */
        {1.00048828125f, LNL_DTYPE_F16, 0x3C00},  /* 1 + 2^-11: a tie, to even (1.0) */
        {1.00146484375f, LNL_DTYPE_F16, 0x3C02},  /* 1 + 3 * 2^-11: a tie, to even (up) */
        {1.0009765625f, LNL_DTYPE_F16, 0x3C01},   /* 1 + 2^-10: exact */
        {65519.99f, LNL_DTYPE_F16, 0x7BFF},       /* just below the threshold: 65504 */
        {65520.0f, LNL_DTYPE_F16, 0x7C00},        /* the threshold: infinity */
        {0x1p-24f, LNL_DTYPE_F16, 0x0001},        /* the smallest subnormal */
        {0x1p-25f, LNL_DTYPE_F16, 0x0000},        /* half of it: a tie, to even (zero) */
        {0x1.000002p-25f, LNL_DTYPE_F16, 0x0001}, /* just above the tie */
        {0x1.8p-24f, LNL_DTYPE_F16, 0x0002},      /* 1.5 units: a tie, to even (2) */
        {0x1p-14f, LNL_DTYPE_F16, 0x0400},        /* the smallest normal */
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        uint16_t got = lnl_f32_to_half(known[i].v, known[i].kind);
        if (got != known[i].want) {
            printf("FAIL %s(%a) = %04x, want %04x\n", known[i].kind == LNL_DTYPE_BF16 ? "bf16" : "f16",
                   (double)known[i].v, got, known[i].want);
            failures++;
        }
    }
}

static uint16_t *filled_bf16(size_t n, unsigned seed) {
    float *f = filled(n, seed);
    uint16_t *h = malloc(n * sizeof(uint16_t));
    for (size_t i = 0; i < n; i++) h[i] = lnl_f32_to_bf16(f[i]);
    free(f);
    return h;
}

/* b is the vector packer's output, filled with 0xeeee before: the 64 values past the
 * panel must still hold that (no store past the panel). */
static void expect_same16(const char *what, const uint16_t *a, const uint16_t *b, size_t n) {
    for (size_t i = n; i < n + 64; i++)
        if (b[i] != 0xeeee) {
            printf("FAIL %s: value %zu past the panel written\n", what, i - n);
            failures++;
            return;
        }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            printf("FAIL %s: first difference at %zu (%04x vs %04x)\n", what, i, a[i], b[i]);
            failures++;
            return;
        }
}

/* Panels of the 12 x 32 BF16 kernel: A rows (LN optional) and A = dy^T columns, B rows
 * (LN optional) and B = W^T, plus slivers the vector code hands back (mr 6, nr 16); from
 * bf16 operands and from float ones (src32: x under ln_float32, its values not bf16's). */
static void check_bf16_panels(void) {
    const int64_t M = 45, K = 203, N = 77;
    uint16_t *x = filled_bf16((size_t)(M * K), 1), *w = filled_bf16((size_t)(N * K), 2);
    float *x32 = filled((size_t)(M * K), 7), *w32 = filled((size_t)(N * K), 8);
    float *mean = filled((size_t)K, 3), *rstd = filled((size_t)K, 4);
    float *gamma = filled((size_t)K, 5), *beta = filled((size_t)K, 6);
    const size_t cap = (size_t)(M + 32) * (size_t)(K + 32) * 2;
    uint16_t *p1 = calloc(cap, 2), *p2 = calloc(cap, 2);
    char what[160];
    const int shapes[2][2] = {{12, 32}, {6, 16}};
    for (int sh = 0; sh < 4; sh++) {
        const int mr = shapes[sh % 2][0], nr = shapes[sh % 2][1], src32 = sh / 2;
        for (int xf = 0; xf < 4; xf++) {
            lnl_xform_f32 t = {mean, rstd, xf == 2 ? NULL : gamma, xf == 3 ? NULL : beta};
            const lnl_xform_f32 *tx = xf ? &t : NULL;
            for (int64_t mc = 1; mc <= 3 * mr + 1; mc += mr - 1) /* up to 2 full slivers and a part */
                for (int64_t kc = 1; kc <= 37; kc += 9) { /* odd and even depths, tails of 16 */
                    const int64_t kp = (kc + 1) & ~(int64_t)1;
                    const size_t n = (size_t)((mc + mr - 1) / mr * mr * kp);
                    lnl_gemm_f32 g = {0};
                    g.m = M, g.n = N, g.k = K, g.a_half = x, g.rsa = K, g.csa = 1, g.xa = tx;
                    if (src32) g.a_half = NULL, g.a = x32;
                    g.half = LNL_DTYPE_BF16;
                    memset(p1, 0xff, n * 2), memset(p2, 0xee, (n + 64) * 2);
                    lnl_pack_a_bf16(p1, &g, 3, mc, 5, kc, mr);
                    lnl_pack_a_bf16_avx512(p2, &g, 3, mc, 5, kc, mr);
                    snprintf(what, sizeof what, "bf16 pack A rows mr=%d mc=%ld kc=%ld xform=%d src32=%d",
                             mr, (long)mc, (long)kc, xf, src32);
                    expect_same16(what, p1, p2, n);
                    if (xf) continue;
                    g.m = K, g.k = M, g.rsa = 1, g.csa = K; /* A(i, p) = x[p*K + i]: dy^T's form */
                    memset(p1, 0xff, n * 2), memset(p2, 0xee, (n + 64) * 2);
                    lnl_pack_a_bf16(p1, &g, 7, mc, 2, kc, mr);
                    lnl_pack_a_bf16_avx512(p2, &g, 7, mc, 2, kc, mr);
                    snprintf(what, sizeof what, "bf16 pack A columns mr=%d mc=%ld kc=%ld src32=%d", mr,
                             (long)mc, (long)kc, src32);
                    expect_same16(what, p1, p2, n);
                }
            for (int64_t nc = 1; nc <= 2 * nr + 3; nc += nr + 1)
                for (int64_t kc = 1; kc <= 37; kc += 9) {
                    const int64_t kp = (kc + 1) & ~(int64_t)1;
                    const size_t n = (size_t)((nc + nr - 1) / nr * nr * kp);
                    lnl_gemm_f32 g = {0};
                    g.m = M, g.n = K, g.k = M, g.b_half = x, g.rsb = K, g.csb = 1, g.xb = tx;
                    if (src32) g.b_half = NULL, g.b = x32;
                    g.half = LNL_DTYPE_BF16; /* B(p, j) = x[p*K + j], LN per row p: dW's form */
                    memset(p1, 0xff, n * 2), memset(p2, 0xee, (n + 64) * 2);
                    lnl_pack_b_bf16(p1, &g, 2, kc, 4, nc, nr);
                    lnl_pack_b_bf16_avx512(p2, &g, 2, kc, 4, nc, nr);
                    snprintf(what, sizeof what, "bf16 pack B rows nr=%d nc=%ld kc=%ld xform=%d src32=%d",
                             nr, (long)nc, (long)kc, xf, src32);
                    expect_same16(what, p1, p2, n);
                    if (xf) continue;
                    g.n = N, g.k = K, g.b_half = w, g.rsb = 1, g.csb = K; /* W^T: the forward's B */
                    if (src32) g.b_half = NULL, g.b = w32;
                    memset(p1, 0xff, n * 2), memset(p2, 0xee, (n + 64) * 2);
                    lnl_pack_b_bf16(p1, &g, 3, kc, 6, nc, nr);
                    lnl_pack_b_bf16_avx512(p2, &g, 3, kc, 6, nc, nr);
                    snprintf(what, sizeof what, "bf16 pack B = W^T nr=%d nc=%ld kc=%ld src32=%d", nr,
                             (long)nc, (long)kc, src32);
                    expect_same16(what, p1, p2, n);
                }
        }
    }
    free(x), free(w), free(x32), free(w32), free(mean), free(rstd), free(gamma), free(beta), free(p1),
        free(p2);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Best of 30 of each routine at the AVX-512 blocking (mc 480, kc 384, B panel 384 x 768). */
static void time_avx512_blocks(void) {
    const int64_t M = 480, K = 768, N = 768, mc = 480, kc = 384, nc = 768;
    float *x = filled((size_t)(M * K), 1), *w = filled((size_t)(N * K), 2);
    float *mean = filled((size_t)M, 3), *rstd = filled((size_t)M, 4);
    float *gamma = filled((size_t)K, 5), *beta = filled((size_t)K, 6);
    float *pa = malloc((size_t)(mc * kc) * 4), *pb = malloc((size_t)(nc * kc) * 4);
    lnl_xform_f32 t = {mean, rstd, gamma, beta};
    lnl_gemm_f32 g = {0};
    g.m = M, g.n = N, g.k = K, g.a = x, g.rsa = K, g.csa = 1, g.xa = &t;
    g.b = w, g.rsb = 1, g.csb = K;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int r = 0; r < 30; r++) {
        double t0 = now_us();
        lnl_pack_a_f32(pa, &g, 0, mc, 0, kc, 12);
        double t1 = now_us();
        lnl_pack_a_f32_avx2(pa, &g, 0, mc, 0, kc, 12);
        double t2 = now_us();
        lnl_pack_b_f32(pb, &g, 0, kc, 0, nc, 32);
        double t3 = now_us();
        lnl_pack_b_f32_avx2(pb, &g, 0, kc, 0, nc, 32);
        double t4 = now_us();
        const double d[4] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
        for (int i = 0; i < 4; i++)
            if (d[i] < best[i]) best[i] = d[i];
    }
    printf("A block 480 x 384 with LayerNorm, 12-row slivers: portable %.1f us, avx2 %.1f us\n",
           best[0], best[1]);
    printf("B panel 384 x 768 of W^T, 32-column slivers: portable %.1f us, avx2 %.1f us\n", best[2],
           best[3]);
    free(x), free(w), free(mean), free(rstd), free(gamma), free(beta), free(pa), free(pb);
}

/* gemm_pack_half.c asks the dispatch for its float packer and row conversions: here the
 * AVX2 ones, which the AVX2 and AVX-512 tables give it. */
static const lnl_cpu_isa half_isa = {.name = "test", .pack_a_f32 = lnl_pack_a_f32_avx2,
                                     .pack_b_f32 = lnl_pack_b_f32_avx2,
                                     .half_to_f32 = lnl_half_to_f32_row_avx2,
                                     .f32_to_half = lnl_f32_to_half_row_avx2};
const lnl_cpu_isa *lnl_cpu_isa_get(void) { return &half_isa; }

/* B panels of the float engine from a 16-bit operand: lnl_pack_b_half_avx2 (rows walked
 * across every sliver, widened where loaded) against lnl_pack_b_half (a tile widened, then
 * the float packer), bitwise, bf16 and f16, with and without the LayerNorm, over column and
 * depth tails; the W^T form falls back to lnl_pack_b_half. */
static void check_half_panels(void) {
    const int64_t M = 45, K = 203;
    float *f = filled((size_t)(M * K), 11), *mean = filled((size_t)M, 3), *rstd = filled((size_t)M, 4);
    float *gamma = filled((size_t)K, 5), *beta = filled((size_t)K, 6);
    uint16_t *x = malloc((size_t)(M * K) * sizeof(uint16_t));
    const size_t cap = (size_t)(K + 64) * (size_t)(M + 64);
    float *p1 = malloc(cap * sizeof(float)), *p2 = malloc(cap * sizeof(float));
    char what[160];
    for (int kind = LNL_DTYPE_BF16; kind <= LNL_DTYPE_F16; kind++) {
        for (int64_t i = 0; i < M * K; i++) x[i] = lnl_f32_to_half(f[i], (lnl_dtype)kind);
        for (int nr = 16; nr <= 32; nr += 16)
            for (int xf = 0; xf < 4; xf++) {
                lnl_xform_f32 t = {mean, rstd, xf == 2 ? NULL : gamma, xf == 3 ? NULL : beta};
                for (int64_t nc = 1; nc <= 2 * nr + 3; nc += nr + 1)
                    for (int64_t kc = 1; kc <= 37; kc += 9)
                        for (int form = 0; form < 2; form++) {
                            lnl_gemm_f32 g = {0};
                            g.b_half = x, g.half = (lnl_dtype)kind;
                            if (form == 0) /* B(p, j) = x[p*K + j], LN per row p: dW's form */
                                g.m = M, g.n = K, g.k = M, g.rsb = K, g.csb = 1, g.xb = xf ? &t : NULL;
                            else /* B = W^T with W = x viewed [K, M]: the forward's form */
                                g.n = K, g.k = M, g.rsb = 1, g.csb = M;
                            const size_t n = (size_t)((nc + nr - 1) / nr * nr * kc);
                            memset(p1, 0xff, n * sizeof(float)), memset(p2, 0xee, (n + 64) * sizeof(float));
                            lnl_pack_b_half(p1, &g, 2, kc, 4, nc, nr);
                            lnl_pack_b_half_avx2(p2, &g, 2, kc, 4, nc, nr);
                            snprintf(what, sizeof what, "%s pack B %s nr=%d nc=%ld kc=%ld xform=%d",
                                     kind == LNL_DTYPE_BF16 ? "bf16" : "f16", form ? "W^T" : "rows", nr,
                                     (long)nc, (long)kc, xf);
                            expect_same(what, p1, p2, n);
                            for (size_t i = n; i < n + 64; i++)
                                if (memcmp(p2 + i, "\xee\xee\xee\xee", 4) != 0) {
                                    printf("FAIL %s: value %zu past the panel written\n", what, i - n);
                                    failures++;
                                    break;
                                }
                            if (form && xf) break; /* the W^T form takes no transform */
                        }
            }
    }
    free(f), free(mean), free(rstd), free(gamma), free(beta), free(x), free(p1), free(p2);
}

int main(int argc, char **argv) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("skipped: this CPU has no AVX2+FMA\n");
        return 0;
    }
#endif
    check_shapes(6, 16);
    check_shapes(12, 32);
    check_half();
    check_half_panels();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        check_bf16_panels();
    else
        printf("bf16 panels: skipped (this CPU has no AVX-512 BW/VL)\n");
    if (argc > 1 && strcmp(argv[1], "--time") == 0) time_avx512_blocks();
    printf("%s\n", failures ? "FAILED" : "packing and 16-bit conversions: AVX2 and portable bitwise the same");
    return failures ? 1 : 0;
}
