/* The CUDA backend's entry points (declared in src/api/internal.h): capability
 * checks, workspace sizing and carving, and the order of kernels and cuBLASLt
 * calls for each strategy. Everything is queued on a->p.stream; nothing syncs. */
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "backend_util.cuh"
#include "cuda_common.cuh"
#include "dx_epilogue_sm90.cuh"
#include "fused_sm90.cuh"

namespace lnl {

/* Device attributes never change while the process runs, and asking for them costs
 * host time on every call: each device's answer is kept once it is known. Entries are
 * written once, under the mutex, before their ready flag is released. */
constexpr int MAX_CACHED_DEVICES = 64;
static std::mutex g_dev_mutex;
static device_info g_dev_info[MAX_CACHED_DEVICES];
static std::atomic<bool> g_dev_ready[MAX_CACHED_DEVICES];

static cudaError_t device_attributes(int device, device_info *d) {
    int smem = 0;
    d->device = device;
    cudaError_t e = cudaDeviceGetAttribute(&d->sm_count, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&d->major, cudaDevAttrComputeCapabilityMajor, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&d->minor, cudaDevAttrComputeCapabilityMinor, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    d->max_smem_optin = (size_t)smem;
    return e;
}

lnl_status device_query(device_info *d) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    const bool cacheable = e == cudaSuccess && device >= 0 && device < MAX_CACHED_DEVICES;
    if (cacheable && g_dev_ready[device].load(std::memory_order_acquire)) {
        *d = g_dev_info[device];
        return LNL_STATUS_SUCCESS;
    }
    if (e == cudaSuccess) e = device_attributes(device, d);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return lnl_set_error(LNL_STATUS_DEVICE_ERROR, "CUDA device query failed: %s",
                             cudaGetErrorString(e));
    }
    if (cacheable) {
        std::lock_guard<std::mutex> lock(g_dev_mutex);
        if (!g_dev_ready[device].load(std::memory_order_relaxed)) {
            g_dev_info[device] = *d;
            g_dev_ready[device].store(true, std::memory_order_release);
        }
    }
    return LNL_STATUS_SUCCESS;
}

/* raise_smem_limit's record: a kernel's limit on a device. A full table sets the
 * attribute on every call, as before session 30. */
struct smem_limit {
    const void *kernel;
    int device;
    size_t bytes;
};
constexpr int MAX_SMEM_LIMITS = 256;
static std::mutex g_smem_mutex;
static smem_limit g_smem_limits[MAX_SMEM_LIMITS];
static int g_smem_count = 0;

cudaError_t raise_smem_limit(const void *kernel, size_t bytes, int device, bool again) {
    std::lock_guard<std::mutex> lock(g_smem_mutex);
    int i = 0;
    while (i < g_smem_count && (g_smem_limits[i].kernel != kernel || g_smem_limits[i].device != device))
        i++;
    if (i < g_smem_count && !again && g_smem_limits[i].bytes >= bytes) return cudaSuccess;
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e != cudaSuccess) return e;
    if (i < g_smem_count) g_smem_limits[i].bytes = bytes;
    else if (g_smem_count < MAX_SMEM_LIMITS) g_smem_limits[g_smem_count++] = {kernel, device, bytes};
    return cudaSuccess;
}

int64_t env_int64(const char *name, int64_t fallback) {
    const char *e = getenv(name);
    char *end = nullptr;
    const long long k = e && *e ? strtoll(e, &end, 10) : -1;
    return k >= 0 && end && *end == '\0' ? (int64_t)k : fallback;
}

/* FUSED's float32 forward of problems past the tiny class (M*K*N > 2^24) in the epilogue
 * form, its GEMM cuBLAS's (f32_fold.cu). H200, forward / cuBLAS fp32 GEMM, two same-run
 * rounds (docs/results/cuda/2026-12-02-session15/call2-f32-fold): 8192,4096,4096 1.035 vs
 * the SIMT kernel's 1.46; 16384,8192,1024 1.06 vs 1.49; 32768,4096,256 1.11-1.14 vs
 * 1.55-1.57; 8192,1024,1024 1.15 vs 1.46; 4096,768,768 1.13 vs 1.35-1.39. Its price is
 * accuracy (f32_fold.cu): -DLNL_F32_FOLD=0 builds the SIMT kernel's order instead. */
#ifndef LNL_F32_FOLD
#define LNL_F32_FOLD 1
#endif
/* Problems past the tiny class (M*K*N > 2^24 multiply-adds), where launches no longer
 * decide the time (AUTO's first rule, lnl_cuda_auto_strategy) */
static bool past_tiny_class(const lnl_problem *p) {
    return (double)p->rows * (double)p->in_features * (double)p->out_features > (double)(1 << 24);
}
static bool f32_fold_serves(const lnl_problem *p) {
    return LNL_F32_FOLD && p->dtype == LNL_DTYPE_F32 && p->strategy == LNL_STRATEGY_FUSED &&
           past_tiny_class(p);
}

/* Workspace layouts. Every region is always reserved (sizes are upper bounds over
 * pointer combinations), so the size query and the call carve identically. */
struct fwd_layout {
    float *mean, *rstd, *shift;
    void *act, *lt;
    void *wfold; /* FUSED (bf16/f16; float32 past the tiny class): the epilogue form's W', {c, d}, flag */
    float *cd;
    int *off_centre, *block_flags;
    void *split_part; /* the Hopper forward's split statistics (fused_sm90.cuh) */
    int *split_count;
    size_t total;
};
static fwd_layout fwd_carve(const lnl_problem *p, void *base) {
    carver c{(char *)base, 0};
    const int64_t M = p->rows, K = p->in_features;
    fwd_layout l;
    l.mean = (float *)c.take((size_t)M * 4);
    l.rstd = (float *)c.take((size_t)M * 4);
    l.shift = (float *)c.take((size_t)M * 4);
    l.act = p->strategy == LNL_STRATEGY_UNFUSED ? c.take((size_t)M * K * lnl_dtype_size(p->dtype))
                                                : nullptr;
    l.lt = c.take(LT_WORKSPACE);
    const bool fold = (p->strategy == LNL_STRATEGY_FUSED && lnl_dtype_size(p->dtype) == 2) ||
                      f32_fold_serves(p);
    const int64_t N = p->out_features;
    l.wfold = fold ? c.take((size_t)N * K * lnl_dtype_size(p->dtype)) : nullptr;
    l.cd = fold ? (float *)c.take((size_t)fold_cd_columns(N) * 2 * 4) : nullptr;
    l.off_centre = fold ? (int *)c.take(4) : nullptr;
    l.block_flags = fold ? (int *)c.take(4 * FOLD_PREP_MAX_BLOCKS) : nullptr;
    /* by shape alone (whether the call takes them depends on the device too) */
    const int64_t split_rows =
        fold && lnl_dtype_size(p->dtype) == 2 ? fused_forward_sm90_split_rows(M, K, N) : 0;
    l.split_part =
        split_rows ? c.take((size_t)M * fused_forward_sm90_split_cols(K, N) * 16) : nullptr;
    l.split_count = split_rows ? (int *)c.take((size_t)split_rows * 4) : nullptr;
    l.total = c.used;
    return l;
}

