/*
 * train_mlp_bf16: train_mlp's model and task, trained in mixed precision the way
 * torch.autocast trains a float32 model in bf16:
 *   - the parameters live in float32 ("master" copies) and SGD updates them there;
 *   - each step rounds the linear weight and bias to bf16 copies for the GEMMs;
 *   - LayerNorm reads float32 activations with float32 gamma and beta
 *     (lnl_problem.ln_float32 = 1), so no bf16 copy of x is made and a row with a large
 *     mean keeps its spread;
 *   - y, dy, dlinear_weight and dlinear_bias are bf16; dx, dln_weight, dln_bias float32.
 * It also shows the C-training-code habits: one workspace, sized once from
 * lnl_*_workspace_size and handed to every call, so no step allocates.
 * The inputs have mean 1000 and spread 1: rounded to bf16 (steps of 4 there) they
 * would lose their spread; LayerNorm takes the mean away in float32 first.
 * Exits 0 when the mean squared error fell at least 10x.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

enum { LAYERS = 3, BATCH = 64, DATA = 2048, STEPS = 3000 };
static const int dims[LAYERS + 1] = {16, 48, 48, 1};

typedef uint16_t bf16; /* the upper half of a float32's bits */

/* Round to nearest, ties to even (the values here are finite). */
static bf16 to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (bf16)(u >> 16);
}

static float from_bf16(bf16 h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

typedef struct {
    lnl_problem p;
    float *ln_w, *ln_b, *w, *b;   /* float32 master parameters */
    bf16 *w16, *b16;              /* their bf16 copies, refreshed before each forward */
    float *d_ln_w, *d_ln_b;       /* LayerNorm's gradients: float32, as its inputs */
    bf16 *d_w, *d_b;              /* the linear's gradients: bf16, as its inputs */
    bf16 *out;                    /* y [BATCH, out] */
    float *mean, *rstd;           /* statistics [BATCH] */
} layer;

static float *alloc_f32(size_t n) { return alloc_zeroed(n, sizeof(float)); }
static bf16 *alloc_bf16(size_t n) { return alloc_zeroed(n, sizeof(bf16)); }

static void layer_init(layer *l, int in, int out, float weight_scale) {
    memset(l, 0, sizeof *l);
    l->p = example_layer_problem(BATCH, in, out);
    l->p.dtype = LNL_DTYPE_BF16; /* the linear's dtype */
    l->p.ln_float32 = 1;         /* x and LayerNorm's parameters in float32 */
    l->ln_w = alloc_f32(in), l->ln_b = alloc_f32(in), l->d_ln_w = alloc_f32(in), l->d_ln_b = alloc_f32(in);
    l->w = alloc_f32((size_t)out * in), l->b = alloc_f32(out);
    l->w16 = alloc_bf16((size_t)out * in), l->b16 = alloc_bf16(out);
    l->d_w = alloc_bf16((size_t)out * in), l->d_b = alloc_bf16(out);
    l->out = alloc_bf16((size_t)BATCH * out), l->mean = alloc_f32(BATCH), l->rstd = alloc_f32(BATCH);
    draw_layer_params(in, out, weight_scale, l->ln_w, l->ln_b, l->w, l->b);
}

static void layer_free(layer *l) {
    void *bufs[] = {l->ln_w, l->ln_b, l->w, l->b, l->w16, l->b16, l->d_ln_w,
                    l->d_ln_b, l->d_w, l->d_b, l->out, l->mean, l->rstd};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) free(bufs[k]);
}

/* autocast's cast of the linear's parameters, once a step. */
static void refresh_bf16_copies(layer *l) {
    int in = (int)l->p.in_features, out = (int)l->p.out_features;
    for (int i = 0; i < out * in; i++) l->w16[i] = to_bf16(l->w[i]);
    for (int n = 0; n < out; n++) l->b16[n] = to_bf16(l->b[n]);
}

/* The one workspace every call of every layer is handed. */
typedef struct {
    void *ptr;
    size_t bytes;
} workspace;

static workspace workspace_for(const layer *net) {
    workspace ws = {NULL, 0};
    for (int l = 0; l < LAYERS; l++) {
        size_t f = lnl_forward_workspace_size(&net[l].p), b = lnl_backward_workspace_size(&net[l].p);
        if (f > ws.bytes) ws.bytes = f;
        if (b > ws.bytes) ws.bytes = b;
    }
    ws.ptr = ws.bytes ? alloc_zeroed(ws.bytes, 1) : NULL;
    return ws;
}

