/*
 * Every argument-validation rule of the header: the status, a message from the
 * right function that names the argument (as a whole word), and every buffer
 * byte-for-byte untouched. All buffers live in one patterned arena, so an
 * output written before the failure (or an input written at all) shows up as
 * a changed arena byte. Every backward rule is checked on lnl_backward and on
 * lnl_backward_ex (given a valid y and linear_bias), which must agree.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "testutil.h"

enum { M = 4, K = 8, N = 3 };

static unsigned char *arena, *arena_image;
static size_t arena_bytes;

typedef struct {
    lnl_problem *p;
    const void *x, *lnw, *lnb, *W, *b;
    void *y, *mean, *rstd, *lnout, *ws;
    size_t wsb;
} fwd_t;

typedef struct {
    lnl_problem *p;
    const void *dy, *x, *lnw, *lnb, *W, *mean, *rstd, *lnout;
    void *dx, *dlnw, *dlnb, *dW, *db, *ws;
    size_t wsb;
} bwd_t;

static lnl_problem base_p;
static fwd_t base_f;
static bwd_t base_b;
/* lnl_backward_ex's extra inputs beside base_b: the forward's y and linear_bias slots */
static const void *base_y, *base_lb;

static lnl_backward_args ex_args(const bwd_t *a, const void *y, const void *lb) {
    lnl_backward_args g;
    memset(&g, 0, sizeof g);
    g.dy = a->dy, g.x = a->x, g.ln_weight = a->lnw, g.ln_bias = a->lnb, g.linear_weight = a->W;
    g.mean = a->mean, g.rstd = a->rstd, g.ln_out = a->lnout;
    g.dx = a->dx, g.dln_weight = a->dlnw, g.dln_bias = a->dlnb, g.dlinear_weight = a->dW;
    g.dlinear_bias = a->db, g.workspace = a->ws, g.workspace_bytes = a->wsb;
    g.y = y, g.linear_bias = lb;
    return g;
}

static void arena_fill(void) {
    for (size_t i = 0; i < arena_bytes; i++) arena[i] = (unsigned char)(0x3C + (i * 7) % 13);
    /* Inputs as small finite floats so a successful call computes something sane. */
    memcpy(arena_image, arena, arena_bytes);
}

static int arena_intact(void) { return memcmp(arena, arena_image, arena_bytes) == 0; }

/* name occurs in msg delimited by non-identifier characters */
static int has_word(const char *msg, const char *name) {
    size_t n = strlen(name);
    for (const char *s = strstr(msg, name); s; s = strstr(s + 1, name)) {
        int left = s == msg || !(isalnum((unsigned char)s[-1]) || s[-1] == '_');
        int right = !(isalnum((unsigned char)s[n]) || s[n] == '_');
        if (left && right) return 1;
    }
    return 0;
}

static void expect_msg(const char *label, const char *fn, const char *n1, const char *n2) {
    const char *msg = lnl_last_error();
    tu_expect(msg != NULL, "%s: lnl_last_error() is NULL", label);
    if (!msg) return;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s:", fn);
    tu_expect(strncmp(msg, prefix, strlen(prefix)) == 0, "%s: message \"%s\" does not start with %s",
              label, msg, prefix);
    if (n1) tu_expect(has_word(msg, n1), "%s: message \"%s\" does not name %s", label, msg, n1);
    if (n2) tu_expect(has_word(msg, n2), "%s: message \"%s\" does not name %s", label, msg, n2);
}

static void expect_fwd(const char *label, fwd_t a, lnl_status want, const char *n1, const char *n2) {
    arena_fill();
    lnl_status st = lnl_forward(a.p, a.x, a.lnw, a.lnb, a.W, a.b, a.y, a.mean, a.rstd, a.lnout, a.ws, a.wsb);
    tu_expect(st == want, "fwd %s: status %s, want %s (%s)", label, lnl_status_string(st),
              lnl_status_string(want), lnl_last_error());
    tu_expect(arena_intact(), "fwd %s: a buffer byte changed although the call failed", label);
    if (want != LNL_STATUS_SUCCESS && st == want) expect_msg(label, "lnl_forward", n1, n2);
}

/* lnl_backward_ex with args (a NULL args when g is NULL) on a fresh arena. */
static void expect_bwd_ex_args(const char *label, lnl_problem *p, const lnl_backward_args *g,
                               lnl_status want, const char *n1, const char *n2) {
    arena_fill();
    lnl_status st = lnl_backward_ex(p, g);
    tu_expect(st == want, "bwd_ex %s: status %s, want %s (%s)", label, lnl_status_string(st),
              lnl_status_string(want), lnl_last_error());
    if (want != LNL_STATUS_SUCCESS)
        tu_expect(arena_intact(), "bwd_ex %s: a buffer byte changed although the call failed", label);
    if (want != LNL_STATUS_SUCCESS && st == want) expect_msg(label, "lnl_backward_ex", n1, n2);
}