/* The backward's grids: G blocks of LayerNorm backward (rows of dgamma/dbeta partials),
 * G2 row chunks of db partials, splits of the fused dW. Worked out once per call (the
 * LayerNorm grid asks for an occupancy), then used for both the size and the carve. */
struct bwd_plan {
    int64_t G, G2, Gp; /* Gp: the dW prep's partial rows (dw_x) */
    int splits;
    bool dw_x;     /* dW from the raw x (dw_from_x.cu) whenever ln_out is not given */
    bool fused_dw; /* FUSED's own dW kernel (fused_backward.cu) whenever ln_out is not given */
    bool dx_epi;   /* FUSED's dx in the dy . W GEMM's epilogue, given y (dx_epilogue_sm90.cu) */
};
/* A backward without ln_out has three ways to dW = dy^T LN(x), whatever the strategy:
 *  - dW from the raw x (dw_from_x.cu): moves dy (M x N) twice (dy' written and read) and
 *    G, N x K in float32, twice, in six launches;
 *  - LN(x) rebuilt into the workspace for cuBLAS (the `recompute` of backward()): moves
 *    x (M x K) twice, in the LayerNorm pass that writes it (float32: the row-shift pass
 *    that reads x anyway), and then the bias gradient's column sums read dy once;
 *  - the fused dW kernel, LN(x) rebuilt while loading it (mma.sync, or SIMT in float32):
 *    one launch, but 5x cuBLAS's time at 8192,4096,4096 (1.70 vs 0.34 ms,
 *    bench/cuda/profile_cuda.py, 2026-12-01).
 * Taken: dW from the raw x where N < K (bf16; float32 since session 16, -DLNL_F32_DW_X=0
 * builds without it; f16 since session 41, its rstd dy scaled by a power of two to stay
 * in f16's range: dw_from_x.cu), the rebuild where N >= K, and the fused kernel for
 * launch-bound problems only (M*K*N <= 2^24, AUTO's tiny class, where the others'
 * launches cost more than they save).
 * The rebuild's workspace is the dxhat region the backward holds anyway; dW from the raw
 * x adds dy' (M x N) and G.
 * Until session 28 FUSED took dW from the raw x at every N (f16: the fused kernel), though
 * at N >= K the rebuild moves fewer bytes in half the launches. FUSED backward ms, H200,
 * old (a9820aa) / new in turn, lnl-bench (docs/results/cuda/2026-12-03-session28/call1):
 * bf16, two rounds: 4096,768,768 0.069, 0.057 / 0.048, 0.054; 8192,768,3072 0.183, 0.180 /
 * 0.151, 0.151; 8192,1024,1024 0.115, 0.111 / 0.097, 0.098; 8192,4096,4096 0.947, 0.946 /
 * 0.921, 0.910; 8192,4096,12288 2.66, 2.69 / 2.53, 2.55. f16: 8192,768,3072 0.598 / 0.158;
 * 8192,4096,4096 2.23 / 0.95; 16384,8192,1024 (N < K) 2.40 / 1.25. float32: 8192,1024,1024
 * 0.778 / 0.756. And earlier, float32's dW from the raw x against the SIMT dW kernel
 * (session 16, docs/results/cuda/2026-12-02-session16/call2-f32-dw-x), FUSED
 * forward+backward / floor: 4096,768,768 1.07-1.09 vs 1.66-1.68; 8192,1024,1024 1.08-1.09
 * vs 1.58-1.60; 32768,4096,256 1.08 vs 1.55-1.58. */
#ifndef LNL_F32_DW_X
#define LNL_F32_DW_X 1
#endif
/* N < K: where N >= K the LN(x) rebuild (written by the LayerNorm backward, which reads x
 * anyway) is as fast or faster. Session 43 (call 6, branch s43-dwx-wide, AUTO backward ms,
 * three rounds in turn, rebuild / raw x): 8192,1024,1024 bf16 0.0877, 0.0923, 0.0876 /
 * 0.0999, 0.1025, 0.0998, f16 0.0891, 0.0929, 0.0894 / 0.1114, 0.1136, 0.1115; ties at
 * 8192,768,3072, 4096,768,768 and 8192,4096,4096 in both dtypes. */
static bool dw_from_x_serves(const lnl_problem *p) {
    return (p->dtype == LNL_DTYPE_BF16 || p->dtype == LNL_DTYPE_F16 ||
            (LNL_F32_DW_X && p->dtype == LNL_DTYPE_F32)) &&
           past_tiny_class(p) && p->out_features < p->in_features;
}
/* FUSED's dx epilogue needs dW from the raw x (its dgamma and dbeta come from that path's
 * G) and a bf16 or f16 problem on Hopper; backward() also needs y, dx and dlinear_weight asked
 * for, no ln_out, and aligned operands. */
static bool dx_epi_serves(const lnl_problem *p, const device_info &d) {
    return p->strategy == LNL_STRATEGY_FUSED && dw_from_x_serves(p) &&
           dx_epilogue_serves(p->dtype, p->rows, p->in_features, p->out_features, d);
}
static bwd_plan bwd_plan_for(const lnl_problem *p, const device_info &d) {
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    bwd_plan pl;
    pl.G = ln_bwd_grid(p->dtype, M, K, d);
    pl.G2 = colsum_grid(p->dtype, M, N, d);
    pl.dw_x = dw_from_x_serves(p);
    pl.fused_dw = p->strategy == LNL_STRATEGY_FUSED && !past_tiny_class(p);
    pl.dx_epi = dx_epi_serves(p, d);
    pl.Gp = pl.dw_x ? dw_prep_rows(p->dtype, M, N, d) : 0;
    /* the fused kernel's splits: its own, or dW from the raw x's fallback for rows too far
     * off centre (which writes its partials over G) */
    pl.splits = pl.fused_dw || pl.dw_x ? dw_splits(p->dtype, M, N, K, d) : 1;
    return pl;
}

