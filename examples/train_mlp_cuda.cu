/*
 * train_mlp_cuda: train_mlp.c's model, teacher and data on the GPU, as C/CUDA training
 * code (llm.c style) would call the library. Every buffer is a device buffer; all work
 * is queued on one stream; one workspace, sized up front for the largest call, serves
 * every lnl_forward / lnl_backward. A training step therefore allocates nothing and
 * never synchronizes, so it is captured once into a CUDA graph and replayed.
 *
 * Besides the library's calls only five small kernels are written here: the batch
 * gather, tanh forward and backward, the loss with its gradient, and SGD. The batch
 * offset and the loss history live on the device, so the replayed graph needs no host
 * work between steps.
 *
 * The model is trained twice from the same weights: with the graph, then launching
 * step by step. The two loss histories must agree bitwise (the library's results are
 * deterministic, captured or not), and the loss must fall 10x.
 * Exits 0 then; 1 when either fails; 77 (ctest's "skipped") without a CUDA device.
 */
#include <cuda_runtime.h>
#include <string.h>

#include "example_util.h"

enum { LAYERS = 3, BATCH = 64, DATA = 2048, STEPS = 3000, IN = 16, HIDDEN = 48 };
static const int dims[LAYERS + 1] = {IN, HIDDEN, HIDDEN, 1};
static const float LR = 0.05f;

#define CUDA_CHECK(call)                                                                        \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

/* ---- the kernels the model needs besides LayerNorm+Linear ---- */

/* x and t of the step's batch, from the data set at offset (*step * BATCH) mod DATA. */
__global__ void gather_batch(const float *X, const float *T, const int *step, float *xb, float *tb) {
    int s = (*step * BATCH) % DATA;
    for (int i = threadIdx.x; i < BATCH * IN; i += blockDim.x) xb[i] = X[(size_t)s * IN + i];
    for (int i = threadIdx.x; i < BATCH; i += blockDim.x) tb[i] = T[s + i];
}

__global__ void tanh_forward(const float *pre, float *act, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) act[i] = tanhf(pre[i]);
}

/* d pre-activation = d activation * (1 - tanh^2) */
__global__ void tanh_backward(const float *dact, const float *act, float *dpre, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dpre[i] = dact[i] * (1.0f - act[i] * act[i]);
}

/* Mean squared error of y [BATCH] against t, its gradient, and the loss recorded at
 * loss_hist[*step]; one block of BATCH threads. Then the step counter moves on. */
__global__ void mse_loss(const float *y, const float *t, float *dy, float *loss_hist, int *step) {
    __shared__ float sq[BATCH];
    int i = threadIdx.x;
    float d = y[i] - t[i];
    dy[i] = 2.0f * d / BATCH;
    sq[i] = d * d / BATCH;
    __syncthreads();
    for (int h = BATCH / 2; h > 0; h /= 2) { /* a fixed order: the same bits every run */
        if (i < h) sq[i] += sq[i + h];
        __syncthreads();
    }
    if (i == 0) loss_hist[*step] = sq[0];
}

__global__ void advance(int *step) { *step += 1; }

__global__ void sgd(float *p, const float *g, int n, float lr) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] -= lr * g[i];
}

static unsigned blocks(int n) { return (unsigned)((n + 255) / 256); }

/* ---- layers ---- */

typedef struct {
    lnl_problem p;
    float *ln_w, *ln_b, *w, *b;         /* parameters (device) */
    float *d_ln_w, *d_ln_b, *d_w, *d_b; /* their gradients (device) */
    float *out, *mean, *rstd;           /* forward: pre-activation [BATCH, out], statistics */
    float *init;                        /* the initial parameters, on the host: ln_w ln_b w b */
} layer;

