/* The CPU backend's entry points (src/api/internal.h): support check, AUTO's rule,
 * workspace sizes and layouts, and dispatch by strategy and dtype. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "gemm.h"
#include "half.h"

/* Bytes of one element as the caller stores it, and as the kernels compute in (16-bit
 * problems compute in float). */
static size_t elem_size(const lnl_problem *p) { return lnl_dtype_size(p->dtype); }
static size_t calc_size(const lnl_problem *p) { return p->dtype == LNL_DTYPE_F64 ? 8 : 4; }

static double mnk(const lnl_problem *p) {
    return (double)p->rows * (double)p->in_features * (double)p->out_features;
}

static const lnl_blocking *blocking(const lnl_problem *p) {
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    if (p->dtype == LNL_DTYPE_BF16 && isa->ukr_bf16) return &isa->blk_bf16;
    return p->dtype == LNL_DTYPE_F64 ? &isa->blk_f64 : &isa->blk_f32;
}

int lnl_cpu_is_tiny(const lnl_problem *p) {
    /* The direct kernels read float or double: 16-bit problems take the GEMM path. */
    if (lnl_is_half(p->dtype)) return 0;
    return mnk(p) <= LNL_TINY_MAX_MNK && p->in_features <= LNL_TINY_MAX_K;
}

int lnl_cpu_threads(const lnl_problem *p) {
    if (mnk(p) < LNL_SERIAL_MAX_MNK || p->threads < 1) return 1;
    return p->threads;
}

int64_t lnl_cpu_row_block(int64_t k) {
    /* Large blocks amortize repacking W for every block of the fused backward (the
     * repack costs about 1/(2 rb) of the block's flops); the cap keeps rb x K of
     * dxhat within a few MiB of cache for very wide rows. */
    int64_t rb = ((int64_t)1 << 22) / k;
    if (rb > 512) rb = 512;
    if (rb < 16) rb = 16;
    return rb / 16 * 16;
}

/* Every dtype: BF16 and F16 are stored in 16 bits and computed in float (half.h). */
lnl_status lnl_cpu_check(const lnl_problem *p) {
    (void)p;
    return LNL_STATUS_SUCCESS;
}

/* Rule: always FUSED. Evidence (f32, 2 threads, AVX-512 Xeon slice, GFLOP/s, fused vs
 * unfused; forward | forward+backward):
 *   M=2048 K=768  N=768   177 vs 112 | 163 vs 115
 *   M=2048 K=768  N=3072  129 vs 126 | 121 vs 124
 *   M=1024 K=4096 N=4096  120 vs 122 | 117 vs 122
 *   M=4096 K=4096 N=256    95 vs  91 |  90 vs  88
 * FUSED wins clearly where N <= K (the LayerNorm pass is a larger share of the work)
 * and is within run-to-run noise (+-10% on that host) elsewhere, while needing
 * O(threads * block) instead of O(M * K) workspace; so UNFUSED never pays off. */
lnl_strategy lnl_cpu_auto_strategy(const lnl_problem *p) {
    (void)p;
    return LNL_STRATEGY_FUSED;
}

size_t lnl_cpu_fwd_layout(const lnl_problem *p, char *base, lnl_cpu_ws *w) {
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    const size_t es = elem_size(p), cs = calc_size(p);
    lnl_carver cv = {base, 0};
    memset(w, 0, sizeof *w);
    if (M == 0 || lnl_cpu_is_tiny(p)) return 0;
    int nth = lnl_cpu_threads(p);
    w->mean = lnl_carve(&cv, (size_t)M * cs);
    w->rstd = lnl_carve(&cv, (size_t)M * cs);
    if (p->strategy == LNL_STRATEGY_UNFUSED) w->lnout = lnl_carve(&cv, (size_t)(M * K) * es);
    w->gemm_stride = lnl_gemm_thread_ws(blocking(p), cs, M, N, K);
    w->gemm = lnl_carve(&cv, w->gemm_stride * (size_t)nth);
    if (lnl_is_half(p->dtype)) {
        w->rows = lnl_carve(&cv, (size_t)(2 * K * nth) * sizeof(float));
        w->params = lnl_carve(&cv, (size_t)(2 * K + N) * sizeof(float));
        w->c32 = lnl_carve(&cv, (size_t)(M * N) * sizeof(float));
    }
    return cv.used;
}

size_t lnl_cpu_bwd_layout(const lnl_problem *p, char *base, lnl_cpu_ws *w) {
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    const size_t es = elem_size(p), cs = calc_size(p);
    lnl_carver cv = {base, 0};
    memset(w, 0, sizeof *w);
    if (M == 0 || lnl_cpu_is_tiny(p)) return 0;
    int nth = lnl_cpu_threads(p);
    int fused = p->strategy != LNL_STRATEGY_UNFUSED;
    w->rb = lnl_cpu_row_block(K);
    int64_t dxrows = fused ? (M < w->rb ? M : w->rb) : M;
    w->mean = lnl_carve(&cv, (size_t)M * cs);
    w->rstd = lnl_carve(&cv, (size_t)M * cs);
    if (!fused) w->lnout = lnl_carve(&cv, (size_t)(M * K) * es);
    w->dxhat = lnl_carve(&cv, (size_t)(dxrows * K) * cs);
    /* One partial per group of rows when the ISA visits each row once (backward_tmpl.h). */
    int64_t groups = 1;
    if (p->dtype != LNL_DTYPE_F64 && lnl_cpu_isa_get()->ln_dx_colsums_f32) {
        int64_t blk = M < w->rb ? M : w->rb;
        groups = (blk + LNL_BWD_GROUP - 1) / LNL_BWD_GROUP;
    }
    w->pg = lnl_carve(&cv, (size_t)(groups * K) * cs);
    w->pb = lnl_carve(&cv, (size_t)(groups * K) * cs);
    size_t g1 = lnl_gemm_thread_ws(blocking(p), cs, N, K, M);
    size_t g2 = lnl_gemm_thread_ws(blocking(p), cs, dxrows, K, N);
    w->gemm_stride = g1 > g2 ? g1 : g2;
    w->gemm = lnl_carve(&cv, w->gemm_stride * (size_t)nth);
    if (lnl_is_half(p->dtype)) {
        int64_t blk = M < w->rb ? M : w->rb;
        w->rows = lnl_carve(&cv, (size_t)(2 * K * nth) * sizeof(float));
        w->params = lnl_carve(&cv, (size_t)(2 * K) * sizeof(float));
        w->c32 = lnl_carve(&cv, (size_t)(N * K) * sizeof(float));
        if (!lnl_cpu_isa_get()->ln_dx_colsums_f32) /* the portable row pass reads x by columns */
            w->xblk = lnl_carve(&cv, (size_t)(blk * K) * sizeof(float));
        w->acc = lnl_carve(&cv, (size_t)(2 * K + N) * sizeof(float));
    }
    return cv.used;
}

