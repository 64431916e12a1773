/* The merge of partial row statistics, shared by the Hopper forward's split statistics
 * (fused_forward_sm90.cu) and their host test (tests/cuda/test_split_stats_host.cu). A
 * share is (mean, M2, count) of some of a row's values, with M2 the sum of squared
 * deviations from that mean; count 0 means no values. */
#ifndef LNL_SPLIT_STATS_CUH
#define LNL_SPLIT_STATS_CUH

#include <math.h>

namespace lnl {

/* Chan's pairwise formula: the running (n, mean, m2) takes in share (mean_b, m2_b, n_b).
 * A share of no values leaves it as it was; the first share with values becomes it
 * exactly (delta * 1 + 0, and m2_b + 0). */
__host__ __device__ inline void chan_merge(float &n, float &mean, float &m2, float mean_b, float m2_b,
                                           float n_b) {
    if (n_b > 0.f) {
        const float nt = n + n_b, delta = mean_b - mean, f = n_b / nt;
        mean = fmaf(delta, f, mean);
        m2 += m2_b + delta * delta * n * f;
        n = nt;
    }
}

/* rstd from a whole row's M2 over K values */
__host__ __device__ inline float rstd_of(float m2, int K, float eps) {
    return 1.f / sqrtf(m2 / (float)K + eps);
}

} // namespace lnl

#endif /* LNL_SPLIT_STATS_CUH */
