/*
 * lnlinear: LayerNorm followed by Linear, forward and backward, on CPU and CUDA.
 *
 *   y = LayerNorm(x; ln_weight, ln_bias, eps) @ linear_weight^T + linear_bias
 *
 * This header is the manual. Conventions shared by every function:
 *  - Buffers are row-major and contiguous: x [M,K], y [M,N], ln_out [M,K],
 *    linear_weight [N,K] (PyTorch's nn.Linear layout), ln_weight/ln_bias [K],
 *    linear_bias [N], mean/rstd [M].
 *  - mean/rstd are in the accumulation type: double for LNL_DTYPE_F64 problems,
 *    float for F32, BF16 and F16 (as torch.nn.functional.layer_norm returns them).
 *  - On LNL_DEVICE_CUDA every pointer (data and workspace) is a device pointer and
 *    all work is queued on p->stream; the call returns without synchronizing. Given
 *    a workspace it allocates nothing either, so its calls may be captured into a
 *    CUDA graph once each problem has run one call uncaptured (the warm-up PyTorch's
 *    graphs ask for too: a first call creates the device's cuBLAS handles and sets
 *    kernel attributes); examples/train_mlp_cuda.cu does so.
 *  - Functions return a status and never print or exit. A failure detected before
 *    work starts leaves every output byte untouched; lnl_last_error() says why.
 *  - The same inputs with the same thread count give bitwise-identical results.
 *
 * Validation (every rule answers before any output byte is written):
 *  - INVALID_ARGUMENT: p NULL; rows < 0; in_features < 1; out_features < 1; eps <= 0,
 *    NaN or infinite; unknown dtype, device or strategy; threads < 0; element counts
 *    whose byte sizes overflow int64_t/size_t; a required pointer NULL (forward: x,
 *    linear_weight, y; backward: dy, x, linear_weight; x, y and dy may be NULL when
 *    rows == 0); mean without rstd or rstd without mean; dln_weight with ln_weight
 *    NULL, dln_bias with ln_bias NULL; a pointer not aligned to its element size; an
 *    output (or the workspace) overlapping any other buffer.
 *  - UNSUPPORTED: a device, dtype or strategy this build cannot serve (lnl_check tells
 *    in advance): CUDA in a CPU-only build or without a GPU; F64 or REFERENCE on
 *    CUDA.
 *  - WORKSPACE_TOO_SMALL: a non-NULL workspace below the queried size.
 *  - OUT_OF_MEMORY: workspace NULL and the library's own allocation failed.
 *
 * Non-finite inputs are not errors: NaN or Inf in a row of x gives NaN in that row of
 * y (and of dx), as torch.nn.functional.layer_norm + linear do; other rows of y are
 * unaffected, while weight gradients summed over rows become NaN. Nothing hangs.
 */
#ifndef LNLINEAR_H
#define LNLINEAR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0.2: lnl_problem gained ln_float32 (its size changed: rebuild callers against this header;
 * a zero-initialized problem means what it meant in 0.1). Before 1.0 the soname carries the
 * minor version (liblnlinear.so.0.2), so a program linked against 0.1 fails to load this
 * library rather than pass it a shorter struct. */
#define LNL_VERSION_MAJOR 0
#define LNL_VERSION_MINOR 2
#define LNL_VERSION_PATCH 0

#if defined(__GNUC__)
#define LNL_API __attribute__((visibility("default")))
#else
#define LNL_API
#endif

/* Result of every call. SUCCESS is 0; lnl_status_string() names each value. */
typedef enum {
    LNL_STATUS_SUCCESS = 0,
    LNL_STATUS_INVALID_ARGUMENT = 1,      /* a bad pointer, size, enum, eps or overlap */
    LNL_STATUS_UNSUPPORTED = 2,           /* valid, but this build or device cannot serve it */
    LNL_STATUS_OUT_OF_MEMORY = 3,         /* the library could not allocate its workspace */
    LNL_STATUS_WORKSPACE_TOO_SMALL = 4,   /* caller's workspace below the queried size */
    LNL_STATUS_DEVICE_ERROR = 5           /* a CUDA / cuBLASLt call failed */
} lnl_status;

/* Storage type of x, y, all parameters, ln_out and all gradients. Arithmetic
 * accumulates in float64 for F64 and in float32 otherwise. On the CPU, BF16 and F16
 * are storage: values are widened to float where they are read, LayerNorm and every
 * sum run in float32, and each output is rounded once, to nearest even. The GEMMs
 * multiply float operands, except BF16's on CPUs with AVX512_BF16 (LNL_CPU_ISA=avx512
 * turns that off), which multiply bf16 operands: there the normalized activation is
 * rounded to bf16 before its GEMM, as on CUDA and in PyTorch's bf16 LayerNorm. */