struct bwd_layout {
    float *mean, *rstd, *shift, *part_g, *part_b, *part_db, *part_dw;
    void *dyp;     /* dw_x: rstd * dy [M,N] */
    float2 *part_uv, *uv; /* dw_x: [Gp,N] and [DW_SUM_CHUNKS,N] {u, v} pairs */
    int *off_centre;
    dx_epilogue_layout epi; /* dx_epi: W^T, the rows' values, ... (null members otherwise) */
    void *act, *lt;
    size_t lt_bytes; /* LT_WORKSPACE, or BLAS_WORKSPACE for float32 (cuBLAS GEMMs) */
    size_t total;
};
/* The act region holds dxhat: M K floats where dxhat_f32, else M K in the 16-bit dtype.
 * A LN(x) rebuilt for cuBLAS's dW GEMM takes no room of its own: a LayerNorm pass writes
 * it there before dxhat exists (float32 dxhat, or no LayerNorm backward), or the
 * LayerNorm backward writes it over dxhat, each thread over the chunks of the row it has
 * just read (16-bit dxhat, ln_in_bwd in backward(); ln_backward.cu's LNOUT kernels).
 * Until session 34 the region was 4 M K + 256 bytes whatever the plan, with LN(x) after
 * dxhat from the next 256-byte boundary: 2 M K + 256 never touched where dW comes from the
 * raw x or the fused dW kernel, and 2 M K more than needed in every other 16-bit backward.
 * At bf16 16384,8192,1024 and 32768,4096,256 it put AUTO's forward+backward peak above
 * eager PyTorch's (900 vs 688 MB, 841 vs 594; bench/compare.py, session 33). */
static size_t act_bytes(const lnl_problem *p) {
    const size_t mk = (size_t)p->rows * (size_t)p->in_features;
    return mk * (dxhat_f32(p->dtype, p->in_features) ? 4 : lnl_dtype_size(p->dtype));
}

static bwd_layout bwd_carve(const lnl_problem *p, const bwd_plan &pl, void *base) {
    carver c{(char *)base, 0};
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    bwd_layout l;
    l.mean = (float *)c.take((size_t)M * 4);
    l.rstd = (float *)c.take((size_t)M * 4);
    l.shift = (float *)c.take((size_t)M * 4);
    const size_t act = act_bytes(p);
    l.act = c.take(act);
    l.part_g = (float *)c.take((size_t)pl.G * K * 4);
    l.part_b = (float *)c.take((size_t)pl.G * K * 4);
    l.part_db = (float *)c.take((size_t)pl.G2 * N * 4);
    /* dw_x: G [N,K] float32 in part_dw, or the fallback's partials over it, and dy'. Both
     * live only in step 1 of backward(), before dxhat exists, so they go inside the act
     * region where they fit (N < K: dy' always does): 32 + 32 MiB less at bf16
     * 16384,8192,1024, 16 + 20 at 32768,4096,256. */
    const size_t pdw_bytes = pl.splits > 1 || pl.dw_x ? (size_t)pl.splits * N * K * 4 : 0;
    const size_t dyp_bytes = pl.dw_x ? align_up((size_t)M * N * lnl_dtype_size(p->dtype), 256) : 0;
    /* dx_epi: its buffers live while dy' and G do, and dxhat never exists: inside the act
     * region after them where they fit (W^T: 2 N K bytes), else of their own */
    const size_t epi_bytes = pl.dx_epi ? dx_epilogue_workspace(M, K, N) : 0;
    const size_t in_act = align_up(pdw_bytes, 256) + dyp_bytes;
    l.epi = dx_epilogue_layout{};
    if (pl.dw_x && dyp_bytes + pdw_bytes <= act) {
        l.dyp = l.act;
        l.part_dw = l.act ? (float *)((char *)l.act + dyp_bytes) : nullptr; /* null: sizing */
        if (epi_bytes) /* a null base (sizing) carves null members */
            l.epi = dx_epilogue_carve(in_act + epi_bytes > act ? c.take(epi_bytes)
                                      : l.act               ? (char *)l.act + in_act
                                                            : nullptr,
                                      M, K, N);
    } else {
        l.part_dw = pdw_bytes ? (float *)c.take(pdw_bytes) : nullptr;
        l.dyp = dyp_bytes ? c.take(dyp_bytes) : nullptr;
        if (epi_bytes) l.epi = dx_epilogue_carve(c.take(epi_bytes), M, K, N);
    }
    l.part_uv = pl.dw_x ? (float2 *)c.take((size_t)pl.Gp * N * 8) : nullptr;
    l.uv = pl.dw_x ? (float2 *)c.take((size_t)DW_SUM_CHUNKS * N * 8) : nullptr;
    /* dw_x: the off-centre flag, then f16's scale word (dw_scale_exp), zeroed together */
    l.off_centre = pl.dw_x ? (int *)c.take(8) : nullptr;
    l.lt_bytes = p->dtype == LNL_DTYPE_F32 ? BLAS_WORKSPACE : LT_WORKSPACE;
    l.lt = c.take(l.lt_bytes);
    l.total = c.used;
    return l;
}