size_t lnl_cpu_forward_workspace_size(const lnl_problem *p) {
    lnl_cpu_ws w;
    if (p->strategy == LNL_STRATEGY_REFERENCE) return lnl_reference_forward_workspace_size(p);
    return lnl_cpu_fwd_layout(p, NULL, &w);
}

size_t lnl_cpu_backward_workspace_size(const lnl_problem *p) {
    lnl_cpu_ws w;
    if (p->strategy == LNL_STRATEGY_REFERENCE) return lnl_reference_backward_workspace_size(p);
    return lnl_cpu_bwd_layout(p, NULL, &w);
}

/* The caller's workspace, or a fresh one (*owned, for the caller to free) when it
 * gave none. Returns OUT_OF_MEMORY, with fn's message, before anything is written. */
static lnl_status workspace_get(void *given, size_t bytes, const char *fn, char **ws,
                                char **owned) {
    *owned = NULL;
    *ws = given;
    if (given || bytes == 0) return LNL_STATUS_SUCCESS;
    *ws = *owned = malloc(bytes);
    if (*ws) return LNL_STATUS_SUCCESS;
    return lnl_set_error(LNL_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of workspace",
                         fn, bytes);
}

lnl_status lnl_cpu_forward(const lnl_fwd_args *a) {
    const lnl_problem *p = &a->p;
    if (p->rows == 0) return LNL_STATUS_SUCCESS;
    char *ws, *owned;
    lnl_status s = workspace_get(a->workspace, lnl_cpu_forward_workspace_size(p), "lnl_forward", &ws, &owned);
    if (s != LNL_STATUS_SUCCESS) return s;
    int f64 = p->dtype == LNL_DTYPE_F64;
    if (p->strategy == LNL_STRATEGY_REFERENCE) {
        lnl_reference_forward(a, ws);
    } else if (lnl_cpu_is_tiny(p)) {
        int (*fast)(const lnl_fwd_args *) = lnl_cpu_isa_get()->small_fwd_f32;
        if (f64) lnl_cpu_small_forward_f64(a);
        else if (!fast || !fast(a)) lnl_cpu_small_forward_f32(a);
    } else {
        lnl_cpu_ws w;
        lnl_cpu_fwd_layout(p, ws, &w);
        if (f64) lnl_cpu_forward_f64(a, &w);
        else lnl_cpu_forward_f32(a, &w);
    }
    free(owned);
    return LNL_STATUS_SUCCESS;
}

/* M == 0: no rows contribute, so every requested parameter gradient is zero. */
static void backward_empty(const lnl_bwd_args *a) {
    const size_t es = elem_size(&a->p), ls = a->p.ln_float32 ? sizeof(float) : es;
    const size_t K = (size_t)a->p.in_features, N = (size_t)a->p.out_features;
    if (a->dln_weight) memset(a->dln_weight, 0, K * ls);
    if (a->dln_bias) memset(a->dln_bias, 0, K * ls);
    if (a->dlinear_weight) memset(a->dlinear_weight, 0, N * K * es);
    if (a->dlinear_bias) memset(a->dlinear_bias, 0, N * es);
}

lnl_status lnl_cpu_backward(const lnl_bwd_args *a) {
    const lnl_problem *p = &a->p;
    if (p->rows == 0) {
        backward_empty(a);
        return LNL_STATUS_SUCCESS;
    }
    char *ws, *owned;
    lnl_status s = workspace_get(a->workspace, lnl_cpu_backward_workspace_size(p), a->fn, &ws,
                                 &owned);
    if (s != LNL_STATUS_SUCCESS) return s;
    int f64 = p->dtype == LNL_DTYPE_F64;
    if (p->strategy == LNL_STRATEGY_REFERENCE) {
        lnl_reference_backward(a, ws);
    } else if (lnl_cpu_is_tiny(p)) {
        int (*fast)(const lnl_bwd_args *) = lnl_cpu_isa_get()->small_bwd_f32;
        if (f64) lnl_cpu_small_backward_f64(a);
        else if (!fast || !fast(a)) lnl_cpu_small_backward_f32(a);
    } else {
        lnl_cpu_ws w;
        lnl_cpu_bwd_layout(p, ws, &w);
        if (f64) lnl_cpu_backward_f64(a, &w);
        else lnl_cpu_backward_f32(a, &w);
    }
    free(owned);
    return LNL_STATUS_SUCCESS;
}