/* Runs the model on x [BATCH, dims[0]] (float32); acts[l] receives the input of layer l
 * (float32: tanh reads the bf16 y and writes what the next LayerNorm reads). */
static const bf16 *model_forward(layer *net, const float *x, float *acts[LAYERS], workspace ws) {
    const float *in = x;
    for (int l = 0; l < LAYERS; l++) {
        layer *L = &net[l];
        if (l > 0) {
            for (int i = 0; i < BATCH * dims[l]; i++) acts[l][i] = tanhf(from_bf16(net[l - 1].out[i]));
            in = acts[l];
        }
        refresh_bf16_copies(L);
        check(lnl_forward(&L->p, in, L->ln_w, L->ln_b, L->w16, L->b16, L->out, L->mean, L->rstd, NULL,
                          ws.ptr, ws.bytes),
              "lnl_forward");
    }
    return net[LAYERS - 1].out;
}

int main(void) {
    layer teacher[LAYERS], net[LAYERS];
    for (int l = 0; l < LAYERS; l++) layer_init(&teacher[l], dims[l], dims[l + 1], 2.0f);
    for (int l = 0; l < LAYERS; l++) layer_init(&net[l], dims[l], dims[l + 1], 1.0f);
    workspace ws = workspace_for(net); /* the teacher's problems are the same shapes */

    /* The data set: random inputs around 1000, the teacher's outputs as targets. */
    float *X = alloc_f32((size_t)DATA * dims[0]), *T = alloc_f32(DATA);
    for (int i = 0; i < DATA * dims[0]; i++) X[i] = 1000.0f + randn();
    float *acts[LAYERS], *grad_in[LAYERS];
    bf16 *grad_out[LAYERS];
    for (int l = 0; l < LAYERS; l++) {
        acts[l] = alloc_f32((size_t)BATCH * dims[l]);
        grad_in[l] = alloc_f32((size_t)BATCH * dims[l]);
        grad_out[l] = alloc_bf16((size_t)BATCH * dims[l + 1]);
    }
    for (int s = 0; s < DATA; s += BATCH) {
        const bf16 *y = model_forward(teacher, X + (size_t)s * dims[0], acts, ws);
        for (int i = 0; i < BATCH; i++) T[s + i] = from_bf16(y[i]);
    }

    const float lr = 0.05f;
    loss_log log = {0, 0};
    for (int step = 0; step < STEPS; step++) {
        int s = (step * BATCH) % DATA;
        const float *x = X + (size_t)s * dims[0], *t = T + s;
        const bf16 *y = model_forward(net, x, acts, ws);
        double loss = 0;
        for (int i = 0; i < BATCH; i++) {
            double d = from_bf16(y[i]) - t[i];
            loss += d * d / BATCH;
            grad_out[LAYERS - 1][i] = to_bf16((float)(2.0 * d / BATCH)); /* d loss / d y */
        }
        loss_log_step(&log, step, STEPS, loss);

        for (int l = LAYERS - 1; l >= 0; l--) {
            layer *L = &net[l];
            const float *in = l == 0 ? x : acts[l];
            /* dy bf16 in, dx float32 out (the input of the layer before, through tanh). */
            check(lnl_backward(&L->p, grad_out[l], in, L->ln_w, L->ln_b, L->w16, L->mean, L->rstd, NULL,
                               l > 0 ? grad_in[l] : NULL, L->d_ln_w, L->d_ln_b, L->d_w, L->d_b, ws.ptr,
                               ws.bytes),
                  "lnl_backward");
            if (l > 0) /* through tanh: d pre-activation = d activation * (1 - tanh^2) */
                for (int i = 0; i < BATCH * dims[l]; i++)
                    grad_out[l - 1][i] = to_bf16(grad_in[l][i] * (1.0f - acts[l][i] * acts[l][i]));
        }
        for (int l = 0; l < LAYERS; l++) { /* SGD on the float32 masters */
            layer *L = &net[l];
            int in = dims[l], out = dims[l + 1];
            for (int k = 0; k < in; k++) L->ln_w[k] -= lr * L->d_ln_w[k], L->ln_b[k] -= lr * L->d_ln_b[k];
            for (int i = 0; i < out * in; i++) L->w[i] -= lr * from_bf16(L->d_w[i]);
            for (int n = 0; n < out; n++) L->b[n] -= lr * from_bf16(L->d_b[n]);
        }
    }
    for (int l = 0; l < LAYERS; l++) {
        layer_free(&teacher[l]), layer_free(&net[l]);
        free(acts[l]), free(grad_in[l]), free(grad_out[l]);
    }
    free(X), free(T), free(ws.ptr);
    return loss_log_verdict(&log);
}