/* ---- forward ---- */
static lnl_status forward(const lnl_fwd_args *a) {
    const lnl_problem *p = &a->p;
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    if (M == 0) return LNL_STATUS_SUCCESS;
    device_info d;
    ST_TRY(device_query(&d));
    if (p->ln_float32) return mixed_forward(a, d);
    cudaStream_t s = (cudaStream_t)p->stream;
    /* A tiny problem's time is its launches: FUSED's forward is then one launch
     * (tiny_forward.cuh) and needs no workspace. */
    if (p->strategy == LNL_STRATEGY_FUSED && !a->ln_out && tiny_forward_serves(M, K, N)) {
        CU_TRY("tiny forward", launch_tiny_forward(p->dtype, a->x, a->ln_weight, a->ln_bias,
                                                   a->linear_weight, a->linear_bias, a->y,
                                                   (float *)a->mean, (float *)a->rstd, M, K, N,
                                                   (float)p->eps, s));
        return LNL_STATUS_SUCCESS;
    }
    const size_t need = fwd_carve(p, nullptr).total;
    scoped_ws own;
    void *base = nullptr;
    ST_TRY(acquire_ws(a->workspace, need, s, &own, &base));
    fwd_layout l = fwd_carve(p, base);
    float *mean = a->mean ? (float *)a->mean : l.mean, *rstd = a->rstd ? (float *)a->rstd : l.rstd;
    const float eps = (float)p->eps;
    /* FUSED with ln_out requested must write LN(x) anyway: then the unfused order is the
     * cheaper one (the GEMM reads what the LayerNorm just wrote). */
    if (p->strategy == LNL_STRATEGY_FUSED && !a->ln_out) {
        bool done = false;
        CU_TRY("fused forward GEMM with statistics",
               launch_fused_forward_with_stats(p->dtype, a->x, mean, rstd, eps, a->ln_weight, a->ln_bias,
                                               a->linear_weight, a->linear_bias, a->y, M, K, N, s, &done));
        if (done) return LNL_STATUS_SUCCESS;
        float *shift = p->dtype == LNL_DTYPE_F32 ? l.shift : nullptr;
        if (f32_fold_serves(p)) {
            const float *W = (const float *)a->linear_weight, *x = (const float *)a->x;
            float *wf = (float *)l.wfold;
            CU_TRY("float32 weight folding",
                   launch_f32_fold(W, (const float *)a->ln_weight, (const float *)a->ln_bias,
                                   (const float *)a->linear_bias, wf, l.cd, l.off_centre, N, K, d, s));
            CU_TRY("layernorm statistics",
                   launch_ln_forward(p->dtype, x, nullptr, nullptr, nullptr, mean, rstd, shift, M, K,
                                     eps, d, s, l.off_centre));
            ST_TRY(lt_matmul(p->dtype, false, true, false, N, M, K, wf, K, x, K, a->y, N, LT_NONE,
                             nullptr, l.lt, LT_WORKSPACE, s));
            CU_TRY("float32 epilogue", launch_f32_fold_epilogue((float *)a->y, mean, rstd, l.cd,
                                                                l.off_centre, M, N, d, s));
            CU_TRY("fused forward GEMM of off-centre rows",
                   launch_fused_forward_gemm(p->dtype, x, mean, rstd, shift, a->ln_weight, a->ln_bias,
                                             W, a->linear_bias, nullptr, a->y, M, K, N, d, s,
                                             l.off_centre));
            return LNL_STATUS_SUCCESS;
        }
        /* On Hopper, the epilogue form: gamma folded into W and the rows' statistics in
         * one launch, which also says which of its blocks met a row too far off centre
         * for that form (the GEMM kernel then sets off_centre, and the transform form
         * redoes the call). */
        const bool fold = LNL_SM90_FOLD && l.wfold &&
                          fused_forward_sm90_runs(p->dtype, M, K, N, a->x, a->linear_weight,
                                                  a->ln_weight, a->ln_bias, d);
        /* With one column of tiles (N <= 256) whose tiles fill 3/4 of the SMs the GEMM
         * kernel computes the statistics. bf16 fused forward, ms, in-kernel statistics
         * vs the pre-pass (H200, same-run rounds, docs/results/cuda/2026-12-01-run-3a3072a):
         * 32768,4096,256 0.151-0.153 vs 0.193; 65536,1024,256 0.102-0.107 vs 0.155-0.157;
         * 16384,2048,128 0.048-0.049 vs 0.064-0.066; 12800,4096,256 (100 tiles)
         * 0.081-0.082 vs 0.095-0.097. With fewer tiles the pre-pass, spread over the whole
         * GPU, won: 0.089-0.092 vs 0.082 at 8192,4096,256 (64 tiles) with the first version
         * of the in-kernel statistics (docs/results/cuda/2026-12-01-stats-inside).
         * The split statistics extend it to 2-8 columns of tiles (N <= 2048) at large K,
         * which share each row's statistics (fused_forward_sm90.cu), in the workspace
         * fwd_carve set aside for them. */
        const bool stats_inside = fold && LNL_SM90_STATS_INSIDE &&
                                  fused_forward_sm90_stats_inside(K, N) &&
                                  4 * fused_forward_sm90_tiles(M, K, N, d) >= 3 * (int64_t)d.sm_count;
        const bool stats_in_prep = fold && !stats_inside && K <= fold_prep_max_stats_k();
        /* split statistics (several column tiles): their counters start at zero */
        const int64_t split_rows = stats_inside ? fused_forward_sm90_split_rows(M, K, N) : 0;
        if (split_rows)
            CU_TRY("cudaMemsetAsync", cudaMemsetAsync(l.split_count, 0, (size_t)split_rows * 4, s));
        int flag_blocks = 0;
        if (fold)
            CU_TRY("weight folding and statistics",
                   launch_fold_prep(p->dtype, a->x, mean, rstd, stats_in_prep ? M : 0, eps,
                                    a->linear_weight, a->ln_weight, a->ln_bias, a->linear_bias,
                                    l.wfold, l.cd, l.off_centre, l.block_flags, N, K, d, s,
                                    &flag_blocks));
        /* after the folding, which clears the flag this pass sets for off-centre rows */
        if (!stats_inside && !stats_in_prep)
            CU_TRY("layernorm statistics",
                   launch_ln_forward(p->dtype, a->x, nullptr, nullptr, nullptr, mean, rstd, shift,
                                     M, K, eps, d, s, fold ? l.off_centre : nullptr));
        const sm90_fold fw{l.wfold,      l.cd, l.off_centre,   l.block_flags, flag_blocks,
                           stats_inside, eps,  l.split_part, l.split_count};
        CU_TRY("fused forward GEMM",
               launch_fused_forward_gemm(p->dtype, a->x, mean, rstd, shift, a->ln_weight, a->ln_bias,
                                         a->linear_weight, a->linear_bias, fold ? &fw : nullptr,
                                         a->y, M, K, N, d, s));
        return LNL_STATUS_SUCCESS;
    }
    void *ln_out = a->ln_out ? a->ln_out : l.act;
    CU_TRY("layernorm forward", launch_ln_forward(p->dtype, a->x, a->ln_weight, a->ln_bias, ln_out,
                                                  mean, rstd, nullptr, M, K, eps, d, s));
    return linear_of_ln_out(p->dtype, a->linear_weight, ln_out, a->linear_bias, a->y, M, K, N, l.lt, s);
}

lnl_status linear_of_ln_out(lnl_dtype dt, const void *W, const void *ln_out, const void *bias, void *y,
                            int64_t M, int64_t K, int64_t N, void *lt, cudaStream_t s) {
    /* column-major view: y^T[N,M] = W[K,N]^T-op @ ln_out^T[K,M] (+ bias per row of y^T) */
    if (bias) {
        const lnl_status st = lt_matmul(dt, false, true, false, N, M, K, W, K, ln_out, K, y, N, LT_BIAS,
                                        (void *)bias, lt, LT_WORKSPACE, s);
        if (st != LNL_STATUS_UNSUPPORTED) return st;
    }
    ST_TRY(lt_matmul(dt, false, true, false, N, M, K, W, K, ln_out, K, y, N, LT_NONE, nullptr, lt,
                     LT_WORKSPACE, s));
    if (bias) CU_TRY("bias add", launch_add_bias(dt, y, bias, M, N, s));
    return LNL_STATUS_SUCCESS;
}

