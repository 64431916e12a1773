/* ln_float32 on CUDA (lnlinear.h): torch.autocast's split of the pair. x, ln_weight,
 * ln_bias, dx, dln_weight and dln_bias are float32; linear_weight, linear_bias, y, dy,
 * dlinear_weight, dlinear_bias and ln_out are in the 16-bit dtype.
 *
 * One order for every strategy, the UNFUSED one: a float32 LayerNorm pass writes LN(x)
 * rounded once to the 16-bit dtype (as eager's autocast casts its float32 LayerNorm's
 * output for F.linear), and cuBLASLt multiplies it. The fused kernels take a 16-bit x
 * only, and folding gamma into W (their epilogue form) would round gamma * W to 16 bits,
 * a product eager never rounds. What the split saves over the alternative (autocast.py
 * casting a centred x to 16 bits first) is a pass over x in the forward and one in the
 * backward, and a float32 row keeps its spread whatever its mean.
 *
 * Backward: a float32 statistics pass (mean, rstd and the exact row shift, as float32
 * problems take it: launch_ln_forward) that also rebuilds the 16-bit LN(x) when dW needs
 * it; dW = dy^T LN(x) and dxhat = dy W (float32 out) from cuBLASLt; then the float32
 * LayerNorm backward (the F32 kernels: dxhat, x, gamma and dx are all float32). */
#include "backend_util.cuh"
#include "cuda_common.cuh"

