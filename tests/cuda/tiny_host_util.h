/* What the host tests of the tiny kernels' bodies share (test_tiny_forward_host.cu,
 * test_tiny_backward_host.cu): a barrier that does nothing (one thread runs the body),
 * conversions, a relative-error check and random operands whose float64 copies are the
 * rounded values the body sees. */
#ifndef LNL_TINY_HOST_UTIL_H
#define LNL_TINY_HOST_UTIL_H

#include <vector>

#include "tiny_common.cuh"
extern "C" {
#include "testutil.h"
}

namespace tiny_host {

struct host_sync {
    void operator()() const {}
};

template <typename T> T to_t(double v) { return lnl::tb_store<T>((float)v); }
template <typename T> double from_t(T v) { return (double)lnl::tb_load(v); }

/* t[i] = mean + sd * randn rounded to T, d[i] = the rounded value */
template <typename T>
void fill(tu_rng *r, std::vector<T> &t, std::vector<double> &d, double mean, double sd) {
    d.resize(t.size());
    for (size_t i = 0; i < t.size(); i++) {
        t[i] = to_t<T>(mean + sd * tu_randn(r));
        d[i] = from_t(t[i]);
    }
}

/* out (any element type) against ref, relative error <= bound; `what` names the case */
template <typename O>
void check(const char *what, const char *name, const std::vector<O> &out,
           const std::vector<double> &ref, double bound) {
    std::vector<double> o(out.size());
    for (size_t i = 0; i < out.size(); i++) o[i] = from_t(out[i]);
    const double e = tu_relerr(o.data(), ref.data(), ref.size());
    tu_expect(e <= bound, "%s: %s rel err %.3e > %.1e", what, name, e, bound);
}

/* Every M, K, N of powers of two that fits() admits is within the kernels' limits: its
 * floats() of shared memory in 48 KB, its multiply-adds within TINY_MAX_MACS. */
template <typename Fits, typename Floats> void check_limits(Fits fits, Floats floats) {
    for (int M = 1; M <= 128; M *= 2)
        for (int K = 1; K <= 512; K *= 2)
            for (int N = 1; N <= 512; N *= 2)
                if (fits(M, K, N))
                    tu_expect(floats(M, K, N) * 4 <= 48 * 1024 &&
                                  (int64_t)M * K * N <= lnl::TINY_MAX_MACS,
                              "fits(%d,%d,%d) beyond its limits", M, K, N);
}

} // namespace tiny_host

#endif /* LNL_TINY_HOST_UTIL_H */