static void expect_bwd_ex(const char *label, bwd_t a, const void *y, const void *lb, lnl_status want,
                          const char *n1, const char *n2) {
    lnl_backward_args g = ex_args(&a, y, lb);
    expect_bwd_ex_args(label, a.p, &g, want, n1, n2);
}

/* The rule on lnl_backward, then on lnl_backward_ex with the same arguments and a valid
 * y and linear_bias (they change no rule of lnl_backward's). */
static void expect_bwd(const char *label, bwd_t a, lnl_status want, const char *n1, const char *n2) {
    arena_fill();
    lnl_status st = lnl_backward(a.p, a.dy, a.x, a.lnw, a.lnb, a.W, a.mean, a.rstd, a.lnout, a.dx, a.dlnw,
                                 a.dlnb, a.dW, a.db, a.ws, a.wsb);
    tu_expect(st == want, "bwd %s: status %s, want %s (%s)", label, lnl_status_string(st),
              lnl_status_string(want), lnl_last_error());
    tu_expect(arena_intact(), "bwd %s: a buffer byte changed although the call failed", label);
    if (want != LNL_STATUS_SUCCESS && st == want) expect_msg(label, "lnl_backward", n1, n2);
    expect_bwd_ex(label, a, base_y, base_lb, want, n1, n2);
}

/* A malformed problem: lnl_check, both workspace queries, forward and backward. */
static void expect_bad_problem(const char *label, lnl_problem *p, lnl_status want, const char *name) {
    lnl_status st = lnl_check(p);
    tu_expect(st == want, "check %s: status %s, want %s", label, lnl_status_string(st),
              lnl_status_string(want));
    if (st == want) expect_msg(label, "lnl_check", name, NULL);
    if (want == LNL_STATUS_INVALID_ARGUMENT) {
        tu_expect(lnl_forward_workspace_size(p) == 0 && lnl_backward_workspace_size(p) == 0,
                  "%s: workspace size of an invalid problem is not 0", label);
    }
    fwd_t f = base_f;
    f.p = p;
    f.ws = NULL, f.wsb = 0;
    expect_fwd(label, f, want, name, NULL);
    bwd_t b = base_b;
    b.p = p;
    b.ws = NULL, b.wsb = 0;
    expect_bwd(label, b, want, name, NULL);
}

