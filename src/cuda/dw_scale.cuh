/* f16's scale for dW from the raw x (dw_from_x.cu): the power of two e a call for
 * dy' = T(2^e rstd dy), from m = max |rstd dy| over the call. Host and device, so that
 * tests/cuda/test_dw_scale_host.cu checks it without a GPU. */
#ifndef LNL_DW_SCALE_CUH
#define LNL_DW_SCALE_CUH

#include <cmath>

namespace lnl {

/* e puts m in [2^14, 2^15), so no value rounds past 2^15 and f16's 65504 stays out of
 * reach, while the rest keep as many of f16's normal bits as the largest allows. Zero,
 * inf and NaN (nothing to scale, or a gradient that is already lost): 0. Clamped to
 * [-100, 100] so that 2^e and 2^-e are normal floats: at 100 (m < 2^-85) the values only
 * keep fewer bits; -100 would bind from m = 2^115, which no call reaches (|dy| < 2^16 and
 * rstd < 2^75 for any positive float var + eps; tests/cuda/test_dw_scale_host.cu). */
__host__ __device__ inline int dw_scale_exp_of(float m) {
    if (!(m > 0.f) || !isfinite(m)) return 0;
    int e;
    frexpf(m, &e); /* m = f 2^e, f in [0.5, 1) */
    return max(-100, min(100, 15 - e));
}

} // namespace lnl

#endif
