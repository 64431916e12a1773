/* f16's scale for dW from the raw x (dw_from_x.cu): the power of two e a call for
 * dy' = T(2^e rstd dy), from m = max |rstd dy| over the call. Host and device, so that
 * tests/cuda/test_dw_scale_host.cu checks it without a GPU. */
#ifndef LNL_DW_SCALE_CUH
#define LNL_DW_SCALE_CUH

#include <cmath>
#include <cstdint>

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

#ifdef __CUDACC__
/* The pieces of max |rstd dy| that both of its passes use (dw_from_x.cu's dy_absmax_kernel,
 * dx_epilogue_sm90.cu's row_terms_kernel). The largest |dy| is taken on the f16 bits:
 * 0x7fff masks the sign, and the bits then order as the values do (NaN above inf). */
__device__ __forceinline__ unsigned f16_pair_abs_bits(uint32_t w) { /* two f16 in a word */
    return max(w & 0x7fffu, (w >> 16) & 0x7fffu);
}
/* |rstd dy| for the largest |dy| bits h as the word's float bits: multiplying by
 * |rstd| >= 0 keeps the order, so this is the largest |rstd dy| as the prep rounds it */
__device__ __forceinline__ unsigned absmax_word(unsigned h, float rstd) {
    return __float_as_uint(__half2float(__ushort_as_half((unsigned short)h)) * fabsf(rstd));
}
/* Raises *absmax to v. Only a value above the word's takes an atomic: one a row or a warp
 * queued thousands on one word (row_terms 16 -> 31 us at f16 32768,4096,256; the pass of
 * its own 11-17 us at 16-32 MB of dy; H200, session 41). A stale read costs only an atomic
 * that changes nothing, and a max does not depend on the order. */
__device__ __forceinline__ void raise_absmax(unsigned *absmax, unsigned v) {
    if (v > *(volatile const unsigned *)absmax) atomicMax(absmax, v);
}
#endif

} // namespace lnl

#endif