namespace lnl {

struct mixed_fwd_layout {
    float *mean, *rstd;
    void *ln_out; /* 16-bit LN(x) [M,K] */
    void *lt;
    size_t total;
};
static mixed_fwd_layout mixed_fwd_carve(const lnl_problem *p, void *base) {
    carver c{(char *)base, 0};
    const size_t M = (size_t)p->rows, K = (size_t)p->in_features;
    mixed_fwd_layout l;
    l.mean = (float *)c.take(M * 4);
    l.rstd = (float *)c.take(M * 4);
    l.ln_out = c.take(M * K * lnl_dtype_size(p->dtype));
    l.lt = c.take(LT_WORKSPACE);
    l.total = c.used;
    return l;
}

struct mixed_bwd_layout {
    float *mean, *rstd, *shift;
    void *act; /* the 16-bit LN(x) for the dW GEMM, then the float32 dxhat over it */
    float *part_g, *part_b, *part_db;
    void *lt;
    size_t total;
};
static mixed_bwd_layout mixed_bwd_carve(const lnl_problem *p, int64_t G, int64_t G2, void *base) {
    carver c{(char *)base, 0};
    const size_t M = (size_t)p->rows, K = (size_t)p->in_features, N = (size_t)p->out_features;
    mixed_bwd_layout l;
    l.mean = (float *)c.take(M * 4);
    l.rstd = (float *)c.take(M * 4);
    l.shift = (float *)c.take(M * 4);
    l.act = c.take(M * K * 4);
    l.part_g = (float *)c.take((size_t)G * K * 4);
    l.part_b = (float *)c.take((size_t)G * K * 4);
    l.part_db = (float *)c.take((size_t)G2 * N * 4);
    l.lt = c.take(LT_WORKSPACE);
    l.total = c.used;
    return l;
}

size_t mixed_forward_workspace_size(const lnl_problem *p) { return mixed_fwd_carve(p, nullptr).total; }

size_t mixed_backward_workspace_size(const lnl_problem *p, const device_info &d) {
    return mixed_bwd_carve(p, ln_bwd_grid(LNL_DTYPE_F32, p->rows, p->in_features, d),
                           colsum_grid(p->dtype, p->rows, p->out_features, d), nullptr)
        .total;
}

lnl_status mixed_forward(const lnl_fwd_args *a, const device_info &d) {
    const lnl_problem *p = &a->p;
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    const lnl_dtype dt = p->dtype;
    cudaStream_t s = (cudaStream_t)p->stream;
    scoped_ws own;
    void *base = nullptr;
    ST_TRY(acquire_ws(a->workspace, mixed_fwd_carve(p, nullptr).total, s, &own, &base));
    const mixed_fwd_layout l = mixed_fwd_carve(p, base);
    float *mean = a->mean ? (float *)a->mean : l.mean, *rstd = a->rstd ? (float *)a->rstd : l.rstd;
    void *ln_out = a->ln_out ? a->ln_out : l.ln_out;
    CU_TRY("float32 layernorm forward (16-bit LN(x))",
           launch_ln_forward_mixed(dt, (const float *)a->x, (const float *)a->ln_weight,
                                   (const float *)a->ln_bias, ln_out, mean, rstd, nullptr, M, K,
                                   (float)p->eps, d, s));
    return linear_of_ln_out(dt, a->linear_weight, ln_out, a->linear_bias, a->y, M, K, N, l.lt, s);
}

lnl_status mixed_backward(const lnl_bwd_args *a, const device_info &d) {
    const lnl_problem *p = &a->p;
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    const lnl_dtype dt = p->dtype;
    cudaStream_t s = (cudaStream_t)p->stream;
    const int64_t G = ln_bwd_grid(LNL_DTYPE_F32, M, K, d), G2 = colsum_grid(dt, M, N, d);
    scoped_ws own;
    void *base = nullptr;
    ST_TRY(acquire_ws(a->workspace, mixed_bwd_carve(p, G, G2, nullptr).total, s, &own, &base));
    const mixed_bwd_layout l = mixed_bwd_carve(p, G, G2, base);
    const bool rebuild = a->dlinear_weight && !a->ln_out;
    const bool ln_bwd_runs = a->dx || a->dln_weight || a->dln_bias;
    /* The statistics pass: the float32 LayerNorm backward needs the exact row shift, which
     * the saved mean cannot give (as in float32 problems); the same read of x rebuilds the
     * 16-bit LN(x) into the act region where dW needs it. Its mean and rstd are the
     * forward's, bit for bit (the same kernels' order). */
    if (rebuild || ln_bwd_runs)
        CU_TRY(rebuild ? "float32 layernorm forward (LN(x) rebuilt)" : "float32 layernorm statistics",
               launch_ln_forward_mixed(dt, (const float *)a->x, rebuild ? (const float *)a->ln_weight : nullptr,
                                       rebuild ? (const float *)a->ln_bias : nullptr,
                                       rebuild ? l.act : nullptr, l.mean, l.rstd, l.shift, M, K,
                                       (float)p->eps, d, s));
    /* 1. dW^T[K,N] = ln_out^T[K,M] @ (dy^T[N,M])^T-op, before dxhat takes the act region */
    if (a->dlinear_weight)
        ST_TRY(lt_matmul(dt, false, false, true, K, N, M, rebuild ? l.act : a->ln_out, K, a->dy, N,
                         a->dlinear_weight, K, LT_NONE, nullptr, l.lt, LT_WORKSPACE, s));
    /* 2. db: column sums of dy in a fixed order, in the 16-bit dtype */
    if (a->dlinear_bias) {
        CU_TRY("bias-gradient partials", launch_colsum_partials(dt, a->dy, M, N, G2, l.part_db, s));
        CU_TRY("ordered reduction (db)", launch_reduce_partials(dt, l.part_db, G2, N, a->dlinear_bias, s));
    }
    if (!ln_bwd_runs) return LNL_STATUS_SUCCESS;
    /* 3. dxhat^T[K,M] = W^T[K,N] @ dy^T[N,M] in float32, then the float32 LayerNorm backward */
    ST_TRY(lt_matmul(dt, true, false, false, K, M, N, a->linear_weight, K, a->dy, N, l.act, K, LT_NONE,
                     nullptr, l.lt, LT_WORKSPACE, s));
    const bool parts = a->dln_weight || a->dln_bias;
    CU_TRY("float32 layernorm backward",
           launch_ln_backward(LNL_DTYPE_F32, l.act, a->x, l.mean, l.rstd, l.shift, a->ln_weight, a->dx,
                              parts ? l.part_g : nullptr, parts ? l.part_b : nullptr, M, K, G, d, s));
    reduce_job jobs[2];
    int njobs = 0;
    if (a->dln_weight) jobs[njobs++] = {l.part_g, G, K, a->dln_weight};
    if (a->dln_bias) jobs[njobs++] = {l.part_b, G, K, a->dln_bias};
    if (njobs)
        CU_TRY("ordered reductions (dln_weight, dln_bias)",
               launch_reduce_partials(LNL_DTYPE_F32, jobs, njobs, s));
    return LNL_STATUS_SUCCESS;
}

} // namespace lnl
