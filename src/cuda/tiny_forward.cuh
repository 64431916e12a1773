/* The whole forward of a tiny problem in one thread block, every dtype: y, mean and rstd
 * from one launch, where the float32 path took two (the statistics pass, then the SIMT
 * GEMM) and bf16/f16 the mma.sync kernel, and a tiny problem's time is its launches.
 * H200, FUSED forward at 16,8,16: f32 0.0076-0.0087 ms against 0.0105-0.0111 for the two
 * launches, bf16 0.0072-0.0082 against 0.0105-0.0108 (tiny_kernels.cu has the others).
 *
 * Written as tiny_backward.cuh is: phases separated by sync(), each a loop over its
 * outputs strided by the block's threads, every sum whole in one thread in a fixed order,
 * so the body run by one thread on the host (tests/cuda/test_tiny_forward_host.cu) is the
 * kernel's arithmetic bit for bit. Everything lives in shared memory as float. */
#ifndef LNL_TINY_FORWARD_CUH
#define LNL_TINY_FORWARD_CUH

#include "tiny_common.cuh"

namespace lnl {

/* W's rows in shared memory are this far apart: an odd stride, so the 32 threads of a
 * warp, which read 32 different rows at one k in the last phase, hit 32 banks. */
__host__ __device__ inline int64_t tiny_forward_w_stride(int64_t K) { return K | 1; }

/* Shared-memory floats the body uses: LN(x) (M x K), W (N rows of the stride above),
 * gamma and beta (K each), and three per-row values. */
__host__ __device__ inline int64_t tiny_forward_floats(int64_t M, int64_t K, int64_t N) {
    return M * K + N * tiny_forward_w_stride(K) + 2 * K + 3 * M;
}

__host__ __device__ inline bool tiny_forward_fits(int64_t M, int64_t K, int64_t N) {
    return tiny_fits(M, K, N, tiny_forward_floats(M, K, N));
}

/* Inputs (gamma, beta, bias may be NULL: ones/zeros/zeros) and outputs (mean and rstd
 * may be NULL). */
template <typename T> struct tiny_fwd_args {
    const T *x, *gamma, *beta, *w, *bias; /* x [M, K], gamma/beta [K], w [N, K], bias [N] */
    T *y;                                 /* [M, N] */
    float *mean, *rstd;                   /* [M] */
    int M, K, N;
    float eps;
};

/* The body; sm holds tiny_forward_floats(M, K, N) floats. tid/nthreads: this thread and
 * the block's size; sync(): a barrier across the block (nothing on one thread). */
#pragma nv_exec_check_disable
template <typename T, typename Sync>
__host__ __device__ void tiny_forward_body(const tiny_fwd_args<T> &a, float *sm, int tid,
                                           int nthreads, Sync sync) {
    const int M = a.M, K = a.K, N = a.N, WS = (int)tiny_forward_w_stride(K);
    float *ln = sm;          /* x, then LN(x)  [M, K] */
    float *ws = ln + M * K;  /* W              [N, WS] */
    float *gam = ws + N * WS, *bet = gam + K;
    float *x0 = bet + K, *mu = x0 + M, *rs = mu + M; /* mu: mean - x0 */

    /* 1. operands into shared memory */
    for (int i = tid; i < M * K; i += nthreads) ln[i] = tb_load(a.x[i]);
    for (int i = tid; i < N * K; i += nthreads) ws[(i / K) * WS + i % K] = tb_load(a.w[i]);
    for (int k = tid; k < K; k += nthreads) {
        gam[k] = a.gamma ? tb_load(a.gamma[k]) : 1.f;
        bet[k] = a.beta ? tb_load(a.beta[k]) : 0.f;
    }
    sync();
    /* 2. each row's mean and rstd, out to the caller too */
    for (int m = tid; m < M; m += nthreads) {
        x0[m] = ln[m * K];
        tiny_row_stats(ln + m * K, K, a.eps, &mu[m], &rs[m]);
        if (a.mean) a.mean[m] = x0[m] + mu[m];
        if (a.rstd) a.rstd[m] = rs[m];
    }
    sync();
    /* 3. LN(x) in place */
    for (int i = tid; i < M * K; i += nthreads) {
        const int m = i / K, k = i % K;
        ln[i] = ((ln[i] - x0[m]) - mu[m]) * rs[m] * gam[k] + bet[k];
    }
    sync();
    /* 4. y = LN(x) W^T + bias: consecutive threads take consecutive columns of a row */
    for (int i = tid; i < M * N; i += nthreads) {
        const int m = i / N, n = i % N;
        const float *l = ln + m * K, *w = ws + n * WS;
        float acc = 0.f;
        for (int k = 0; k < K; k++) acc += l[k] * w[k];
        a.y[i] = tb_store<T>(a.bias ? acc + tb_load(a.bias[n]) : acc);
    }
}

} // namespace lnl

#endif /* LNL_TINY_FORWARD_CUH */
