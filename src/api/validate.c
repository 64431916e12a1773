#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "validate.h"

size_t lnl_dtype_size(lnl_dtype dtype) {
    switch (dtype) {
    case LNL_DTYPE_F32: return 4;
    case LNL_DTYPE_F64: return 8;
    case LNL_DTYPE_BF16:
    case LNL_DTYPE_F16: return 2;
    }
    return 0;
}

size_t lnl_acc_size(lnl_dtype dtype) { return dtype == LNL_DTYPE_F64 ? 8 : 4; }

/* a * b * c in bytes must fit in both int64_t and size_t. */
static int product_fits(int64_t a, int64_t b, int64_t c) {
    int64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return 0;
    return (uint64_t)abc <= (uint64_t)SIZE_MAX;
}

lnl_status lnl_validate_problem(const char *fn, const lnl_problem *p) {
    const lnl_status bad = LNL_STATUS_INVALID_ARGUMENT;
    if (!p) return lnl_set_error(bad, "%s: p (the problem descriptor) is NULL", fn);
    if (p->rows < 0) return lnl_set_error(bad, "%s: rows must be >= 0 (got %lld)", fn, (long long)p->rows);
    if (p->in_features < 1)
        return lnl_set_error(bad, "%s: in_features must be >= 1 (got %lld)", fn, (long long)p->in_features);
    if (p->out_features < 1)
        return lnl_set_error(bad, "%s: out_features must be >= 1 (got %lld)", fn, (long long)p->out_features);
    if (!(p->eps > 0.0) || !isfinite(p->eps))
        return lnl_set_error(bad, "%s: eps must be > 0 and finite (got %g)", fn, p->eps);
    size_t es = lnl_dtype_size(p->dtype);
    if (es == 0) return lnl_set_error(bad, "%s: dtype has unknown value %d", fn, (int)p->dtype);
    if (p->device != LNL_DEVICE_CPU && p->device != LNL_DEVICE_CUDA)
        return lnl_set_error(bad, "%s: device has unknown value %d", fn, (int)p->device);
    if ((unsigned)p->strategy > (unsigned)LNL_STRATEGY_REFERENCE)
        return lnl_set_error(bad, "%s: strategy has unknown value %d", fn, (int)p->strategy);
    if (p->threads < 0) return lnl_set_error(bad, "%s: threads must be >= 0 (got %d)", fn, p->threads);
    if (p->ln_float32 && p->dtype != LNL_DTYPE_BF16 && p->dtype != LNL_DTYPE_F16)
        return lnl_set_error(bad, "%s: ln_float32 needs a BF16 or F16 dtype (got dtype %d)", fn,
                             (int)p->dtype);
    const int64_t M = p->rows, K = p->in_features, N = p->out_features;
    const int64_t e = p->ln_float32 ? 4 : (int64_t)es; /* the widest element (x's with ln_float32) */
    if (!product_fits(M, K, e) || !product_fits(M, N, e) || !product_fits(N, K, e) ||
        !product_fits(M, 1, 8))
        return lnl_set_error(bad, "%s: rows, in_features and out_features overflow: "
                                  "%lld x %lld x %lld elements of %d bytes",
                             fn, (long long)M, (long long)K, (long long)N, (int)e);
    return LNL_STATUS_SUCCESS;
}

lnl_status lnl_validate_and_check(const char *fn, const lnl_problem *p) {
    lnl_status s = lnl_validate_problem(fn, p);
    if (s != LNL_STATUS_SUCCESS) return s;
    s = p->device == LNL_DEVICE_CPU ? lnl_cpu_check(p) : lnl_cuda_check(p);
    if (s != LNL_STATUS_SUCCESS) {
        /* The backend wrote the reason; prefix it with the caller's name. */
        char why[400];
        snprintf(why, sizeof why, "%s", lnl_last_error());
        return lnl_set_error(s, "%s: %s", fn, why);
    }
    return LNL_STATUS_SUCCESS;
}

lnl_status lnl_validate_buffers(const char *fn, const lnl_buffer *b, int n) {
    for (int i = 0; i < n; i++) {
        if (b[i].ptr && b[i].align > 1 && (uintptr_t)b[i].ptr % b[i].align != 0)
            return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT,
                                 "%s: %s is not aligned to its element size (%zu bytes)", fn,
                                 b[i].name, b[i].align);
    }
    for (int i = 0; i < n; i++) {
        if (!b[i].ptr || b[i].bytes == 0 || !b[i].is_output) continue;
        uintptr_t lo = (uintptr_t)b[i].ptr, hi = lo + b[i].bytes;
        for (int j = 0; j < n; j++) {
            if (j == i || !b[j].ptr || b[j].bytes == 0) continue;
            uintptr_t lo2 = (uintptr_t)b[j].ptr, hi2 = lo2 + b[j].bytes;
            if (lo < hi2 && lo2 < hi)
                return lnl_set_error(LNL_STATUS_INVALID_ARGUMENT, "%s: %s overlaps %s", fn,
                                     b[i].name, b[j].name);
        }
    }
    return LNL_STATUS_SUCCESS;
}