/* ---- backward ---- */
static lnl_status zero_grads(const lnl_bwd_args *a) {
    const lnl_problem *p = &a->p;
    const size_t es = lnl_dtype_size(p->dtype), K = (size_t)p->in_features, N = (size_t)p->out_features;
    const size_t ls = p->ln_float32 ? sizeof(float) : es; /* LayerNorm parameters' gradients */
    cudaStream_t s = (cudaStream_t)p->stream;
    if (a->dln_weight) CU_TRY("cudaMemsetAsync", cudaMemsetAsync(a->dln_weight, 0, K * ls, s));
    if (a->dln_bias) CU_TRY("cudaMemsetAsync", cudaMemsetAsync(a->dln_bias, 0, K * ls, s));
    if (a->dlinear_weight) CU_TRY("cudaMemsetAsync", cudaMemsetAsync(a->dlinear_weight, 0, N * K * es, s));
    if (a->dlinear_bias) CU_TRY("cudaMemsetAsync", cudaMemsetAsync(a->dlinear_bias, 0, N * es, s));
    return LNL_STATUS_SUCCESS;
}

/* float32 backward GEMMs go through cuBLAS with its own default scratch size, as
 * PyTorch runs them: cuBLASLt's heuristic picked slower kernels for them (H200,
 * 4096,768,768: dW 136 vs 100 us; dxhat 129 vs 120 us; gemm_cublas.cu). Column-major
 * D[m,n] = op(A)[m,k] @ op(B)[k,n], D float32 when d_f32. */
static lnl_status bwd_gemm(lnl_dtype dt, bool d_f32, bool transB, int64_t m, int64_t n, int64_t k,
                           const void *A, int64_t lda, const void *B, int64_t ldb, void *D,
                           int64_t ldd, const bwd_layout &l, cudaStream_t s) {
    if (dt == LNL_DTYPE_F32) {
        const lnl_status st = blas_sgemm(false, transB, m, n, k, (const float *)A, lda,
                                         (const float *)B, ldb, (float *)D, ldd, l.lt, l.lt_bytes, s);
        if (st != LNL_STATUS_UNSUPPORTED) return st;
    }
    return lt_matmul(dt, d_f32, false, transB, m, n, k, A, lda, B, ldb, D, ldd, LT_NONE, nullptr,
                     l.lt, LT_WORKSPACE, s);
}

