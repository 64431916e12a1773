/*
 * train_mlp: a three-layer model of LayerNorm+Linear blocks with tanh between
 * them, trained with plain SGD to imitate a randomly initialised "teacher" of
 * the same shape. Forward and backward of every block go through lnl_forward /
 * lnl_backward; only tanh's backward and the SGD step are written here.
 * Exits 0 when the mean squared error fell at least 10x.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

enum { LAYERS = 3, BATCH = 64, DATA = 2048, STEPS = 3000 };
static const int dims[LAYERS + 1] = {16, 48, 48, 1};

typedef struct {
    lnl_problem p;
    float *ln_w, *ln_b, *w, *b;       /* parameters */
    float *d_ln_w, *d_ln_b, *d_w, *d_b; /* their gradients */
    float *out, *mean, *rstd;         /* forward: pre-activation [BATCH, out], statistics */
} layer;

static float *alloc(size_t n) { return alloc_zeroed(n, sizeof(float)); }

static void layer_init(layer *l, int in, int out, float weight_scale) {
    memset(l, 0, sizeof *l);
    l->p = example_layer_problem(BATCH, in, out);
    l->ln_w = alloc(in), l->ln_b = alloc(in), l->d_ln_w = alloc(in), l->d_ln_b = alloc(in);
    l->w = alloc((size_t)out * in), l->d_w = alloc((size_t)out * in);
    l->b = alloc(out), l->d_b = alloc(out);
    l->out = alloc((size_t)BATCH * out), l->mean = alloc(BATCH), l->rstd = alloc(BATCH);
    draw_layer_params(in, out, weight_scale, l->ln_w, l->ln_b, l->w, l->b);
}

/* Runs the model on x [BATCH, dims[0]]; acts[l] receives the input of layer l. */
static const float *model_forward(layer *net, const float *x, float *acts[LAYERS]) {
    const float *in = x;
    for (int l = 0; l < LAYERS; l++) {
        layer *L = &net[l];
        if (l > 0) { /* tanh between blocks */
            for (int i = 0; i < BATCH * dims[l]; i++) acts[l][i] = tanhf(net[l - 1].out[i]);
            in = acts[l];
        }
        check(lnl_forward(&L->p, in, L->ln_w, L->ln_b, L->w, L->b, L->out, L->mean, L->rstd, NULL, NULL, 0),
              "lnl_forward");
    }
    return net[LAYERS - 1].out;
}

int main(void) {
    layer teacher[LAYERS], net[LAYERS];
    for (int l = 0; l < LAYERS; l++) layer_init(&teacher[l], dims[l], dims[l + 1], 2.0f);
    for (int l = 0; l < LAYERS; l++) layer_init(&net[l], dims[l], dims[l + 1], 1.0f);

    /* The data set: random inputs, the teacher's outputs as targets. */
    float *X = alloc((size_t)DATA * dims[0]), *T = alloc(DATA);
    for (int i = 0; i < DATA * dims[0]; i++) X[i] = randn();
    float *acts[LAYERS], *grad_in[LAYERS], *grad_out[LAYERS];
    for (int l = 0; l < LAYERS; l++) {
        acts[l] = alloc((size_t)BATCH * dims[l]);
        grad_in[l] = alloc((size_t)BATCH * dims[l]);
        grad_out[l] = alloc((size_t)BATCH * dims[l + 1]);
    }
    for (int s = 0; s < DATA; s += BATCH) {
        const float *y = model_forward(teacher, X + (size_t)s * dims[0], acts);
        memcpy(T + s, y, BATCH * sizeof(float));
    }

    const float lr = 0.05f;
    loss_log log = {0, 0};
    for (int step = 0; step < STEPS; step++) {
        int s = (step * BATCH) % DATA;
        const float *x = X + (size_t)s * dims[0], *t = T + s;
        const float *y = model_forward(net, x, acts);
        double loss = 0;
        for (int i = 0; i < BATCH; i++) {
            double d = y[i] - t[i];
            loss += d * d / BATCH;
            grad_out[LAYERS - 1][i] = (float)(2.0 * d / BATCH); /* d loss / d y */
        }
        loss_log_step(&log, step, STEPS, loss);

        for (int l = LAYERS - 1; l >= 0; l--) {
            layer *L = &net[l];
            const float *in = l == 0 ? x : acts[l];
            check(lnl_backward(&L->p, grad_out[l], in, L->ln_w, L->ln_b, L->w, L->mean, L->rstd, NULL,
                               l > 0 ? grad_in[l] : NULL, L->d_ln_w, L->d_ln_b, L->d_w, L->d_b, NULL, 0),
                  "lnl_backward");
            if (l > 0) /* through tanh: d pre-activation = d activation * (1 - tanh^2) */
                for (int i = 0; i < BATCH * dims[l]; i++)
                    grad_out[l - 1][i] = grad_in[l][i] * (1.0f - acts[l][i] * acts[l][i]);
        }
        for (int l = 0; l < LAYERS; l++) { /* SGD */
            layer *L = &net[l];
            int in = dims[l], out = dims[l + 1];
            for (int k = 0; k < in; k++) L->ln_w[k] -= lr * L->d_ln_w[k], L->ln_b[k] -= lr * L->d_ln_b[k];
            for (int i = 0; i < out * in; i++) L->w[i] -= lr * L->d_w[i];
            for (int n = 0; n < out; n++) L->b[n] -= lr * L->d_b[n];
        }
    }
    for (int l = 0; l < LAYERS; l++) {
        layer *nets[2] = {&teacher[l], &net[l]};
        for (int i = 0; i < 2; i++) {
            float *bufs[] = {nets[i]->ln_w, nets[i]->ln_b, nets[i]->w, nets[i]->b, nets[i]->d_ln_w,
                             nets[i]->d_ln_b, nets[i]->d_w, nets[i]->d_b, nets[i]->out, nets[i]->mean,
                             nets[i]->rstd};
            for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) free(bufs[k]);
        }
        free(acts[l]), free(grad_in[l]), free(grad_out[l]);
    }
    free(X), free(T);
    return loss_log_verdict(&log);
}
