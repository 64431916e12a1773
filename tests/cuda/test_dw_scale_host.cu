/* f16's scale for dW from the raw x (dw_scale.cuh; dw_from_x.cu, dx_epilogue_sm90.cu) on the
 * host, where CI runs it. The GPU's part (the kernels' passes, the atomics, the GEMM on the
 * scaled dy') is for tests/gpu/run.sh: the CUDA table's tiny-spread and f16-limit rows and
 * test_cuda_16bit_dw_from_x. Checked here:
 *  - the exponent: 2^e m in [2^14, 2^15) for every m up to 2^115, 0 for zero, inf and NaN,
 *    and below 2^15 where the clamp at e = 100 binds (m < 2^-85). The clamp at -100 would
 *    let m >= 2^115 past 2^15, but no f16 call reaches it: |dy| <= 65504 < 2^16 and
 *    rstd = 1 / sqrt(var + eps) < 2^75 for any positive float var + eps (>= 2^-149), so
 *    m < 2^91 unless rstd is inf (then e = 0);
 *  - the kernels' maximum: the largest of a row's f16 bits with the sign masked, times
 *    rstd, is max |rstd dy| exactly (the order of the bits is the order of the values, and
 *    multiplying by rstd >= 0 keeps it), and a NaN in dy gives e = 0;
 *  - the prep's rounding: every T(2^e rstd dy) is finite, at most 2^15, within half an f16
 *    ulp of the exact product where that is a normal f16, and the largest is at least 2^14;
 *  - the finish's unscaling: (g 2^e) 2^-e == g, bit for bit. */
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_fp16.h>

#include "dw_scale.cuh"
extern "C" {
#include "testutil.h"
}

using namespace lnl;

namespace {

uint16_t bits_of(__half h) { return __half_raw(h).x; }
__half half_of(uint16_t b) {
    __half_raw r;
    r.x = b;
    return __half(r);
}
uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
float ffrom(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void check_exponent() {
    const float rstd_max = 1.f / sqrtf(ldexpf(1.f, -149)); /* 2^74.5 */
    tu_expect(65504.f * rstd_max < ldexpf(1.f, 115), "f16's largest |rstd dy| %g reaches 2^115",
              (double)(65504.f * rstd_max));
    tu_expect(dw_scale_exp_of(0.f) == 0 && dw_scale_exp_of(-0.f) == 0, "zero: e != 0");
    tu_expect(dw_scale_exp_of(INFINITY) == 0, "inf: e != 0");
    tu_expect(dw_scale_exp_of(NAN) == 0, "NaN: e != 0");
    tu_expect(dw_scale_exp_of(-3.f) == 0, "a negative maximum: e != 0");
    const float fracs[] = {0.5f, 0.5f + 1e-7f, 0.75f, 0.9999999f};
    for (int k = -149; k <= 128; k++)
        for (float f : fracs) {
            const float m = ldexpf(f, k);
            if (!(m > 0.f) || !std::isfinite(m) || m >= ldexpf(1.f, 115)) continue;
            const int e = dw_scale_exp_of(m);
            const double s = ldexp((double)m, e);
            tu_expect(s < 32768.0, "m = %a: 2^%d m = %g reaches 2^15", (double)m, e, s);
            const int want = 15 - (std::ilogb(m) + 1);
            if (want >= -100 && want <= 100)
                tu_expect(s >= 16384.0 && e == want, "m = %a: e = %d (want %d), 2^e m = %g", (double)m,
                          e, want, s);
            else
                tu_expect(e == (want < 0 ? -100 : 100), "m = %a: e = %d not clamped", (double)m, e);
            tu_expect(std::isnormal(ldexpf(1.f, e)) && std::isnormal(ldexpf(1.f, -e)),
                      "m = %a: 2^e or 2^-e not a normal float", (double)m);
        }
}

/* The scale word as the kernels write it: per row the largest f16 bits with the sign
 * masked, as a float times |rstd|, and the largest of those floats' bits. */
float kernel_word(const std::vector<uint16_t> &dy, const std::vector<float> &rstd, int64_t N) {
    uint32_t word = 0;
    for (size_t m = 0; m < rstd.size(); m++) {
        uint32_t h = 0;
        for (int64_t n = 0; n < N; n++) h = std::max<uint32_t>(h, dy[m * N + n] & 0x7fffu);
        const float a = __half2float(half_of((uint16_t)h)) * fabsf(rstd[m]);
        if (h) word = std::max(word, fbits(a));
    }
    return ffrom(word);
}

/* one call's rows: dy (f16 bits, row-major M x N) and rstd */
void check_call(const char *what, const std::vector<uint16_t> &dy, const std::vector<float> &rstd,
                int64_t N) {
    const int64_t M = (int64_t)rstd.size();
    float direct = 0.f; /* the plain way: max over elements of |rstd * dy| in float */
    bool nan = false;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            const float p = fabsf(rstd[m] * __half2float(half_of(dy[m * N + n])));
            if (std::isnan(p)) nan = true;
            else direct = std::max(direct, p);
        }
    const float wm = kernel_word(dy, rstd, N);
    if (nan) {
        tu_expect(std::isnan(wm) && dw_scale_exp_of(wm) == 0, "%s: a NaN in dy gives e = %d",
                  what, dw_scale_exp_of(wm));
        return;
    }
    tu_expect(fbits(wm) == fbits(direct), "%s: the kernels' maximum %a is not max |rstd dy| %a",
              what, (double)wm, (double)direct);
    const int e = dw_scale_exp_of(wm);
    const float sc = ldexpf(1.f, e);
    float top = 0.f;
    int bad = 0;
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            const float d = __half2float(half_of(dy[m * N + n]));
            const float p = __half2float(__float2half_rn(rstd[m] * d * sc)); /* the prep's */
            const double exact = (double)rstd[m] * (double)d * ldexp(1.0, e);
            top = std::max(top, fabsf(p));
            bool ok = std::isfinite(p) && fabsf(p) <= 32768.f;
            if (fabs(exact) >= ldexp(1.0, -14)) /* a normal f16: half an ulp, 2^-11 relative */
                ok = ok && fabs(p - exact) <= ldexp(fabs(exact), -11) * 1.0001;
            if (!ok && bad++ < 3)
                tu_expect(false, "%s: rstd %g dy %g -> %g (2^%d), exact %g", what, (double)rstd[m],
                          (double)d, (double)p, e, exact);
        }
    tu_expect(bad == 0, "%s: %d products out of range or off by more than half an ulp", what, bad);
    if (wm > 0.f)
        tu_expect(top >= 16384.f, "%s: the largest scaled value %g is below 2^14 (e = %d)", what,
                  (double)top, e);
}