static void problem_rules(void) {
    lnl_problem p;
    expect_bad_problem("p NULL", NULL, LNL_STATUS_INVALID_ARGUMENT, "p");
    p = base_p, p.rows = -1;
    expect_bad_problem("rows < 0", &p, LNL_STATUS_INVALID_ARGUMENT, "rows");
    p = base_p, p.in_features = 0;
    expect_bad_problem("in_features 0", &p, LNL_STATUS_INVALID_ARGUMENT, "in_features");
    p = base_p, p.in_features = -5;
    expect_bad_problem("in_features < 0", &p, LNL_STATUS_INVALID_ARGUMENT, "in_features");
    p = base_p, p.out_features = 0;
    expect_bad_problem("out_features 0", &p, LNL_STATUS_INVALID_ARGUMENT, "out_features");
    const double bad_eps[] = {0.0, -1e-5, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
        char label[48];
        snprintf(label, sizeof label, "eps %g", bad_eps[i]);
        p = base_p, p.eps = bad_eps[i];
        expect_bad_problem(label, &p, LNL_STATUS_INVALID_ARGUMENT, "eps");
    }
    p = base_p, p.dtype = (lnl_dtype)7;
    expect_bad_problem("dtype 7", &p, LNL_STATUS_INVALID_ARGUMENT, "dtype");
    p = base_p, p.dtype = (lnl_dtype)-1;
    expect_bad_problem("dtype -1", &p, LNL_STATUS_INVALID_ARGUMENT, "dtype");
    p = base_p, p.device = (lnl_device)2;
    expect_bad_problem("device 2", &p, LNL_STATUS_INVALID_ARGUMENT, "device");
    p = base_p, p.strategy = (lnl_strategy)4;
    expect_bad_problem("strategy 4", &p, LNL_STATUS_INVALID_ARGUMENT, "strategy");
    p = base_p, p.strategy = (lnl_strategy)-1;
    expect_bad_problem("strategy -1", &p, LNL_STATUS_INVALID_ARGUMENT, "strategy");
    p = base_p, p.threads = -1;
    expect_bad_problem("threads -1", &p, LNL_STATUS_INVALID_ARGUMENT, "threads");
    /* byte sizes overflowing int64: M*K, M*N, N*K */
    p = base_p, p.rows = INT64_MAX / 2;
    expect_bad_problem("rows INT64_MAX/2", &p, LNL_STATUS_INVALID_ARGUMENT, "rows");
    p = base_p, p.in_features = INT64_MAX / 2;
    expect_bad_problem("in_features INT64_MAX/2", &p, LNL_STATUS_INVALID_ARGUMENT, "in_features");
    p = base_p, p.out_features = INT64_MAX / 2;
    expect_bad_problem("out_features INT64_MAX/2", &p, LNL_STATUS_INVALID_ARGUMENT, "out_features");
    p = base_p, p.rows = (int64_t)1 << 32, p.in_features = (int64_t)1 << 30; /* 2^62 elements * 4 */
    expect_bad_problem("rows*in_features*4 > INT64_MAX", &p, LNL_STATUS_INVALID_ARGUMENT, "rows");
    p = base_p, p.out_features = (int64_t)1 << 31, p.in_features = (int64_t)1 << 31;
    expect_bad_problem("out_features*in_features*4 > INT64_MAX", &p, LNL_STATUS_INVALID_ARGUMENT,
                       "out_features");
    /* every dtype is served on the CPU (16-bit storage computed in float) */
    p = base_p, p.dtype = LNL_DTYPE_BF16;
    tu_expect(lnl_check(&p) == LNL_STATUS_SUCCESS, "lnl_check cpu bf16: %s", lnl_last_error());
    p = base_p, p.dtype = LNL_DTYPE_F16;
    tu_expect(lnl_check(&p) == LNL_STATUS_SUCCESS, "lnl_check cpu f16: %s", lnl_last_error());
    /* ln_float32 splits a 16-bit problem; with F32 or F64 it is a mistake */
    p = base_p, p.ln_float32 = 1;
    expect_bad_problem("ln_float32 with f32", &p, LNL_STATUS_INVALID_ARGUMENT, "ln_float32");
    p = base_p, p.ln_float32 = 1, p.dtype = LNL_DTYPE_F64;
    expect_bad_problem("ln_float32 with f64", &p, LNL_STATUS_INVALID_ARGUMENT, "ln_float32");
    p = base_p, p.ln_float32 = 1, p.dtype = LNL_DTYPE_BF16;
    tu_expect(lnl_check(&p) == LNL_STATUS_SUCCESS, "lnl_check cpu bf16 ln_float32: %s", lnl_last_error());
    /* CUDA takes it wherever it takes the plain 16-bit problem (src/cuda/mixed_backend.cu;
     * a CPU-only build or a machine without a GPU takes neither) */
    p = base_p, p.ln_float32 = 1, p.dtype = LNL_DTYPE_F16, p.device = LNL_DEVICE_CUDA;
    const lnl_status mixed_cuda = lnl_check(&p);
    p.ln_float32 = 0;
    const lnl_status plain_cuda = lnl_check(&p);
    tu_expect(mixed_cuda == plain_cuda, "lnl_check cuda f16: ln_float32 gives %d, without it %d",
              (int)mixed_cuda, (int)plain_cuda);
    p = base_p, p.device = LNL_DEVICE_CUDA;
    if (lnl_check(&p) == LNL_STATUS_SUCCESS) {
        printf("skip: CUDA is available in this build, UNSUPPORTED-CUDA rule not checked\n");
    } else {
        /* host pointers on CUDA: only the status is checked, before any use */
        expect_bad_problem("cuda in a CPU-only build", &p, LNL_STATUS_UNSUPPORTED, NULL);
    }
}

