/* The Hopper (sm_90a, wgmma + TMA) fused kernels' host launchers. */
#ifndef LNL_FUSED_SM90_CUH
#define LNL_FUSED_SM90_CUH

#include "cuda_common.cuh"

namespace lnl {

/* y = LN(x) @ W^T + b for bf16/f16 on an sm_90 device (fused_forward_sm90.cu).
 * *launched says whether it ran. It declines (cudaSuccess, *launched = false) on other
 * GPUs and dtypes, when K % 8 != 0, and when x, W, gamma or beta is not 16-byte
 * aligned; the caller then runs the portable mma.sync kernel. */
/* Whether the Hopper forward serves a problem of this dtype and shape on device d,
 * given 16-byte aligned x, W, gamma and beta (AUTO's rule asks before pointers exist). */
bool fused_forward_sm90_serves(lnl_dtype dt, int64_t M, int64_t K, int64_t N,
                               const device_info &d);
/* The number of output tiles it splits an M x N problem into (its persistent grid runs
 * min(tiles, SMs) CTAs). */
int64_t fused_forward_sm90_tiles(int64_t M, int64_t N);

cudaError_t launch_fused_forward_sm90(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const void *gamma, const void *beta,
                                      const void *W, const void *bias, void *y, int64_t M,
                                      int64_t K, int64_t N, const device_info &d, cudaStream_t s,
                                      bool *launched);

} // namespace lnl

#endif