typedef enum { LNL_DTYPE_F32 = 0, LNL_DTYPE_F64 = 1, LNL_DTYPE_BF16 = 2, LNL_DTYPE_F16 = 3 } lnl_dtype;

/* Where the buffers live and the work runs. */
typedef enum { LNL_DEVICE_CPU = 0, LNL_DEVICE_CUDA = 1 } lnl_device;

/* How the pair is computed.
 *  FUSED:     the normalized activation is formed tile by tile inside the GEMM
 *             (while packing its operand panels) and never written whole. On CUDA
 *             its forward may instead fold LayerNorm into the GEMM's epilogue,
 *             y = rstd * (x W'^T - mean * c) + d with W' = W * gamma, which cancels
 *             each row's mean in float32: the error grows with |mean| * rstd, so a
 *             call with a row past 64 (bf16/f16; 16 in F32) is computed the other way.
 *  UNFUSED:   LayerNorm writes its whole M x K output, then a separate GEMM reads it.
 *  REFERENCE: plain loops accumulating in float64 (CPU, any dtype): the test oracle.
 *  AUTO:      the faster of FUSED and UNFUSED for the problem, chosen for the forward
 *             and the backward separately (lnl_resolve_strategy and
 *             lnl_resolve_backward_strategy say which): the backward of either needs
 *             only x, mean and rstd from the forward, or ln_out when it was kept. */
typedef enum {
    LNL_STRATEGY_AUTO = 0,
    LNL_STRATEGY_FUSED = 1,
    LNL_STRATEGY_UNFUSED = 2,
    LNL_STRATEGY_REFERENCE = 3
} lnl_strategy;

/* One problem: sizes, numerics and where/how to run. Zero-initialize, then fill. */
typedef struct lnl_problem {
    int64_t rows;         /* M >= 0: all leading dimensions of x flattened; 0 = empty batch, a no-op */
    int64_t in_features;  /* K >= 1: the normalized dimension */
    int64_t out_features; /* N >= 1 */
    double eps;           /* > 0 and finite, added to the biased variance inside the sqrt */
    lnl_dtype dtype;      /* of x, y, all parameters, ln_out and all gradients (but
                             see ln_float32) */
    lnl_device device;
    lnl_strategy strategy;
    int threads;  /* CPU threads, >= 0; 0 = library default: LNL_NUM_THREADS or the online
                     CPUs, read once at the first call */
    void *stream; /* CUDA: a cudaStream_t; NULL = the default stream */
    /* Non-zero (with a BF16 or F16 dtype; CPU and CUDA): torch.autocast's split of the
     * pair. x, ln_weight, ln_bias, dx, dln_weight and dln_bias are float32 and
     * LayerNorm runs on them in float32; linear_weight, linear_bias, y, dy, dlinear_weight,
     * dlinear_bias and ln_out are in dtype, and the GEMMs take LN(x) as dtype would (rounded
     * to it where the GEMM multiplies 16-bit operands). No 16-bit copy of x is made, and a row
     * with a large mean keeps its spread. INVALID_ARGUMENT with an F32 or F64 dtype. On CUDA
     * every strategy runs UNFUSED's order (a float32 LayerNorm pass writing the 16-bit LN(x),
     * then cuBLASLt): the fused kernels take a 16-bit x only. */
    int ln_float32;
} lnl_problem;

/* Forward. Writes y [M,N]; mean and rstd [M] and ln_out [M,K] only where non-NULL
 * (pass mean+rstd to let the backward skip the statistics pass; ln_out to let it
 * skip recomputing the normalized activation). ln_weight, ln_bias, linear_bias may
 * be NULL, meaning ones, zeros, zeros. workspace NULL: the library allocates what
 * it needs; otherwise it must hold lnl_forward_workspace_size(p) bytes. */
LNL_API lnl_status lnl_forward(const lnl_problem *p, const void *x, const void *ln_weight,
                               const void *ln_bias, const void *linear_weight,
                               const void *linear_bias, void *y, void *mean, void *rstd,
                               void *ln_out, void *workspace, size_t workspace_bytes);

/* Backward of lnl_forward for all five inputs, given dy [M,N]. Every gradient
 * pointer may be NULL (not computed); gradients are overwritten, never accumulated.
 * dln_weight without ln_weight, or dln_bias without ln_bias, is INVALID_ARGUMENT;
 * dlinear_bias (the column sums of dy) needs no linear_bias and is always allowed. mean and rstd are
 * both given (from the forward) or both NULL (recomputed from x). ln_out, if given,
 * is used instead of rebuilding the normalized activation; x is still required when
 * dx, dln_weight or mean/rstd recomputation needs it (always pass it). */