static void pointer_rules(void) {
    fwd_t f;
    bwd_t b;
    f = base_f, f.x = NULL;
    expect_fwd("x NULL", f, LNL_STATUS_INVALID_ARGUMENT, "x", NULL);
    f = base_f, f.W = NULL;
    expect_fwd("linear_weight NULL", f, LNL_STATUS_INVALID_ARGUMENT, "linear_weight", NULL);
    f = base_f, f.y = NULL;
    expect_fwd("y NULL", f, LNL_STATUS_INVALID_ARGUMENT, "y", NULL);
    f = base_f, f.rstd = NULL;
    expect_fwd("mean without rstd", f, LNL_STATUS_INVALID_ARGUMENT, "mean", "rstd");
    f = base_f, f.mean = NULL;
    expect_fwd("rstd without mean", f, LNL_STATUS_INVALID_ARGUMENT, "mean", "rstd");

    b = base_b, b.dy = NULL;
    expect_bwd("dy NULL", b, LNL_STATUS_INVALID_ARGUMENT, "dy", NULL);
    b = base_b, b.x = NULL;
    expect_bwd("x NULL", b, LNL_STATUS_INVALID_ARGUMENT, "x", NULL);
    b = base_b, b.W = NULL;
    expect_bwd("linear_weight NULL", b, LNL_STATUS_INVALID_ARGUMENT, "linear_weight", NULL);
    b = base_b, b.rstd = NULL;
    expect_bwd("mean without rstd", b, LNL_STATUS_INVALID_ARGUMENT, "mean", "rstd");
    b = base_b, b.mean = NULL;
    expect_bwd("rstd without mean", b, LNL_STATUS_INVALID_ARGUMENT, "mean", "rstd");
    b = base_b, b.lnw = NULL;
    expect_bwd("dln_weight with ln_weight NULL", b, LNL_STATUS_INVALID_ARGUMENT, "dln_weight", NULL);
    b = base_b, b.lnb = NULL;
    expect_bwd("dln_bias with ln_bias NULL", b, LNL_STATUS_INVALID_ARGUMENT, "dln_bias", NULL);
    /* The same absent parameters are fine when their gradients are not requested. */
    b = base_b, b.lnw = NULL, b.lnb = NULL, b.dlnw = NULL, b.dlnb = NULL;
    b.ws = NULL, b.wsb = 0;
    arena_fill();
    lnl_status st = lnl_backward(b.p, b.dy, b.x, b.lnw, b.lnb, b.W, b.mean, b.rstd, b.lnout, b.dx, b.dlnw,
                                 b.dlnb, b.dW, b.db, b.ws, b.wsb);
    tu_expect(st == LNL_STATUS_SUCCESS, "bwd absent ln params without their gradients: %s (%s)",
              lnl_status_string(st), lnl_last_error());
}