static lnl_status backward(const lnl_bwd_args *a) {
    const lnl_problem *p = &a->p;
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    if (M == 0) return zero_grads(a);
    device_info d;
    ST_TRY(device_query(&d));
    if (p->ln_float32) return mixed_backward(a, d);
    cudaStream_t s = (cudaStream_t)p->stream;
    /* A tiny problem's time is its launches: FUSED's backward is then one launch
     * (tiny_backward.cuh) instead of the five below, and needs no workspace (the size
     * query says 0). */
    if (p->strategy == LNL_STRATEGY_FUSED && tiny_backward_serves(M, K, N)) {
        CU_TRY("tiny backward",
               launch_tiny_backward(p->dtype, a->x, a->dy, a->linear_weight, a->ln_weight,
                                    a->ln_bias, a->dx, a->dln_weight, a->dln_bias,
                                    a->dlinear_weight, a->dlinear_bias, M, K, N, (float)p->eps, s));
        return LNL_STATUS_SUCCESS;
    }
    const bwd_plan plan = bwd_plan_for(p, d);
    const size_t need = bwd_carve(p, plan, nullptr).total;
    scoped_ws own;
    void *base = nullptr;
    ST_TRY(acquire_ws(a->workspace, need, s, &own, &base));
    bwd_layout l = bwd_carve(p, plan, base);
    const lnl_dtype dt = p->dtype;
    const float *mean = (const float *)a->mean, *rstd = (const float *)a->rstd;
    /* F32 also needs the exact per-row shift (see launch_ln_forward), which the saved
     * float32 mean cannot give: one statistics pass over x. bf16/f16 skip it when the
     * statistics are given (their own rounding is far larger). When dW must be formed
     * from a recomputed LN(x), the same pass writes it (one read of x, not two). */
    const float *shift = dt == LNL_DTYPE_F32 ? l.shift : nullptr;
    const bool dw_x = plan.dw_x && a->dlinear_weight && !a->ln_out;
    /* f16's scale word for dw_x (dw_scale_exp in cuda_common.cuh) */
    unsigned *const absmax =
        dw_x && dt == LNL_DTYPE_F16 ? (unsigned *)(l.off_centre + 1) : nullptr;
    const bool fused_dw = plan.fused_dw && a->dlinear_weight && !a->ln_out;
    const bool recompute = a->dlinear_weight && !a->ln_out && !fused_dw && !dw_x;
    const bool ln_bwd_runs = a->dx || a->dln_weight || a->dln_bias;
    /* FUSED's dx in the dy . W GEMM's epilogue (dx_epilogue_sm90.cu): with the forward's y,
     * where dW comes from the raw x (its G gives dgamma and dbeta). LNL_CUDA_DX_EPILOGUE=0
     * (read on each call; for tests and same-build timing) takes the GEMM + LayerNorm
     * backward way instead. */
    const bool epi = plan.dx_epi && dw_x && a->y && a->dx &&
                     env_int64("LNL_CUDA_DX_EPILOGUE", 1) != 0 &&
                     dx_epilogue_runs(dt, M, K, N, a->dy, a->x, a->linear_weight, a->ln_weight,
                                      a->ln_bias, a->y, a->dx, d);
    /* The recomputed LN(x) from the LayerNorm backward, which reads x anyway, where dxhat
     * is in the 16-bit dtype (K >= 512): written over dxhat in the act region (each thread
     * over the chunks it has read, ln_backward.cu), and the dW GEMM runs after the
     * LayerNorm backward. Elsewhere a LayerNorm pass of its own writes LN(x) into the act
     * region before the dW GEMM, and dxhat replaces it afterwards. */
    const bool ln_in_bwd = recompute && ln_bwd_runs && !dxhat_f32(dt, K);
    void *ln_rebuilt = ln_in_bwd ? l.act : nullptr;
    const bool ln_pass = recompute && !ln_in_bwd;
    if (!mean || shift || ln_pass) {
        CU_TRY(ln_pass ? "layernorm forward (recompute)" : "layernorm statistics",
               launch_ln_forward(dt, a->x, ln_pass ? a->ln_weight : nullptr,
                                 ln_pass ? a->ln_bias : nullptr, ln_pass ? l.act : nullptr,
                                 l.mean, l.rstd, l.shift, M, K, (float)p->eps, d, s));
        if (!mean) {
            mean = l.mean;
            rstd = l.rstd;
        }
    }
    /* dW^T[K,N] = ln_out^T[K,M] @ (dy^T[N,M])^T-op. Not with cuBLASLt's BGRADB epilogue
     * for db: it runs as a separate kernel slower than our column sums (H200, bf16: 88 vs
     * 55 us at 8192 x 12288; and at 8192,768,3072 it made the dW GEMM itself 1.35-1.5x
     * slower, bench/cuda/lt_probe.cu). */
    auto dw_gemm = [&](const void *ln_out) {
        return bwd_gemm(dt, false, true, K, N, M, ln_out, K, a->dy, N, a->dlinear_weight, K, l, s);
    };
    if (dw_x) CU_TRY("cudaMemsetAsync", cudaMemsetAsync(l.off_centre, 0, 2 * sizeof(int), s));
    /* 0. epi: W^T, {c, f} and the rows' values first: the rows' pass reads dy, and takes
     * f16's scale for the dW prep on the way (no pass of its own over dy) */
    if (epi) {
        CU_TRY("dx epilogue prep (W^T, c, f)",
               launch_dx_epilogue_prep(dt, a->linear_weight, a->ln_weight, a->ln_bias,
                                       a->linear_bias, l.epi, K, N, s));
        CU_TRY("dx epilogue rows", launch_dx_epilogue_rows(dt, a->dy, a->y, mean, rstd, l.epi,
                                                           absmax, M, K, N, s));
    }
    /* 1. dW = dy^T @ LN(x) (ln_in_bwd: after step 3) */
    if (a->dlinear_weight && !ln_in_bwd) {
        if (dw_x) {
            /* dy' and the sums (dlinear_bias's among them), G = x^T-contracted with dy'
             * by cuBLAS, the fused kernel for off-centre rows only, then dW and db */
            if (absmax && !epi)
                CU_TRY("dW scale (max |rstd dy|)",
                       launch_dy_absmax(a->dy, rstd, absmax, M, N, d, s));
            int64_t Gp = 0;
            CU_TRY("dW prep (rstd * dy)", launch_dw_prep(dt, a->dy, mean, rstd, absmax, l.dyp,
                                                        l.part_uv, l.off_centre, M, N, d, s, &Gp));
            ST_TRY(bwd_gemm(dt, true, true, K, N, M, a->x, K, l.dyp, N, l.part_dw, K, l, s));
            /* epi: the fallback's partials are of P = dy^T xhat (no gamma, beta), which the
             * dx epilogue's dgamma and dbeta need; the finish applies gamma and beta */
            CU_TRY("fused dW GEMM (off-centre rows)",
                   launch_fused_dw_gemm(dt, a->dy, a->x, mean, rstd, shift,
                                        epi ? nullptr : a->ln_weight, epi ? nullptr : a->ln_bias,
                                        a->dlinear_weight, l.part_dw, plan.splits, M, K, N, d, s,
                                        l.off_centre));
            CU_TRY("dW finish", launch_dw_finish(dt, l.part_dw, plan.splits, l.part_uv, Gp, l.uv,
                                                 a->ln_weight, a->ln_bias, l.off_centre, absmax,
                                                 a->dlinear_weight, a->dlinear_bias, N, K, d, s,
                                                 epi ? l.epi.uvn : nullptr, epi));
        } else if (fused_dw) {
            CU_TRY("fused dW GEMM",
                   launch_fused_dw_gemm(dt, a->dy, a->x, mean, rstd, shift, a->ln_weight, a->ln_bias,
                                        a->dlinear_weight, l.part_dw, plan.splits, M, K, N, d, s));
        } else {
            ST_TRY(dw_gemm(recompute ? l.act : a->ln_out));
        }
    }
    /* The ordered reductions of partials (db, dgamma, dbeta) run as one launch at the end. */
    reduce_job jobs[3];
    int njobs = 0;
    /* 2. db = column sums of dy, in a fixed order (dw_x: the dW finish wrote it). First,
     * while dy is likely in L2 (in training the next layer's backward has just written
     * it). Launched instead right behind the LayerNorm backward, to run beside it (no wait
     * until its end), they were slower: the LayerNorm backward holds every SM's registers,
     * so they ran after it anyway, by then without dy in L2. bf16 AUTO backward ms, three
     * rounds in turn, first / beside (session 42, call 2; the patch in
     * docs/results/cuda/2026-12-04-session42): 8192,768,3072 0.1480, 0.1451, 0.1495 /
     * 0.1539, 0.1541, 0.1525; 8192,1024,1024 0.0932, 0.0903, 0.0949 / 0.0946, 0.0951,
     * 0.0938. */
    if (a->dlinear_bias && !dw_x) {
        CU_TRY("bias-gradient partials", launch_colsum_partials(dt, a->dy, M, N, plan.G2, l.part_db, s));
        jobs[njobs++] = {l.part_db, plan.G2, N, a->dlinear_bias};
    }
    /* 3. dxhat = dy @ W, then the LayerNorm backward (reuses the act region); or, epi, dx
     * straight from the GEMM, dgamma and dbeta from W and the dW path's G */
    if (epi) {
        CU_TRY("dx epilogue GEMM", launch_dx_epilogue(dt, a->dy, a->x, a->ln_weight, l.epi, a->dx,
                                                      M, K, N, d, s));
        if (a->dln_weight || a->dln_bias) {
            const int64_t shares = dx_epilogue_dgb_shares(N, K, plan.G, d);
            CU_TRY("dx epilogue dgamma, dbeta",
                   launch_dx_epilogue_dgb(dt, a->linear_weight, l.part_dw, plan.splits,
                                          l.off_centre, absmax, l.epi, l.part_g, l.part_b,
                                          shares, N, K, s));
            if (a->dln_weight) jobs[njobs++] = {l.part_g, shares, K, a->dln_weight};
            if (a->dln_bias) jobs[njobs++] = {l.part_b, shares, K, a->dln_bias};
        }
    } else if (ln_bwd_runs) {
        /* column-major: dxhat^T[K,M] = W^T[K,N] @ dy^T[N,M] */
        ST_TRY(bwd_gemm(dt, dxhat_f32(dt, K), false, K, M, N, a->linear_weight, K, a->dy, N, l.act,
                        K, l, s));
        const bool parts = a->dln_weight || a->dln_bias;
        CU_TRY("layernorm backward",
               launch_ln_backward(dt, l.act, a->x, mean, rstd, shift, a->ln_weight, a->dx,
                                  parts ? l.part_g : nullptr, parts ? l.part_b : nullptr, M, K, plan.G,
                                  d, s, a->ln_bias, ln_rebuilt));
        if (a->dln_weight) jobs[njobs++] = {l.part_g, plan.G, K, a->dln_weight};
        if (a->dln_bias) jobs[njobs++] = {l.part_b, plan.G, K, a->dln_bias};
        if (ln_in_bwd) ST_TRY(dw_gemm(ln_rebuilt));
    }
    CU_TRY("ordered reductions (db, dln_weight, dln_bias)", launch_reduce_partials(dt, jobs, njobs, s));
    return LNL_STATUS_SUCCESS;
}

} // namespace lnl