static float *dev_alloc(size_t n) {
    float *p;
    CUDA_CHECK(cudaMalloc(&p, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(p, 0, n * sizeof(float)));
    return p;
}

static size_t param_count(int in, int out) { return 2 * (size_t)in + (size_t)out * in + out; }

/* The parameters drawn in train_mlp.c's order, so both examples train the same model. */
static void layer_init(layer *l, int in, int out, float weight_scale, cudaStream_t stream) {
    memset(l, 0, sizeof *l);
    l->p = example_layer_problem(BATCH, in, out);
    l->p.device = LNL_DEVICE_CUDA;
    l->p.stream = stream;
    l->init = (float *)alloc_zeroed(param_count(in, out), sizeof(float));
    float *ln_w = l->init, *ln_b = ln_w + in, *w = ln_b + in, *b = w + (size_t)out * in;
    draw_layer_params(in, out, weight_scale, ln_w, ln_b, w, b);
    l->ln_w = dev_alloc(in), l->ln_b = dev_alloc(in), l->d_ln_w = dev_alloc(in), l->d_ln_b = dev_alloc(in);
    l->w = dev_alloc((size_t)out * in), l->d_w = dev_alloc((size_t)out * in);
    l->b = dev_alloc(out), l->d_b = dev_alloc(out);
    l->out = dev_alloc((size_t)BATCH * out), l->mean = dev_alloc(BATCH), l->rstd = dev_alloc(BATCH);
}

/* Parameters back to their initial values. */
static void layer_reset(layer *l) {
    int in = (int)l->p.in_features, out = (int)l->p.out_features;
    const float *h = l->init;
    CUDA_CHECK(cudaMemcpy(l->ln_w, h, in * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(l->ln_b, h + in, in * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(l->w, h + 2 * in, (size_t)out * in * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(l->b, h + 2 * in + (size_t)out * in, out * sizeof(float), cudaMemcpyHostToDevice));
}

static void layer_free(layer *l) {
    float *bufs[] = {l->ln_w, l->ln_b, l->w, l->b, l->d_ln_w, l->d_ln_b, l->d_w, l->d_b, l->out, l->mean, l->rstd};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) CUDA_CHECK(cudaFree(bufs[k]));
    free(l->init);
}

/* Everything a step touches. */
typedef struct {
    layer teacher[LAYERS], net[LAYERS];
    float *X, *T;              /* the data set and the teacher's targets */
    float *xb, *tb;            /* the step's batch */
    float *acts[LAYERS];       /* acts[l]: the input of layer l (l > 0) */
    float *grad_in[LAYERS];    /* d loss / d input of layer l */
    float *grad_out[LAYERS];   /* d loss / d output (pre-activation) of layer l */
    float *loss_hist;          /* [STEPS] */
    int *step;                 /* the device's step counter */
    void *ws;                  /* one workspace for every call */
    size_t ws_bytes;
    cudaStream_t stream;
} model;

/* The model on x [BATCH, dims[0]], every call on m->stream; returns its output [BATCH]. */
static const float *model_forward(model *m, layer *net, const float *x) {
    const float *in = x;
    for (int l = 0; l < LAYERS; l++) {
        if (l > 0) {
            int n = BATCH * dims[l];
            tanh_forward<<<blocks(n), 256, 0, m->stream>>>(net[l - 1].out, m->acts[l], n);
            in = m->acts[l];
        }
        layer *L = &net[l];
        check(lnl_forward(&L->p, in, L->ln_w, L->ln_b, L->w, L->b, L->out, L->mean, L->rstd, NULL,
                          m->ws, m->ws_bytes),
              "lnl_forward");
    }
    return net[LAYERS - 1].out;
}

/* One training step: nothing but work queued on m->stream. */
static void train_step(model *m) {
    gather_batch<<<1, 256, 0, m->stream>>>(m->X, m->T, m->step, m->xb, m->tb);
    const float *y = model_forward(m, m->net, m->xb);
    mse_loss<<<1, BATCH, 0, m->stream>>>(y, m->tb, m->grad_out[LAYERS - 1], m->loss_hist, m->step);
    for (int l = LAYERS - 1; l >= 0; l--) {
        layer *L = &m->net[l];
        const float *in = l == 0 ? m->xb : m->acts[l];
        check(lnl_backward(&L->p, m->grad_out[l], in, L->ln_w, L->ln_b, L->w, L->mean, L->rstd, NULL,
                           l > 0 ? m->grad_in[l] : NULL, L->d_ln_w, L->d_ln_b, L->d_w, L->d_b, m->ws,
                           m->ws_bytes),
              "lnl_backward");
        if (l > 0) {
            int n = BATCH * dims[l];
            tanh_backward<<<blocks(n), 256, 0, m->stream>>>(m->grad_in[l], m->acts[l], m->grad_out[l - 1], n);
        }
    }
    for (int l = 0; l < LAYERS; l++) {
        layer *L = &m->net[l];
        int in = dims[l], out = dims[l + 1];
        sgd<<<blocks(in), 256, 0, m->stream>>>(L->ln_w, L->d_ln_w, in, LR);
        sgd<<<blocks(in), 256, 0, m->stream>>>(L->ln_b, L->d_ln_b, in, LR);
        sgd<<<blocks(out * in), 256, 0, m->stream>>>(L->w, L->d_w, out * in, LR);
        sgd<<<blocks(out), 256, 0, m->stream>>>(L->b, L->d_b, out, LR);
    }
    advance<<<1, 1, 0, m->stream>>>(m->step);
    CUDA_CHECK(cudaGetLastError());
}

/* Trains m->net from its initial weights for STEPS steps, with a CUDA graph or launch by
 * launch; the loss of every step lands in hist (host). */
static void train(model *m, int use_graph, float *hist) {
    for (int l = 0; l < LAYERS; l++) layer_reset(&m->net[l]);
    CUDA_CHECK(cudaMemset(m->step, 0, sizeof(int)));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the copies above ran outside m->stream */
    if (!use_graph) {
        for (int s = 0; s < STEPS; s++) train_step(m);
    } else {
        /* Step 0 runs as plain launches: a library's first call may set kernel attributes
         * or query the device, which belongs outside a capture. */
        train_step(m);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(m->stream, cudaStreamCaptureModeThreadLocal));
        train_step(m);
        CUDA_CHECK(cudaStreamEndCapture(m->stream, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        for (int s = 1; s < STEPS; s++) CUDA_CHECK(cudaGraphLaunch(exec, m->stream));
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    CUDA_CHECK(cudaStreamSynchronize(m->stream));
    CUDA_CHECK(cudaMemcpy(hist, m->loss_hist, STEPS * sizeof(float), cudaMemcpyDeviceToHost));
}

int main(void) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    model m;
    memset(&m, 0, sizeof m);
    CUDA_CHECK(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking));
    for (int l = 0; l < LAYERS; l++) layer_init(&m.teacher[l], dims[l], dims[l + 1], 2.0f, m.stream);
    for (int l = 0; l < LAYERS; l++) layer_init(&m.net[l], dims[l], dims[l + 1], 1.0f, m.stream);
    for (int l = 0; l < LAYERS; l++) layer_reset(&m.teacher[l]);

    /* One workspace: the most any call of either model asks for. */
    for (int l = 0; l < LAYERS; l++) {
        size_t f = lnl_forward_workspace_size(&m.net[l].p), b = lnl_backward_workspace_size(&m.net[l].p);
        if (f > m.ws_bytes) m.ws_bytes = f;
        if (b > m.ws_bytes) m.ws_bytes = b;
    }
    if (m.ws_bytes) CUDA_CHECK(cudaMalloc(&m.ws, m.ws_bytes));

    /* The data set: random inputs, the teacher's outputs as targets. */
    float *X = (float *)alloc_zeroed((size_t)DATA * dims[0], sizeof(float));
    for (int i = 0; i < DATA * dims[0]; i++) X[i] = randn();
    m.X = dev_alloc((size_t)DATA * dims[0]), m.T = dev_alloc(DATA);
    CUDA_CHECK(cudaMemcpy(m.X, X, (size_t)DATA * dims[0] * sizeof(float), cudaMemcpyHostToDevice));
    m.xb = dev_alloc((size_t)BATCH * dims[0]), m.tb = dev_alloc(BATCH);
    for (int l = 0; l < LAYERS; l++) {
        m.acts[l] = dev_alloc((size_t)BATCH * dims[l]);
        m.grad_in[l] = dev_alloc((size_t)BATCH * dims[l]);
        m.grad_out[l] = dev_alloc((size_t)BATCH * dims[l + 1]);
    }
    m.loss_hist = dev_alloc(STEPS);
    CUDA_CHECK(cudaMalloc(&m.step, sizeof(int)));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the copies above ran outside m.stream */
    for (int s = 0; s < DATA; s += BATCH) {
        const float *y = model_forward(&m, m.teacher, m.X + (size_t)s * dims[0]);
        CUDA_CHECK(cudaMemcpyAsync(m.T + s, y, BATCH * sizeof(float), cudaMemcpyDeviceToDevice, m.stream));
    }

    float *hist_graph = (float *)alloc_zeroed(STEPS, sizeof(float));
    float *hist_eager = (float *)alloc_zeroed(STEPS, sizeof(float));
    train(&m, 1, hist_graph);
    train(&m, 0, hist_eager);

    loss_log log = {0, 0};
    for (int s = 0; s < STEPS; s++) loss_log_step(&log, s, STEPS, hist_graph[s]);
    int status = loss_log_verdict(&log);
    if (memcmp(hist_graph, hist_eager, STEPS * sizeof(float)) != 0) {
        int s = 0;
        while (s < STEPS - 1 && hist_graph[s] == hist_eager[s]) s++;
        printf("FAILED: the graph's losses differ from the launches' from step %d (%.9g vs %.9g)\n", s,
               hist_graph[s], hist_eager[s]);
        status = 1;
    } else {
        printf("the graph's %d losses and the launches' agree bitwise\n", STEPS);
    }

    for (int l = 0; l < LAYERS; l++) {
        layer_free(&m.teacher[l]);
        layer_free(&m.net[l]);
        float *bufs[] = {m.acts[l], m.grad_in[l], m.grad_out[l]};
        for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) CUDA_CHECK(cudaFree(bufs[k]));
    }
    float *bufs[] = {m.X, m.T, m.xb, m.tb, m.loss_hist};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) CUDA_CHECK(cudaFree(bufs[k]));
    CUDA_CHECK(cudaFree(m.step));
    if (m.ws) CUDA_CHECK(cudaFree(m.ws));
    CUDA_CHECK(cudaStreamDestroy(m.stream));
    free(X), free(hist_graph), free(hist_eager);
    return status;
}