void check_calls() {
    tu_rng r;
    tu_rng_seed(&r, 41);
    const int64_t M = 64, N = 40;
    std::vector<uint16_t> dy(M * N);
    std::vector<float> rstd(M);
    struct kind {
        const char *what;
        double dy_scale, r_lo, r_hi;
    } kinds[] = {
        {"rstd ~ 1, dy ~ 1", 1.0, 0.5, 2.0},
        {"rstd up to 316 (eps-bound rows), dy ~ 300: rstd dy past 65504", 300.0, 1.0, 316.0},
        {"dy ~ 1e-6 (subnormal in f16), rstd ~ 1", 1e-6, 0.5, 2.0},
        {"rows of spread 2e4 (rstd 5e-5), dy ~ 1e2", 1e2, 4e-5, 6e-5},
        {"dy at f16's limits, rstd up to 316", 6e4, 1e-3, 316.0},
    };
    for (const kind &k : kinds)
        for (int rep = 0; rep < 4; rep++) {
            for (int64_t m = 0; m < M; m++)
                rstd[m] = (float)(k.r_lo * pow(k.r_hi / k.r_lo, tu_uniform(&r)));
            for (auto &b : dy)
                b = bits_of(__float2half_rn((float)fmax(-65504.0, fmin(65504.0, k.dy_scale * tu_randn(&r)))));
            dy[0] = 0; /* a zero among them */
            check_call(k.what, dy, rstd, N);
        }
    /* every dy zero: nothing to scale */
    std::fill(dy.begin(), dy.end(), (uint16_t)0x8000u); /* -0 */
    check_call("dy all -0", dy, rstd, N);
    /* a NaN and an inf */
    for (auto &b : dy) b = bits_of(__float2half_rn((float)tu_randn(&r)));
    dy[5] = 0x7e00u;
    check_call("a NaN in dy", dy, rstd, N);
    dy[5] = 0xfc00u; /* -inf */
    const float w = kernel_word(dy, rstd, N);
    tu_expect(std::isinf(w) && w > 0.f && dw_scale_exp_of(w) == 0, "an inf in dy: maximum %g, e = %d",
              (double)w, dw_scale_exp_of(w));
}

void check_unscale() {
    tu_rng r;
    tu_rng_seed(&r, 7);
    for (int e = -100; e <= 100; e += 7)
        for (int i = 0; i < 200; i++) {
            const float g = (float)(tu_randn(&r) * pow(10.0, 6.0 * tu_uniform(&r) - 3.0));
            const float up = g * ldexpf(1.f, e);
            if (!std::isnormal(up)) continue; /* G past float's range: not a case */
            const float back = up * ldexpf(1.f, -e);
            tu_expect(fbits(back) == fbits(g), "2^%d: %a -> %a", e, (double)g, (double)back);
        }
}

} // namespace

int main() {
    check_exponent();
    check_calls();
    check_unscale();
    return tu_finish();
}
