/* What the example programs share: a status check that exits, a zeroing allocator that
 * exits, a seeded normal sampler (so every run trains on the same numbers), and the loss
 * log that decides whether training worked. */
#ifndef LNL_EXAMPLE_UTIL_H
#define LNL_EXAMPLE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lnlinear.h"

/* The library never prints or exits; an example may. */
static void check(lnl_status st, const char *what) {
    if (st != LNL_STATUS_SUCCESS) {
        fprintf(stderr, "%s: %s (%s)\n", what, lnl_status_string(st), lnl_last_error());
        exit(2);
    }
}

static void *alloc_zeroed(size_t count, size_t size) {
    void *p = calloc(count, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* xorshift64 feeding Box-Muller. */
static unsigned long long rng_state = 88172645463325252ull;
static float randn(void) {
    double u[2];
    for (int i = 0; i < 2; i++) {
        rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
        u[i] = ((rng_state >> 11) + 0.5) * 0x1.0p-53;
    }
    return (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
}

/* One of the examples' layers as a problem: `rows` rows, in -> out features, eps 1e-5,
 * float32, on the CPU, AUTO; an example changes the dtype or device it trains in. */
static lnl_problem example_layer_problem(int64_t rows, int in, int out) {
    lnl_problem p;
    memset(&p, 0, sizeof p);
    p.rows = rows;
    p.in_features = in;
    p.out_features = out;
    p.eps = 1e-5;
    p.dtype = LNL_DTYPE_F32;
    p.device = LNL_DEVICE_CPU;
    p.strategy = LNL_STRATEGY_AUTO;
    return p;
}

/* A layer's initial parameters, drawn in one order, so that every example that draws its
 * layers in turn from the same seed trains the same model: gamma near 1, small beta and
 * bias, and W scaled by weight_scale / sqrt(in). */
static void draw_layer_params(int in, int out, float weight_scale, float *ln_w, float *ln_b,
                              float *w, float *b) {
    for (int k = 0; k < in; k++) ln_w[k] = 1.0f + 0.1f * randn(), ln_b[k] = 0.1f * randn();
    for (int i = 0; i < out * in; i++) w[i] = weight_scale * randn() / sqrtf((float)in);
    for (int n = 0; n < out; n++) b[n] = 0.1f * randn();
}

/* The loss of each step: the first one, and a running mean that forgets slowly. */
typedef struct {
    double first, recent;
} loss_log;

static void loss_log_step(loss_log *l, int step, int steps, double loss) {
    if (step == 0) l->first = l->recent = loss;
    else l->recent = 0.98 * l->recent + 0.02 * loss;
    if (step % 500 == 0 || step == steps - 1)
        printf("step %4d  loss %.5f  (running %.5f)\n", step, loss, l->recent);
}

/* The example's verdict: 0 when the running loss fell at least 10x from the first. */
static int loss_log_verdict(const loss_log *l) {
    double factor = l->first / l->recent;
    printf("loss fell from %.5f to %.5f (%.1fx)\n", l->first, l->recent, factor);
    if (!(factor >= 10.0)) {
        printf("FAILED: the loss did not fall 10x\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}

#endif
