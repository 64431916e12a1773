/* The FUSED backward's dx in the epilogue of the dy . W GEMM, bf16 and f16 on Hopper
 * (dx_epilogue_sm90.cu says how and why). Used by backward() in cuda_backend.cu. */
#ifndef LNL_DX_EPILOGUE_SM90_CUH
#define LNL_DX_EPILOGUE_SM90_CUH

#include "cuda_common.cuh"

namespace lnl {

/* Whether the path serves a problem of this dtype and shape on device d (bf16 or f16, sm_90,
 * K and N multiples of 8: TMA's 16-byte row pitches). */
bool dx_epilogue_serves(lnl_dtype dt, int64_t M, int64_t K, int64_t N, const device_info &d);
/* ... and these operands: 16-byte aligned dy, x, W, gamma, beta, y and dx (gamma, beta
 * may be null), the tensor-map encoder found. */
bool dx_epilogue_runs(lnl_dtype dt, int64_t M, int64_t K, int64_t N, const void *dy,
                      const void *x, const void *W, const void *gamma, const void *beta,
                      const void *y, const void *dx, const device_info &d);

/* Its workspace: W^T (K x N, the dtype's), {c, f} per column of dy (N float2; c = W gamma,
 * f = W beta + bias), each row's epilogue values (M float4), {u, v} per column (N float2,
 * from the dW finish) and K ones of the dtype (gamma's stand-in where it is absent). */
struct dx_epilogue_layout {
    void *wt;
    float2 *cf;
    float4 *rowp;
    float2 *uvn;
    void *gamma1;
};
size_t dx_epilogue_workspace(int64_t M, int64_t K, int64_t N);
dx_epilogue_layout dx_epilogue_carve(void *base, int64_t M, int64_t K, int64_t N);

/* W^T and {c, f}: needs W; gamma (may be null: ones), beta and bias (may be null: zeros). */
cudaError_t launch_dx_epilogue_prep(lnl_dtype dt, const void *W, const void *gamma,
                                    const void *beta, const void *bias,
                                    const dx_epilogue_layout &l, int64_t K, int64_t N,
                                    cudaStream_t s);
/* The rows' values from dy and y (after the prep); absmax: f16's scale word of the dW
 * prep (dw_scale_exp), which this launch fills (zeroed by the caller), null for bf16. */
cudaError_t launch_dx_epilogue_rows(lnl_dtype dt, const void *dy, const void *y,
                                    const float *mean, const float *rstd,
                                    const dx_epilogue_layout &l, unsigned *absmax, int64_t M,
                                    int64_t K, int64_t N, cudaStream_t s);
/* The GEMM writing dx (after the rows' values). */
cudaError_t launch_dx_epilogue(lnl_dtype dt, const void *dy, const void *x, const void *gamma,
                               const dx_epilogue_layout &l, void *dx, int64_t M, int64_t K,
                               int64_t N, const device_info &d, cudaStream_t s);
/* dgamma and dbeta partials (shares rows of K floats each) from W, the dW path's float32
 * G (or, where *off_centre, its fallback's `splits` partials of P) and l.uvn; absmax: f16's
 * scale word of the dW prep (G and u scaled by it), null for bf16. */
cudaError_t launch_dx_epilogue_dgb(lnl_dtype dt, const void *W, const float *part, int splits,
                                   const int *off_centre, const unsigned *absmax,
                                   const dx_epilogue_layout &l, float *part_g, float *part_b,
                                   int64_t shares, int64_t N, int64_t K, cudaStream_t s);
/* The shares of the rows n for launch_dx_epilogue_dgb: about two blocks an SM, at most
 * `most` (the partial rows the workspace holds). */
int64_t dx_epilogue_dgb_shares(int64_t N, int64_t K, int64_t most, const device_info &d);

} // namespace lnl

#endif