static void workspace_rules(void) {
    lnl_problem p = base_p;
    size_t fw = 0, bw = 0;
    static const lnl_strategy strats[] = {LNL_STRATEGY_AUTO, LNL_STRATEGY_FUSED, LNL_STRATEGY_UNFUSED,
                                          LNL_STRATEGY_REFERENCE};
    for (int i = 0; i < 4; i++) {
        p = base_p;
        p.strategy = strats[i];
        fw = lnl_forward_workspace_size(&p);
        bw = lnl_backward_workspace_size(&p);
        fwd_t f = base_f;
        bwd_t b = base_b;
        f.p = &p, b.p = &p;
        char label[80];
        if (fw > 0) {
            f.wsb = fw - 1;
            snprintf(label, sizeof label, "%s workspace one byte short", tu_strategy_name(p.strategy));
            expect_fwd(label, f, LNL_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes", NULL);
            f.wsb = 0;
            expect_fwd(label, f, LNL_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes", NULL);
        } else {
            printf("note: %s forward needs no workspace; too-small rule not applicable\n",
                   tu_strategy_name(p.strategy));
        }
        if (bw > 0) {
            b.wsb = bw - 1;
            snprintf(label, sizeof label, "%s workspace one byte short", tu_strategy_name(p.strategy));
            expect_bwd(label, b, LNL_STATUS_WORKSPACE_TOO_SMALL, "workspace_bytes", NULL);
        } else {
            printf("note: %s backward needs no workspace; too-small rule not applicable\n",
                   tu_strategy_name(p.strategy));
        }
    }
}

static void overlap_rules(void) {
    const unsigned char *xb = base_f.x;
    fwd_t f;
    bwd_t b;
    f = base_f, f.y = (void *)(xb + 4);
    expect_fwd("y overlaps x", f, LNL_STATUS_INVALID_ARGUMENT, "y", "x");
    f = base_f, f.y = (unsigned char *)base_f.lnout + 8;
    expect_fwd("y overlaps ln_out", f, LNL_STATUS_INVALID_ARGUMENT, "y", "ln_out");
    f = base_f, f.rstd = (unsigned char *)base_f.mean + 4;
    expect_fwd("rstd overlaps mean", f, LNL_STATUS_INVALID_ARGUMENT, "rstd", "mean");
    f = base_f, f.lnout = (void *)((const unsigned char *)base_f.W + 4);
    expect_fwd("ln_out overlaps linear_weight", f, LNL_STATUS_INVALID_ARGUMENT, "ln_out", "linear_weight");
    f = base_f, f.mean = (void *)((const unsigned char *)base_f.b);
    expect_fwd("mean overlaps linear_bias", f, LNL_STATUS_INVALID_ARGUMENT, "mean", "linear_bias");
    f = base_f, f.y = (void *)((const unsigned char *)base_f.lnw);
    expect_fwd("y is ln_weight", f, LNL_STATUS_INVALID_ARGUMENT, "y", "ln_weight");
    if (base_f.wsb > 0) {
        f = base_f, f.ws = (unsigned char *)base_f.y + 4;
        expect_fwd("workspace overlaps y", f, LNL_STATUS_INVALID_ARGUMENT, "workspace", "y");
    }

    b = base_b, b.dx = (void *)((const unsigned char *)base_b.dy + 4);
    expect_bwd("dx overlaps dy", b, LNL_STATUS_INVALID_ARGUMENT, "dx", "dy");
    b = base_b, b.dx = (void *)base_b.x;
    expect_bwd("dx is x", b, LNL_STATUS_INVALID_ARGUMENT, "dx", "x");
    b = base_b, b.dW = (void *)((const unsigned char *)base_b.W + 4);
    expect_bwd("dlinear_weight overlaps linear_weight", b, LNL_STATUS_INVALID_ARGUMENT, "dlinear_weight",
               "linear_weight");
    b = base_b, b.dlnb = (unsigned char *)base_b.dlnw + 4;
    expect_bwd("dln_bias overlaps dln_weight", b, LNL_STATUS_INVALID_ARGUMENT, "dln_bias", "dln_weight");
    b = base_b, b.db = (void *)((const unsigned char *)base_b.mean);
    expect_bwd("dlinear_bias overlaps mean", b, LNL_STATUS_INVALID_ARGUMENT, "dlinear_bias", "mean");
    b = base_b, b.dlnw = (void *)((const unsigned char *)base_b.lnout + 4);
    expect_bwd("dln_weight overlaps ln_out", b, LNL_STATUS_INVALID_ARGUMENT, "dln_weight", "ln_out");
    if (base_b.wsb > 0) {
        b = base_b, b.ws = (unsigned char *)base_b.dx + 4;
        expect_bwd("workspace overlaps dx", b, LNL_STATUS_INVALID_ARGUMENT, "workspace", "dx");
    }
}

static void alignment_rules(void) {
    fwd_t f;
    bwd_t b;
    f = base_f, f.y = (unsigned char *)base_f.y + 1;
    expect_fwd("y misaligned", f, LNL_STATUS_INVALID_ARGUMENT, "y", NULL);
    f = base_f, f.x = (const unsigned char *)base_f.x + 2;
    expect_fwd("x misaligned", f, LNL_STATUS_INVALID_ARGUMENT, "x", NULL);
    f = base_f, f.lnb = (const unsigned char *)base_f.lnb + 3;
    expect_fwd("ln_bias misaligned", f, LNL_STATUS_INVALID_ARGUMENT, "ln_bias", NULL);
    f = base_f, f.mean = (unsigned char *)base_f.mean + 1;
    expect_fwd("mean misaligned", f, LNL_STATUS_INVALID_ARGUMENT, "mean", NULL);
    b = base_b, b.dx = (unsigned char *)base_b.dx + 1;
    expect_bwd("dx misaligned", b, LNL_STATUS_INVALID_ARGUMENT, "dx", NULL);
    b = base_b, b.W = (const unsigned char *)base_b.W + 2;
    expect_bwd("linear_weight misaligned", b, LNL_STATUS_INVALID_ARGUMENT, "linear_weight", NULL);
    b = base_b, b.db = (unsigned char *)base_b.db + 1;
    expect_bwd("dlinear_bias misaligned", b, LNL_STATUS_INVALID_ARGUMENT, "dlinear_bias", NULL);
    /* F64: 4-byte aligned is not enough */
    lnl_problem p = base_p;
    p.dtype = LNL_DTYPE_F64;
    f = base_f, f.p = &p, f.ws = NULL, f.wsb = 0;
    f.x = (const unsigned char *)base_f.x + 4;
    expect_fwd("f64 x 4-byte aligned", f, LNL_STATUS_INVALID_ARGUMENT, "x", NULL);
    /* ln_float32: x, its parameters and their gradients are float (4 bytes), the rest 16-bit */
    p = base_p;
    p.dtype = LNL_DTYPE_BF16, p.ln_float32 = 1;
    f = base_f, f.p = &p, f.ws = NULL, f.wsb = 0;
    f.x = (const unsigned char *)base_f.x + 2;
    expect_fwd("ln_float32 x 2-byte aligned", f, LNL_STATUS_INVALID_ARGUMENT, "x", NULL);
    f = base_f, f.p = &p, f.ws = NULL, f.wsb = 0;
    f.lnw = (const unsigned char *)base_f.lnw + 2;
    expect_fwd("ln_float32 ln_weight 2-byte aligned", f, LNL_STATUS_INVALID_ARGUMENT, "ln_weight", NULL);
    f = base_f, f.p = &p, f.ws = NULL, f.wsb = 0;
    f.W = (const unsigned char *)base_f.W + 2, f.y = (unsigned char *)base_f.y + 2;
    f.b = (const unsigned char *)base_f.b + 2, f.lnout = (unsigned char *)base_f.lnout + 2;
    arena_fill();
    lnl_status st = lnl_forward(f.p, f.x, f.lnw, f.lnb, f.W, f.b, f.y, f.mean, f.rstd, f.lnout, NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "fwd ln_float32: the 16-bit side 2-byte aligned: %s (%s)",
              lnl_status_string(st), lnl_last_error());
    b = base_b, b.p = &p, b.ws = NULL, b.wsb = 0;
    b.dlnb = (unsigned char *)base_b.dlnb + 2;
    expect_bwd("ln_float32 dln_bias 2-byte aligned", b, LNL_STATUS_INVALID_ARGUMENT, "dln_bias", NULL);
    b = base_b, b.p = &p, b.ws = NULL, b.wsb = 0;
    b.dy = (const unsigned char *)base_b.dy + 2, b.dW = (unsigned char *)base_b.dW + 2;
    b.lnout = (const unsigned char *)base_b.lnout + 2;
    arena_fill();
    st = lnl_backward(b.p, b.dy, b.x, b.lnw, b.lnb, b.W, b.mean, b.rstd, b.lnout, b.dx, b.dlnw, b.dlnb,
                      b.dW, b.db, NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "bwd ln_float32: dy, dW, ln_out 2-byte aligned: %s (%s)",
              lnl_status_string(st), lnl_last_error());
    /* dx is M x K floats: it reaches 2 * M * K bytes past where a bf16 dx would end */
    b = base_b, b.p = &p, b.ws = NULL, b.wsb = 0;
    b.dx = (unsigned char *)base_b.x + (size_t)(M * K) * 2;
    expect_bwd("ln_float32 dx over x's float tail", b, LNL_STATUS_INVALID_ARGUMENT, "dx", "x");
}

/* lnl_backward_ex's own rules: args, y and linear_bias; and lnl_backward_wants_y. */
static void backward_ex_rules(void) {
    bwd_t b = base_b;
    expect_bwd_ex_args("args NULL", &base_p, NULL, LNL_STATUS_INVALID_ARGUMENT, "args", NULL);
    expect_bwd_ex_args("p and args NULL", NULL, NULL, LNL_STATUS_INVALID_ARGUMENT, "args", NULL);
    {
        lnl_backward_args g = ex_args(&b, base_y, base_lb);
        expect_bwd_ex_args("p NULL", NULL, &g, LNL_STATUS_INVALID_ARGUMENT, "p", NULL);
    }
    expect_bwd_ex("y misaligned", b, (const unsigned char *)base_y + 1, base_lb,
                  LNL_STATUS_INVALID_ARGUMENT, "y", NULL);
    expect_bwd_ex("linear_bias misaligned", b, base_y, (const unsigned char *)base_lb + 2,
                  LNL_STATUS_INVALID_ARGUMENT, "linear_bias", NULL);
    expect_bwd_ex("dx overlaps y", b, (const unsigned char *)base_b.dx + 4, base_lb,
                  LNL_STATUS_INVALID_ARGUMENT, "dx", "y");
    expect_bwd_ex("y is dlinear_weight", b, base_b.dW, base_lb, LNL_STATUS_INVALID_ARGUMENT,
                  "dlinear_weight", "y");
    expect_bwd_ex("linear_bias overlaps dlinear_bias", b, base_y, (const unsigned char *)base_b.db + 4,
                  LNL_STATUS_INVALID_ARGUMENT, "dlinear_bias", "linear_bias");
    if (base_b.wsb > 0) {
        b = base_b, b.ws = (void *)base_y;
        expect_bwd_ex("workspace is y", b, base_y, base_lb, LNL_STATUS_INVALID_ARGUMENT, "workspace", "y");
    }
    /* lnl_backward's rules come first: a dy NULL is reported whatever y is */
    b = base_b, b.dy = NULL;
    expect_bwd_ex("dy NULL with y misaligned", b, (const unsigned char *)base_y + 1, base_lb,
                  LNL_STATUS_INVALID_ARGUMENT, "dy", NULL);
    /* inputs may share memory: y overlapping x (an input) is no error */
    expect_bwd_ex("y overlaps x", base_b, base_b.x, base_lb, LNL_STATUS_SUCCESS, NULL, NULL);
    /* linear_bias without y is ignored, its alignment and overlaps included */
    expect_bwd_ex("misaligned linear_bias without y", base_b, NULL, (const unsigned char *)base_lb + 1,
                  LNL_STATUS_SUCCESS, NULL, NULL);
    expect_bwd_ex("y and linear_bias NULL", base_b, NULL, NULL, LNL_STATUS_SUCCESS, NULL, NULL);
    expect_bwd_ex("y without linear_bias", base_b, base_y, NULL, LNL_STATUS_SUCCESS, NULL, NULL);
    /* M == 0: y NULL is fine, as x, dy and dx are */
    lnl_problem p = base_p;
    p.rows = 0;
    b = base_b, b.p = &p, b.dy = NULL, b.x = NULL, b.dx = NULL, b.mean = NULL, b.rstd = NULL;
    b.lnout = NULL, b.ws = NULL, b.wsb = 0;
    lnl_backward_args g = ex_args(&b, NULL, base_lb);
    arena_fill();
    lnl_status st = lnl_backward_ex(&p, &g);
    tu_expect(st == LNL_STATUS_SUCCESS, "bwd_ex M=0 with NULL dy/x/dx/y: %s (%s)", lnl_status_string(st),
              lnl_last_error());

    /* lnl_backward_wants_y: 0 for an invalid problem and on the CPU (which ignores y) */
    tu_expect(lnl_backward_wants_y(NULL) == 0, "lnl_backward_wants_y(NULL) is not 0");
    p = base_p, p.in_features = 0;
    tu_expect(lnl_backward_wants_y(&p) == 0, "lnl_backward_wants_y of an invalid problem is not 0");
    static const lnl_dtype dts[] = {LNL_DTYPE_F32, LNL_DTYPE_F64, LNL_DTYPE_BF16, LNL_DTYPE_F16};
    for (int d = 0; d < 4; d++) {
        for (int st2 = LNL_STRATEGY_AUTO; st2 <= LNL_STRATEGY_REFERENCE; st2++) {
            p = base_p, p.dtype = dts[d], p.strategy = (lnl_strategy)st2;
            p.rows = 4096, p.in_features = 2048, p.out_features = 256; /* an epilogue shape on CUDA */
            tu_expect(lnl_backward_wants_y(&p) == 0, "lnl_backward_wants_y is not 0 on the CPU (%s %s)",
                      tu_dtype_name(p.dtype), tu_strategy_name(p.strategy));
        }
    }
    p = base_p, p.device = LNL_DEVICE_CUDA;
    if (lnl_check(&p) == LNL_STATUS_UNSUPPORTED)
        tu_expect(lnl_backward_wants_y(&p) == 0, "lnl_backward_wants_y is not 0 for CUDA in a CPU-only build");
}

static void misc_rules(void) {
    for (int s = -1; s <= 6; s++)
        tu_expect(lnl_status_string((lnl_status)s) != NULL, "lnl_status_string(%d) is NULL", s);
    tu_expect(lnl_status_string((lnl_status)999) != NULL, "lnl_status_string(999) is NULL");
    const char *ok = lnl_status_string(LNL_STATUS_SUCCESS);
    for (int s = 1; s <= 5; s++)
        tu_expect(ok && lnl_status_string((lnl_status)s) && strcmp(ok, lnl_status_string((lnl_status)s)),
                  "lnl_status_string(%d) equals the SUCCESS string", s);
    int ma = -1, mi = -1, pa = -1;
    lnl_version(&ma, &mi, &pa);
    /* This test is built with the library it links, so the two versions must agree. */
    tu_expect(ma == LNL_VERSION_MAJOR && mi == LNL_VERSION_MINOR && pa == LNL_VERSION_PATCH,
              "lnl_version gave %d.%d.%d, the header says %d.%d.%d", ma, mi, pa, LNL_VERSION_MAJOR,
              LNL_VERSION_MINOR, LNL_VERSION_PATCH);
    lnl_version(NULL, NULL, NULL);
    lnl_version(&ma, NULL, NULL);
    lnl_version(NULL, NULL, &pa);
    tu_passed++; /* survived lnl_version with NULLs */
    tu_expect(lnl_dtype_size(LNL_DTYPE_F32) == 4 && lnl_dtype_size(LNL_DTYPE_F64) == 8 &&
                  lnl_dtype_size(LNL_DTYPE_BF16) == 2 && lnl_dtype_size(LNL_DTYPE_F16) == 2 &&
                  lnl_dtype_size((lnl_dtype)9) == 0,
              "lnl_dtype_size");

    /* Strategy resolution: AUTO becomes FUSED or UNFUSED for each direction (the CPU's
     * AUTO is FUSED both ways), explicit strategies come back as they are, and an
     * invalid problem answers AUTO. */
    lnl_problem r = base_p;
    for (int st = LNL_STRATEGY_AUTO; st <= LNL_STRATEGY_REFERENCE; st++) {
        r.strategy = (lnl_strategy)st;
        const lnl_strategy fw = lnl_resolve_strategy(&r), bw = lnl_resolve_backward_strategy(&r);
        const lnl_strategy want = st == LNL_STRATEGY_AUTO ? LNL_STRATEGY_FUSED : (lnl_strategy)st;
        tu_expect(fw == want && bw == want, "strategy %d resolves to %d / %d, expected %d", st, fw,
                  bw, want);
    }
    r.in_features = 0;
    tu_expect(lnl_resolve_strategy(&r) == LNL_STRATEGY_AUTO &&
                  lnl_resolve_backward_strategy(&r) == LNL_STRATEGY_AUTO,
              "an invalid problem resolves to something other than AUTO");

    /* M == 0 forward: a success that writes nothing */
    lnl_problem p = base_p;
    p.rows = 0;
    fwd_t f = base_f;
    f.p = &p, f.ws = NULL, f.wsb = 0;
    expect_fwd("M=0 forward", f, LNL_STATUS_SUCCESS, NULL, NULL);
    f.x = NULL, f.y = NULL, f.mean = NULL, f.rstd = NULL, f.lnout = NULL;
    expect_fwd("M=0 forward with NULL x/y", f, LNL_STATUS_SUCCESS, NULL, NULL);
}

int main(void) {
    const char *e0 = lnl_last_error();
    tu_expect(e0 != NULL && e0[0] == '\0', "lnl_last_error() before any failure is \"%s\"", e0 ? e0 : "(null)");

    base_p.rows = M, base_p.in_features = K, base_p.out_features = N;
    base_p.eps = 1e-5, base_p.dtype = LNL_DTYPE_F32, base_p.device = LNL_DEVICE_CPU;
    base_p.strategy = LNL_STRATEGY_UNFUSED, base_p.threads = 1;
    tu_expect(lnl_check(&base_p) == LNL_STATUS_SUCCESS, "base problem invalid: %s", lnl_last_error());
    size_t fw = lnl_forward_workspace_size(&base_p), bw = lnl_backward_workspace_size(&base_p);
    /* generous slots (room for the F64 alignment case) at 64-byte offsets */
    size_t slot = (size_t)(M * K) * 8 + 64;
    if (fw + 64 > slot) slot = fw + 64;
    if (bw + 64 > slot) slot = bw + 64;
    slot = (slot + 63) / 64 * 64;
    enum { SLOTS = 22 };
    arena_bytes = slot * SLOTS;
    arena = tu_galloc(arena_bytes);
    arena_image = malloc(arena_bytes);
    TU_CHECK(arena_image);
    unsigned char *s[SLOTS];
    for (int i = 0; i < SLOTS; i++) s[i] = arena + (size_t)i * slot;
    base_f = (fwd_t){&base_p, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], fw};
    base_b = (bwd_t){&base_p, s[10], s[0], s[1], s[2], s[3], s[11], s[12], s[13],
                     s[14], s[15], s[16], s[17], s[18], s[19], bw};
    base_y = base_f.y, base_lb = base_f.b;

    /* The baseline arguments are valid: both calls succeed. */
    arena_fill();
    lnl_status st = lnl_forward(&base_p, base_f.x, base_f.lnw, base_f.lnb, base_f.W, base_f.b, base_f.y,
                                base_f.mean, base_f.rstd, base_f.lnout, base_f.ws, base_f.wsb);
    tu_expect(st == LNL_STATUS_SUCCESS, "baseline forward: %s (%s)", lnl_status_string(st), lnl_last_error());
    st = lnl_backward(&base_p, base_b.dy, base_b.x, base_b.lnw, base_b.lnb, base_b.W, base_b.mean,
                      base_b.rstd, base_b.lnout, base_b.dx, base_b.dlnw, base_b.dlnb, base_b.dW, base_b.db,
                      base_b.ws, base_b.wsb);
    tu_expect(st == LNL_STATUS_SUCCESS, "baseline backward: %s (%s)", lnl_status_string(st), lnl_last_error());
    lnl_backward_args g = ex_args(&base_b, base_y, base_lb);
    st = lnl_backward_ex(&base_p, &g);
    tu_expect(st == LNL_STATUS_SUCCESS, "baseline backward_ex: %s (%s)", lnl_status_string(st), lnl_last_error());

    problem_rules();
    pointer_rules();
    workspace_rules();
    overlap_rules();
    alignment_rules();
    backward_ex_rules();
    misc_rules();
    tu_expect(tu_guard_ok(arena, arena_bytes), "guard after the arena overwritten");
    tu_gfree(arena);
    free(arena_image);
    return tu_finish();
}