LNL_API lnl_status lnl_backward(const lnl_problem *p, const void *dy, const void *x,
                                const void *ln_weight, const void *ln_bias,
                                const void *linear_weight, const void *mean, const void *rstd,
                                const void *ln_out, void *dx, void *dln_weight, void *dln_bias,
                                void *dlinear_weight, void *dlinear_bias, void *workspace,
                                size_t workspace_bytes);

/* Every argument of lnl_backward, as one struct, plus the forward's output for the dx
 * epilogue below. Zero-initialize, then fill: a NULL member means what the same NULL
 * means to lnl_backward. */
typedef struct lnl_backward_args {
    const void *dy, *x, *ln_weight, *ln_bias, *linear_weight;
    const void *mean, *rstd, *ln_out;
    void *dx, *dln_weight, *dln_bias, *dlinear_weight, *dlinear_bias;
    void *workspace;
    size_t workspace_bytes;
    /* Optional: y [M,N] as lnl_forward wrote it for these inputs, and the linear_bias it
     * was given (NULL = zeros; ignored without y). With y, the FUSED backward of a problem
     * for which lnl_backward_wants_y(p) is 1 forms dx in the epilogue of the dy @ W GEMM
     * instead of writing dy @ W out and reading it back: each row's LayerNorm terms come
     * from dy and y - linear_bias (= LN(x) @ W^T). A y that is not the forward's output for
     * these inputs gives a wrong dx (it is not checked). Elsewhere y is ignored. */
    const void *y, *linear_bias;
} lnl_backward_args;

/* lnl_backward with its arguments in a struct; the same rules, plus y's and linear_bias's
 * alignment and that no output overlaps them. */
LNL_API lnl_status lnl_backward_ex(const lnl_problem *p, const lnl_backward_args *args);

/* 1 when p's backward (AUTO resolved) would use lnl_backward_args.y: a CUDA bf16 or f16
 * problem on Hopper whose FUSED backward takes the dx epilogue (lnl_backward_ex's comment), with
 * dx and dlinear_weight requested and ln_out not given. 0 otherwise, and for an invalid
 * p. Lets a caller (the PyTorch autograd function) keep y for the backward only when it
 * will be used. */
LNL_API int lnl_backward_wants_y(const lnl_problem *p);

/* Bytes of workspace lnl_forward / lnl_backward need for p (the most any pointer
 * combination needs). 0 for an invalid problem, or when none is needed. On the CPU a
 * BF16/F16 problem's workspace includes the GEMM's float32 partial sums, M x N for the
 * forward and N x K for the backward (with the AVX512_BF16 kernel, written only where
 * the GEMM's depth, K or M, passes 768), so a caller that reuses one workspace saves the
 * first-touch page faults that a fresh allocation costs every call. */
LNL_API size_t lnl_forward_workspace_size(const lnl_problem *p);
LNL_API size_t lnl_backward_workspace_size(const lnl_problem *p);

/* Validates p alone: INVALID_ARGUMENT for a malformed problem, UNSUPPORTED when
 * this build or device cannot serve it (e.g. CUDA in a CPU-only build, F64 on CUDA). */
LNL_API lnl_status lnl_check(const lnl_problem *p);

/* A short English name of status; never NULL, also for unknown values. */
LNL_API const char *lnl_status_string(lnl_status status);

/* This thread's message for its last failed call, naming the offending argument
 * (e.g. "lnl_forward: x is NULL"). "" if no call has failed on this thread. */
LNL_API const char *lnl_last_error(void);

/* The library's version as built (may differ from the LNL_VERSION_* macros of the
 * header a program was compiled with). Any pointer may be NULL. */
LNL_API void lnl_version(int *major, int *minor, int *patch);

/* Bytes one forward keeps for its backward: mean+rstd (2 * M * sizeof(acc)) with
 * recompute, plus the M x K ln_out when keep_ln_out is non-zero. For reports. */
LNL_API size_t lnl_saved_bytes(const lnl_problem *p, int keep_ln_out);

/* The strategy AUTO resolves to for p's forward (FUSED or UNFUSED), and for its
 * backward; REFERENCE/FUSED/UNFUSED are returned as they are. Lets benchmarks and
 * tests report what ran. */
LNL_API lnl_strategy lnl_resolve_strategy(const lnl_problem *p);
LNL_API lnl_strategy lnl_resolve_backward_strategy(const lnl_problem *p);

/* Size in bytes of one element of dtype (0 for an unknown value). */
LNL_API size_t lnl_dtype_size(lnl_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif /* LNLINEAR_H */
