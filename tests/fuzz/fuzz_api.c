/*
 * libFuzzer harness over the public C API (build: clang, -DLNL_FUZZ=ON).
 * The input decodes to a problem descriptor (small sizes, possibly invalid
 * enums, eps, threads, ln_float32), a pattern of NULL pointers, an optional overlap or
 * misalignment, a workspace (none / too small / exact), which calls to make,
 * and the data. Each buffer is its own exact-size allocation, so ASan sees any
 * out-of-bounds access. Asserted: no crash; a failing call leaves every output
 * byte untouched and sets a non-empty lnl_last_error(); a successful call on
 * finite inputs gives finite y.
 *
 * Every backward is made twice: lnl_backward, then lnl_backward_ex on the same
 * arguments plus a y and a linear_bias picked by one more byte read after the data
 * (0 past the input's end, so older corpus files keep their meaning): each NULL, a
 * buffer of its own, misaligned, or aliasing a backward output; or args NULL. Where
 * nothing of that is wrong, lnl_backward_ex must answer as lnl_backward did and, on
 * success, write the same bytes (the CPU ignores y); where something is, it must fail
 * (INVALID_ARGUMENT where lnl_backward succeeded) without writing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lnlinear.h"

#define FUZZ_ASSERT(c)                                                                   \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            fprintf(stderr, "%s:%d: fuzz assertion failed: %s (last error: %s)\n",      \
                    __FILE__, __LINE__, #c, lnl_last_error());                           \
            abort();                                                                     \
        }                                                                                \
    } while (0)

typedef struct {
    const uint8_t *d;
    size_t n, i;
} reader;

static uint8_t rd(reader *r) { return r->i < r->n ? r->d[r->i++] : 0; }

enum { X, LNW, LNB, W, B, DY, MEAN_IN, RSTD_IN, LNOUT_IN, Y, MEAN, RSTD, LNOUT, DX, DLNW, DLNB, DW, DB, WS, NBUF };
static const int is_output[NBUF] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

static int prefixed(const char *msg, const char *fn) {
    size_t n = strlen(fn);
    return strncmp(msg, fn, n) == 0 && msg[n] == ':';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size, 0};
    lnl_problem p;
    memset(&p, 0, sizeof p);
    uint8_t b0 = rd(&r), b1 = rd(&r), b2 = rd(&r);
    p.rows = (int64_t)(b0 % 18) - 1;    /* -1 .. 16 */
    p.in_features = (int64_t)(b1 % 66) - 1; /* -1 .. 64 */
    p.out_features = (int64_t)(b2 % 34) - 1; /* -1 .. 32 */
    uint8_t e = rd(&r);
    static const double eps_tab[] = {1e-5, 1e-5, 1e-12, 1.0, 0.0, -1e-5, NAN, INFINITY};
    p.eps = eps_tab[e % 8];
    p.dtype = (lnl_dtype)((int)(rd(&r) % 6) - 1);       /* -1 .. 4 */
    p.strategy = (lnl_strategy)((int)(rd(&r) % 6) - 1); /* -1 .. 4 */
    uint8_t dv = rd(&r);
    p.device = (lnl_device)(dv % 8 == 7 ? 2 : dv % 8 == 6 ? LNL_DEVICE_CUDA : LNL_DEVICE_CPU);
    p.ln_float32 = (dv / 8) % 4 == 0; /* valid with bf16/f16 only */
    p.threads = (int)(rd(&r) % 6) - 1; /* -1 .. 4 */
    uint32_t nullmask = rd(&r) | (uint32_t)rd(&r) << 8 | (uint32_t)rd(&r) << 16;
    uint8_t wsmode = rd(&r) % 4, ops = rd(&r) % 4, twist = rd(&r), twist_arg = rd(&r);

    lnl_status cs = lnl_check(&p);
    if (cs == LNL_STATUS_SUCCESS && p.device == LNL_DEVICE_CUDA) return 0; /* host memory only */
    const int64_t M = p.rows > 0 ? p.rows : 0, K = p.in_features > 0 ? p.in_features : 1,
                  N = p.out_features > 0 ? p.out_features : 1;
    size_t es = lnl_dtype_size(p.dtype);
    if (es == 0) es = 4;
    size_t as = p.dtype == LNL_DTYPE_F64 ? 8 : 4;
    size_t ls = p.ln_float32 && es < 4 ? 4 : es; /* x, its parameters and their gradients */
    size_t bytes[NBUF] = {M * K * ls, K * ls, K * ls, N * K * es, N * es, M * N * es, M * as, M * as,
                          M * K * es, M * N * es, M * as, M * as, M * K * es, M * K * ls, K * ls, K * ls,
                          N * K * es, N * es, 0};
    int is_fwd = ops != 1; /* 0: both, 1: backward, 2: forward, 3: both */
    int is_bwd = ops != 2;
    size_t need = 0;
    if (is_fwd) need = lnl_forward_workspace_size(&p);
    if (is_bwd && lnl_backward_workspace_size(&p) > need) need = lnl_backward_workspace_size(&p);
    size_t ws_bytes = wsmode == 0 ? 0 : wsmode == 1 ? (need > 0 ? need - 1 - twist_arg % need : 0) : need;
    if (wsmode == 1 && need > 0 && ws_bytes >= need) ws_bytes = need - 1;
    bytes[WS] = ws_bytes;

    unsigned char *buf[NBUF], *image[NBUF];
    for (int i = 0; i < NBUF; i++) {
        buf[i] = malloc(bytes[i] ? bytes[i] : 1);
        image[i] = malloc(bytes[i] ? bytes[i] : 1);
        for (size_t k = 0; k < bytes[i]; k++) {
            /* floats/doubles from the input: mostly small finite values */
            buf[i][k] = is_output[i] ? (unsigned char)(0xA7 ^ k) : (uint8_t)(rd(&r) & 0x3F);
        }
        memcpy(image[i], buf[i], bytes[i]);
    }
    void *ptr[NBUF];
    for (int i = 0; i < NBUF; i++) ptr[i] = ((nullmask >> i) & 1) ? NULL : buf[i];
    if (wsmode == 0) ptr[WS] = NULL;
    /* twist: an output aliasing another argument of the same call (one at least as large,
     * so that only a missed overlap check can write out of bounds), or a misaligned pointer */
    static const int fwd_args[] = {X, LNW, LNB, W, B, Y, MEAN, RSTD, LNOUT, WS};
    static const int fwd_outs[] = {Y, MEAN, RSTD, LNOUT, WS};
    static const int bwd_args[] = {DY, X, LNW, LNB, W, MEAN_IN, RSTD_IN, LNOUT_IN, DX, DLNW, DLNB, DW, DB, WS};
    static const int bwd_outs[] = {DX, DLNW, DLNB, DW, DB, WS};
    void *pf[NBUF], *pb[NBUF];
    memcpy(pf, ptr, sizeof ptr);
    memcpy(pb, ptr, sizeof ptr);
    if (twist % 4 == 1) {
        int fo = fwd_outs[twist_arg % 5], fa = fwd_args[(twist_arg / 8) % 10];
        if (fo != fa && ptr[fa] && bytes[fa] > 0 && bytes[fa] >= bytes[fo]) pf[fo] = ptr[fa];
        int bo = bwd_outs[twist_arg % 6], ba = bwd_args[(twist_arg / 8) % 14];
        if (bo != ba && ptr[ba] && bytes[ba] > 0 && bytes[ba] >= bytes[bo]) pb[bo] = ptr[ba];
    } else if (twist % 4 == 2) {
        int which = twist_arg % WS; /* the workspace has no alignment rule */
        if (ptr[which] && bytes[which] > 1) pf[which] = pb[which] = (unsigned char *)ptr[which] + 1;
    }

    if (is_fwd) {
        lnl_status st = lnl_forward(&p, pf[X], pf[LNW], pf[LNB], pf[W], pf[B], pf[Y], pf[MEAN], pf[RSTD],
                                    pf[LNOUT], pf[WS], ws_bytes);
        if (cs != LNL_STATUS_SUCCESS) FUZZ_ASSERT(st != LNL_STATUS_SUCCESS);
        if (st != LNL_STATUS_SUCCESS) {
            FUZZ_ASSERT(lnl_last_error()[0] != '\0');
            for (int i = Y; i < NBUF; i++) FUZZ_ASSERT(memcmp(buf[i], image[i], bytes[i]) == 0);
        } else if (p.dtype == LNL_DTYPE_F32 && pf[Y] == buf[Y]) {
            /* inputs are built from bytes & 0x3F: finite floats, so y must be finite */
            const float *y = ptr[Y];
            for (int64_t k = 0; k < M * N; k++) FUZZ_ASSERT(isfinite(y[k]));
        } else if ((p.dtype == LNL_DTYPE_BF16 || p.dtype == LNL_DTYPE_F16) && pf[Y] == buf[Y]) {
            /* the same in 16 bits (at most 0x3F3F: below 1 in bf16, 2 in f16; |y| stays far
             * below f16's 65504): no exponent field all ones */
            const uint16_t *y = ptr[Y], expo = p.dtype == LNL_DTYPE_BF16 ? 0x7F80u : 0x7C00u;
            for (int64_t k = 0; k < M * N; k++) FUZZ_ASSERT((y[k] & expo) != expo);
        }
    }
    uint8_t ex = rd(&r); /* lnl_backward_ex's y and linear_bias; 255: args NULL */
    if (is_bwd) {
        for (int i = Y; i < NBUF; i++) memcpy(buf[i], image[i], bytes[i]);
        lnl_status st = lnl_backward(&p, pb[DY], pb[X], pb[LNW], pb[LNB], pb[W], pb[MEAN_IN],
                                     pb[RSTD_IN], pb[LNOUT_IN], pb[DX], pb[DLNW], pb[DLNB], pb[DW],
                                     pb[DB], pb[WS], ws_bytes);
        if (cs != LNL_STATUS_SUCCESS) FUZZ_ASSERT(st != LNL_STATUS_SUCCESS);
        if (st != LNL_STATUS_SUCCESS) {
            FUZZ_ASSERT(lnl_last_error()[0] != '\0');
            for (int i = Y; i < NBUF; i++) FUZZ_ASSERT(memcmp(buf[i], image[i], bytes[i]) == 0);
        }

        /* the same backward through lnl_backward_ex: its outputs' bytes as lnl_backward
         * left them, then the outputs reset */
        unsigned char *res[NBUF];
        for (int i = DX; i < WS; i++) {
            res[i] = malloc(bytes[i] ? bytes[i] : 1);
            memcpy(res[i], buf[i], bytes[i]);
            memcpy(buf[i], image[i], bytes[i]);
        }
        memcpy(buf[WS], image[WS], bytes[WS]);
        /* y (an input here: the forward's output buffer, reset above) and linear_bias */
        static const int outs[] = {DX, DLNW, DLNB, DW, DB, WS};
        const void *y = NULL, *lb = NULL;
        int bad = 0; /* a y or linear_bias the library must refuse */
        switch (ex % 4) {
        case 1: y = buf[Y]; break;
        case 2: /* misaligned, where y is more than a byte (else NULL) */
            if (bytes[Y] > 1) y = buf[Y] + 1, bad = 1;
            break;
        case 3: { /* y is a backward output (one no smaller, so a missed check reads in bounds;
                   * the workspace only where the backward's own extent of it is not 0) */
            int o = outs[(ex / 16) % 6];
            if (pb[o] && bytes[o] > 0 && bytes[o] >= bytes[Y] &&
                (o != WS || lnl_backward_workspace_size(&p) > 0))
                y = pb[o], bad = bytes[Y] > 0;
            break;
        }
        }
        switch ((ex / 4) % 4) {
        case 1: lb = buf[B]; break;
        case 2:
            if (bytes[B] > 1) lb = buf[B] + 1, bad |= y != NULL;
            break;
        case 3: /* linear_bias is dlinear_bias */
            if (pb[DB] && bytes[DB] > 0) lb = pb[DB], bad |= y != NULL;
            break;
        }
        lnl_backward_args a;
        memset(&a, 0, sizeof a);
        a.dy = pb[DY], a.x = pb[X], a.ln_weight = pb[LNW], a.ln_bias = pb[LNB], a.linear_weight = pb[W];
        a.mean = pb[MEAN_IN], a.rstd = pb[RSTD_IN], a.ln_out = pb[LNOUT_IN];
        a.dx = pb[DX], a.dln_weight = pb[DLNW], a.dln_bias = pb[DLNB], a.dlinear_weight = pb[DW];
        a.dlinear_bias = pb[DB], a.workspace = pb[WS], a.workspace_bytes = ws_bytes;
        a.y = y, a.linear_bias = lb;
        const int args_null = ex == 255;
        lnl_status st2 = lnl_backward_ex(&p, args_null ? NULL : &a);
        if (st2 != LNL_STATUS_SUCCESS) {
            FUZZ_ASSERT(prefixed(lnl_last_error(), "lnl_backward_ex"));
            for (int i = Y; i < NBUF; i++) FUZZ_ASSERT(memcmp(buf[i], image[i], bytes[i]) == 0);
        }
        if (args_null) {
            FUZZ_ASSERT(st2 == LNL_STATUS_INVALID_ARGUMENT);
        } else if (bad) {
            FUZZ_ASSERT(st2 != LNL_STATUS_SUCCESS);
            if (st == LNL_STATUS_SUCCESS) FUZZ_ASSERT(st2 == LNL_STATUS_INVALID_ARGUMENT);
        } else {
            FUZZ_ASSERT(st2 == st);
            if (st2 == LNL_STATUS_SUCCESS)
                for (int i = DX; i < WS; i++) FUZZ_ASSERT(memcmp(buf[i], res[i], bytes[i]) == 0);
        }
        FUZZ_ASSERT(memcmp(buf[Y], image[Y], bytes[Y]) == 0); /* y is an input */
        for (int i = DX; i < WS; i++) free(res[i]);
    }
    for (int i = 0; i < NBUF; i++) {
        if (!is_output[i]) FUZZ_ASSERT(memcmp(buf[i], image[i], bytes[i]) == 0); /* inputs are const */
        free(buf[i]);
        free(image[i]);
    }
    FUZZ_ASSERT(lnl_status_string((lnl_status)(twist_arg - 128)) != NULL);
    return 0;
}
