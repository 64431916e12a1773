/* The whole backward of a tiny problem in one thread block: the five gradients of
 * y = LayerNorm(x) @ W^T + b from one launch, where the general path takes five (dW, the
 * bias column sums, dy . W, the LayerNorm backward, the ordered reductions) and a tiny
 * problem's time is its launches (H200, bf16, 16,8,16: backward 0.034 ms, forward 0.012).
 *
 * Written as phases separated by sync(), each phase a loop over its outputs strided by
 * the block's threads, with every reduction done whole by one thread in a fixed order:
 * so the results are bitwise the same for any thread count, and the body run by one
 * thread on the host (tests/cuda/test_tiny_backward_host.cu) computes exactly what the
 * kernel computes. Everything lives in shared memory as float.
 *
 * The row statistics are recomputed here (two passes over a row of at most a few
 * hundred values) rather than read from the forward's mean/rstd: float32 needs the
 * row's own mean to subtract exactly (the general path runs a statistics pass for it),
 * and it costs nothing at this size. */
#ifndef LNL_TINY_BACKWARD_CUH
#define LNL_TINY_BACKWARD_CUH

#include "tiny_common.cuh"

namespace lnl {

/* Shared-memory floats the body uses: x-hat and dxhat (M x K each), dy (M x N), W
 * (N x K), gamma and beta (K each), and four per-row values. */
__host__ __device__ inline int64_t tiny_backward_floats(int64_t M, int64_t K, int64_t N) {
    return 2 * M * K + M * N + N * K + 2 * K + 4 * M;
}

__host__ __device__ inline bool tiny_backward_fits(int64_t M, int64_t K, int64_t N) {
    return tiny_fits(M, K, N, tiny_backward_floats(M, K, N));
}

/* Inputs (gamma/beta may be NULL: ones/zeros) and outputs (each may be NULL). */
template <typename T> struct tiny_bwd_args {
    const T *x, *dy, *w, *gamma, *beta; /* x [M, K], dy [M, N], w [N, K] */
    T *dx, *dgamma, *dbeta, *dw, *db;   /* dx [M, K], dgamma/dbeta [K], dw [N, K], db [N] */
    int M, K, N;
    float eps;
};

/* The body; sm holds tiny_backward_floats(M, K, N) floats. tid/nthreads: this thread
 * and the block's size; sync(): a barrier across the block (nothing on one thread). */
#pragma nv_exec_check_disable
template <typename T, typename Sync>
__host__ __device__ void tiny_backward_body(const tiny_bwd_args<T> &a, float *sm, int tid,
                                            int nthreads, Sync sync) {
    const int M = a.M, K = a.K, N = a.N;
    const bool need_dxhat = a.dx || a.dgamma || a.dbeta;
    float *xh = sm;          /* x, then x-hat = (x - mean) * rstd  [M, K] */
    float *gd = xh + M * K;  /* dxhat = dy . W                     [M, K] */
    float *dys = gd + M * K; /* dy                                 [M, N] */
    float *ws = dys + M * N; /* W                                  [N, K] */
    float *gam = ws + N * K, *bet = gam + K;
    float *mu = bet + K, *rs = mu + M, *c1 = rs + M, *c2 = c1 + M; /* mu: mean - x0 */

    /* 1. operands into shared memory */
    for (int i = tid; i < M * K; i += nthreads) xh[i] = tb_load(a.x[i]);
    for (int i = tid; i < M * N; i += nthreads) dys[i] = tb_load(a.dy[i]);
    if (need_dxhat)
        for (int i = tid; i < N * K; i += nthreads) ws[i] = tb_load(a.w[i]);
    for (int k = tid; k < K; k += nthreads) {
        gam[k] = a.gamma ? tb_load(a.gamma[k]) : 1.f;
        bet[k] = a.beta ? tb_load(a.beta[k]) : 0.f;
    }
    sync();
    /* 2. each row's mean and rstd */
    for (int m = tid; m < M; m += nthreads) tiny_row_stats(xh + m * K, K, a.eps, &mu[m], &rs[m]);
    sync();
    /* 3. x-hat in place; x0 from the input, since another thread of this phase may already
     * have overwritten the row's first element in shared memory */
    for (int i = tid; i < M * K; i += nthreads) {
        const int m = i / K;
        xh[i] = ((xh[i] - tb_load(a.x[m * K])) - mu[m]) * rs[m];
    }
    sync();
    /* 4. dW = dy^T . LN(x), db = column sums of dy, dxhat = dy . W: sums over rows in order */
    if (a.dw)
        for (int i = tid; i < N * K; i += nthreads) {
            const int n = i / K, k = i % K;
            float acc = 0.f;
            for (int m = 0; m < M; m++) acc += dys[m * N + n] * (xh[m * K + k] * gam[k] + bet[k]);
            a.dw[i] = tb_store<T>(acc);
        }
    if (a.db)
        for (int n = tid; n < N; n += nthreads) {
            float acc = 0.f;
            for (int m = 0; m < M; m++) acc += dys[m * N + n];
            a.db[n] = tb_store<T>(acc);
        }
    if (need_dxhat)
        for (int i = tid; i < M * K; i += nthreads) {
            const int m = i / K, k = i % K;
            float acc = 0.f;
            for (int n = 0; n < N; n++) acc += dys[m * N + n] * ws[n * K + k];
            gd[i] = acc;
        }
    sync();
    /* 5. dgamma, dbeta (column sums) and the two row means of the LayerNorm backward */
    if (a.dgamma || a.dbeta)
        for (int k = tid; k < K; k += nthreads) {
            float sg = 0.f, sb = 0.f;
            for (int m = 0; m < M; m++) {
                sg += gd[m * K + k] * xh[m * K + k];
                sb += gd[m * K + k];
            }
            if (a.dgamma) a.dgamma[k] = tb_store<T>(sg);
            if (a.dbeta) a.dbeta[k] = tb_store<T>(sb);
        }
    if (a.dx)
        for (int m = tid; m < M; m += nthreads) {
            float s1 = 0.f, s2 = 0.f;
            for (int k = 0; k < K; k++) {
                const float g = gd[m * K + k] * gam[k];
                s1 += g * xh[m * K + k];
                s2 += g;
            }
            c1[m] = s1 / (float)K;
            c2[m] = s2 / (float)K;
        }
    sync();
    /* 6. dx = rstd * (g - mean(g) - x-hat * mean(g * x-hat)), g = dxhat * gamma */
    if (a.dx)
        for (int i = tid; i < M * K; i += nthreads) {
            const int m = i / K, k = i % K;
            const float g = gd[i] * gam[k];
            a.dx[i] = tb_store<T>(rs[m] * (g - c2[m] - xh[i] * c1[m]));
        }
}

} // namespace lnl

#endif /* LNL_TINY_BACKWARD_CUH */