using namespace lnl;

extern "C" {

lnl_status lnl_cuda_check(const lnl_problem *p) {
    if (p->dtype == LNL_DTYPE_F64)
        return lnl_set_error(LNL_STATUS_UNSUPPORTED,
                             "CUDA backend: float64 is not supported (use the CPU device)");
    if (p->strategy == LNL_STRATEGY_REFERENCE)
        return lnl_set_error(LNL_STATUS_UNSUPPORTED,
                             "CUDA backend: the REFERENCE strategy runs on the CPU only");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return lnl_set_error(LNL_STATUS_UNSUPPORTED, "CUDA backend: no usable CUDA device (%s)",
                             e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    }
    device_info d;
    if (device_query(&d) != LNL_STATUS_SUCCESS)
        return lnl_set_error(LNL_STATUS_UNSUPPORTED, "CUDA backend: the current device is not usable");
    if (d.major < 8)
        return lnl_set_error(LNL_STATUS_UNSUPPORTED,
                             "CUDA backend: device %d has compute capability %d.%d; 8.0+ is needed",
                             d.device, d.major, d.minor);
    return LNL_STATUS_SUCCESS;
}

/* AUTO's backward past the tiny class: FUSED where it takes the dx epilogue (given y) and
 * N <= K / 4 with M * K >= 2^23; UNFUSED elsewhere. Without y (or ln_out given) the two
 * backwards are the same there (bwd_plan_for). bf16 backward ms, H200, lnl-bench, the
 * same build with LNL_CUDA_DX_EPILOGUE=0 / 1, two rounds each (session 40, call 3,
 * docs/results/cuda/2026-12-04-session40): 32768,4096,256 0.508, 0.511 / 0.400, 0.399;
 * 16384,8192,1024 1.122, 1.118 / 1.043, 1.034; 65536,1024,256 0.274, 0.274 / 0.245, 0.248;
 * and a tie at N = K / 4, 8192,4096,1024: 0.293, 0.292 / 0.293, 0.287. Before the epilogue's
 * helper kernels were tuned (call 2) it lost at N = K / 4. Above K / 4 only call 1's
 * untuned version was timed (FUSED, one round): ties at 8192,4096,4096 (0.897 / 0.893) and
 * 8192,1024,1024 (0.0928 / 0.0927).
 * f16 takes the same rule since session 41 (its dW from the raw x, scaled), f16 AUTO
 * backward ms, main at 1e05520 (UNFUSED, LN(x) rebuilt for cuBLAS) / d5c18ba's epilogue,
 * two rounds in turn (docs/results/cuda/2026-12-04-session41, call 5): 32768,4096,256
 * 0.586, 0.586 / 0.427, 0.421; 65536,1024,256 0.311, 0.299 / 0.256, 0.256;
 * 16384,8192,1024 1.205, 1.179 / 1.068, 1.082; a tie at 8192,4096,1024, 0.298, 0.292 /
 * 0.302, 0.291 (call 1, with the scale from a pass of its own: 0.314, 0.314). */
static bool dx_epi_auto(const lnl_problem *p) {
    lnl_problem f = *p;
    f.strategy = LNL_STRATEGY_FUSED;
    return 4 * p->out_features <= p->in_features &&
           (double)p->rows * (double)p->in_features >= (double)(1 << 23) &&
           lnl_cuda_backward_wants_y(&f);
}

/* AUTO: FUSED for tiny, launch-bound problems (M*K*N <= 2^24), forward and backward
 * (up to 2^15 multiply-adds whose operands fit 48 KB, FUSED's backward is one launch:
 * tiny_backward.cuh; so is the forward: tiny_forward.cuh);
 * otherwise UNFUSED, except the forward of bf16/f16 problems on Hopper with N <= 1024,
 * M*K >= 2^23, M*K*N >= 2^33 where N > 256, and enough 128-row tiles to (nearly) fill
 * the SMs (>= 3/4 of them).
 * The forward is chosen on its own speed: a forward asked for ln_out runs UNFUSED's
 * order whatever the strategy (forward() above), and one without it leaves the backward
 * to rebuild LN(x) from mean and rstd after either forward.
 * Evidence (H200):
 *  - 2026-11-30 (bench/cuda/time_cuda.py, docs/results/cuda/2026-11-30-call3): at
 *    16,8,16 FUSED was faster (bf16 fwd 0.0211 vs 0.0220 ms, fwd+bwd 0.0568 vs 0.0627;
 *    f32 fwd 0.0187 vs 0.0215, fwd+bwd 0.0646 vs 0.0716); at every larger shape
 *    measured (4096,768,768 up to 8192,4096,12288) UNFUSED was 1.8x-6x faster in bf16
 *    and 2x-3x in f32 with the mma.sync fused kernels. The backward stays UNFUSED
 *    beyond tiny problems: since session 5 FUSED's bf16 backward takes dW from the raw x
 *    (dw_from_x.cu), as UNFUSED's does without ln_out where N < K, but it still trails
 *    UNFUSED's with ln_out kept (bf16 bwd ms, lnl-bench at e7d2f4c: 8192,768,3072 0.210
 *    vs 0.168; 8192,4096,4096 0.949 vs 0.896; 32768,4096,256 0.570 vs 0.542). Since
 *    session 28 (bwd_plan_for) the two backwards without ln_out are the same past the
 *    tiny class: the way to dW depends on N < K and the dtype, not on the strategy.
 *  - 2026-12-01, session 3 (lnl-bench, two runs each, docs/results/cuda/2026-12-01-fold):
 *    the Hopper forward in its epilogue form (fused_forward_sm90.cu) against UNFUSED,
 *    bf16 forward ms. FUSED wins: 16384,8192,1024 0.465 vs 0.510-0.521; 32768,4096,256
 *    0.193 vs 0.247; 65536,1024,256 0.152 vs 0.172; 16384,2048,128 (128 tiles on 132
 *    SMs) 0.062 vs 0.073. A tie: 8192,4096,4096 0.419-0.435 vs 0.391-0.418 (left
 *    UNFUSED). UNFUSED wins: 8192,1024,1024 0.053 vs 0.048 (M*K = 2^23: the weight
 *    folding and the extra launch do not pay); 8192,768,3072 0.094 vs 0.076;
 *    8192,4096,12288 1.37 vs 1.12-1.25; 4096,768,768 0.031 vs 0.022. f16 alike.
 *    UNFUSED's extra over the GEMM is a LayerNorm pass that writes and rereads M x K;
 *    FUSED's is the statistics pass (reads M x K), folding the weight (N x K) and its
 *    GEMM running ~15% slower than cuBLAS's, which grows with N.
 *  - 2026-12-01, session 2 (docs/results/cuda/2026-12-01-sm90-forward): with 64 tiles
 *    (8192,4096,256) the transform form lost 0.092 vs 0.075; the fill condition stays.
 *  - 2026-12-01, session 9 (lnl-bench bf16 forward ms, fused / unfused, two rounds,
 *    docs/results/cuda/2026-12-01-session9/call2): with the one-launch weight folding and
 *    statistics (session 8) FUSED's forward also wins at M*K = 2^23..2^24, which the
 *    threshold now takes in: 8192,1024,1024 0.0432-0.0433 vs 0.0473-0.0477;
 *    16384,768,768 0.053-0.055 vs 0.060-0.061; 16384,1024,1024 0.076-0.078 vs 0.086-0.087;
 *    8192,2048,1024 0.0725 vs 0.0765; 8192,1024,256 (64 tiles, taken by no rule) 0.0288 vs
 *    0.030; 4096,2048,1024 0.042-0.043 vs 0.044-0.045. Inside the rule, losses of 1-2%:
 *    4096,4096,1024 0.0741 vs 0.0723-0.0728; 8192,1024,768 0.043-0.044 vs 0.043-0.044.
 *    Below it: 8192,768,768 0.0364 vs 0.0346 (UNFUSED wins), 8192,768,1024 0.0373-0.0379
 *    vs 0.0393-0.0396 (FUSED, missed), 4096,1024,1024 a tie. Above N = 1024, a mixed
 *    picture (left UNFUSED): FUSED wins at 8192,1024,1536 0.058 vs 0.061 and
 *    8192,768,1536, ties at 8192,2048,2048, 16384,1024,2048 and 16384,2048,2048, loses at
 *    8192,1024,2048 (1%), 8192,4096,2048 (3%), 16384,768,3072 (8%).
 *  - 2026-12-01, session 10 (the same, docs/results/cuda/2026-12-01-session10/call3), after
 *    UNFUSED's LayerNorm became a warp a row for K <= 1024 (ln_forward.cu): UNFUSED now
 *    wins at 8192,1024,768 (0.0412 / 0.0393 vs 0.0446 / 0.0422) and 8192,768,1024 (by
 *    2-3%), both of M*K*N = 6.4e9, while FUSED still wins from 2^33 = 8.6e9 up:
 *    8192,1024,1024 0.0455 / 0.0445 vs 0.0475 / 0.0464, 16384,768,768 (9.7e9) 0.0529 vs
 *    0.056, and every larger one measured. Hence the MAC floor for N > 256: there FUSED
 *    pays a statistics and weight-folding pre-pass that only a long enough GEMM hides.
 *    With N <= 256 (one column of tiles) the statistics come from inside the GEMM kernel
 *    and the weight to fold is small: no floor (16384,2048,128 above, 4.3e9 MACs).
 *  - 2026-12-04, session 37 (lnl-bench f32, three rounds, docs/results/cuda/
 *    2026-12-04-session37/call3): float32 stays UNFUSED past the tiny class. FUSED's
 *    float32 form (f32_fold.cu) wins only at 32768,4096,256 (forward 1.555 vs 1.612 ms,
 *    and so in all 19 runs since that form arrived in session 15) and loses 1-13% at ten
 *    other shapes with N <= 1024, among them 12800,4096,256 (1.4%) and 65536,1024,256
 *    (3%): no rule takes that one point alone.
 *  The threshold between 2^11 and 2.4e9 MACs for tiny problems was not measured; 2^24
 *  is a guess inside it. */
lnl_strategy lnl_cuda_auto_strategy(const lnl_problem *p, int backward) {
    const double macs = (double)p->rows * (double)p->in_features * (double)p->out_features;
    if (p->ln_float32) return LNL_STRATEGY_UNFUSED; /* the one order it runs (mixed_backend.cu) */
    if (!past_tiny_class(p)) return LNL_STRATEGY_FUSED;
    if (backward) return dx_epi_auto(p) ? LNL_STRATEGY_FUSED : LNL_STRATEGY_UNFUSED;
    if (p->out_features > 1024 ||
        (double)p->rows * (double)p->in_features < (double)(1 << 23) ||
        (p->out_features > 256 && macs < 8589934592.0 /* 2^33 */))
        return LNL_STRATEGY_UNFUSED;
    device_info d;
    if (device_query(&d) != LNL_STATUS_SUCCESS) return LNL_STRATEGY_UNFUSED;
    const bool fills = 4 * fused_forward_sm90_tiles(p->rows, p->in_features, p->out_features, d) >=
                       3 * (int64_t)d.sm_count;
    return fills && fused_forward_sm90_serves(p->dtype, p->rows, p->in_features, p->out_features, d)
               ? LNL_STRATEGY_FUSED
               : LNL_STRATEGY_UNFUSED;
}

size_t lnl_cuda_forward_workspace_size(const lnl_problem *p) {
    return p->ln_float32 ? mixed_forward_workspace_size(p) : fwd_carve(p, nullptr).total;
}

size_t lnl_cuda_backward_workspace_size(const lnl_problem *p) {
    /* FUSED's tiny backward (backward() above) works in shared memory alone */
    if (!p->ln_float32 && p->strategy == LNL_STRATEGY_FUSED &&
        tiny_backward_serves(p->rows, p->in_features, p->out_features))
        return 0;
    device_info d;
    if (device_query(&d) != LNL_STATUS_SUCCESS) return 0;
    if (p->ln_float32) return mixed_backward_workspace_size(p, d);
    return bwd_carve(p, bwd_plan_for(p, d), nullptr).total;
}

int lnl_cuda_backward_wants_y(const lnl_problem *p) {
    device_info d;
    return !p->ln_float32 && device_query(&d) == LNL_STATUS_SUCCESS && dx_epi_serves(p, d);
}

lnl_status lnl_cuda_forward(const lnl_fwd_args *a) { return forward(a); }
lnl_status lnl_cuda_backward(const lnl_bwd_args *a) { return backward(a); }

} /* extern "C" */
