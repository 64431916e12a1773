/* The split statistics of the Hopper forward (fused_forward_sm90.cu, FORM_FOLD_STATS with
 * several column tiles) modelled on the host, against float64: a row's mean and rstd from
 * tn column tiles, tile jn summing the 64-wide K slices kt with kt % tn == jn, each of a
 * row's 8 threads one 8-value chunk of each slice, sums of deviations from the tile's shift
 * (the mean of its first slice's values), the 8 threads' sums added by a xor tree,
 * and the tiles' shares merged by chan_merge (split_stats.cuh, the kernel's own code) in
 * the kernel's order: each of two threads merges half of the shares in tile order (the
 * first (tn + 1) / 2, then the rest), and the first takes in the second's. What the model
 * cannot show (the kernel's indexing, the counter, the wait) is for the GPU: the CUDA
 * table's split rows and test_cuda_stats_inside_redo_many_tiles. tn runs 1 to 16, beyond
 * what the kernel takes (SPLIT_STATS_MAX_COL_TILES). Rows: spread 2 at means 0, 3 and 1e3;
 * spread 1e-3 (eps dominates); and rows whose whole variance sits in one slice (the
 * shifted sums' worst case). */
#include <cmath>
#include <cstdio>
#include <vector>

#include "split_stats.cuh"
#include "tiny_host_util.h"

using namespace lnl;
using namespace tiny_host;

namespace {

constexpr int BK = 64, CHUNK = 8, THREADS = 8;

struct share {
    float mean, m2, n;
};

/* tile jn of tn's share of row x (K values, K % 8 == 0), as the kernel computes it */
share tile_share(const std::vector<float> &x, int K, int tn, int jn) {
    const int KT = (K + BK - 1) / BK;
    float shift = 0.f, s1[THREADS] = {}, s2[THREADS] = {};
    int cnt[THREADS] = {};
    for (int kt = jn; kt < KT; kt += tn) {
        if (kt == jn) { /* the shift: the mean of this slice's valid chunks */
            float part[THREADS];
            for (int t = 0; t < THREADS; t++) {
                part[t] = 0.f;
                const int k = kt * BK + CHUNK * t;
                if (k < K)
                    for (int j = 0; j < CHUNK; j += 2) part[t] += x[k + j] + x[k + j + 1];
            }
            for (int o = 1; o < THREADS; o <<= 1) { /* xor tree: thread 0's sum */
                float next[THREADS];
                for (int t = 0; t < THREADS; t++) next[t] = part[t] + part[t ^ o];
                for (int t = 0; t < THREADS; t++) part[t] = next[t];
            }
            const int chunks = K / CHUNK - CHUNK * kt < CHUNK ? K / CHUNK - CHUNK * kt : CHUNK;
            shift = part[0] / (float)(CHUNK * chunks);
        }
        for (int t = 0; t < THREADS; t++) {
            const int k = kt * BK + CHUNK * t;
            if (k >= K) continue;
            float a0 = 0.f, a1 = 0.f, q0 = 0.f, q1 = 0.f;
            for (int j = 0; j < CHUNK; j += 2) {
                const float d0 = x[k + j] - shift, d1 = x[k + j + 1] - shift;
                a0 += d0, a1 += d1;
                q0 = std::fmaf(d0, d0, q0), q1 = std::fmaf(d1, d1, q1);
            }
            s1[t] += a0 + a1;
            s2[t] += q0 + q1;
            cnt[t]++;
        }
    }
    /* the 8 threads' count and sums added by a xor tree (thread 0's, as every lane's) */
    float n[THREADS], a[THREADS], q[THREADS];
    for (int t = 0; t < THREADS; t++) {
        n[t] = (float)(CHUNK * cnt[t]);
        a[t] = cnt[t] ? s1[t] : 0.f;
        q[t] = cnt[t] ? s2[t] : 0.f;
    }
    for (int o = 1; o < THREADS; o <<= 1) {
        float na[THREADS], nq[THREADS], nn[THREADS];
        for (int t = 0; t < THREADS; t++)
            na[t] = a[t] + a[t ^ o], nq[t] = q[t] + q[t ^ o], nn[t] = n[t] + n[t ^ o];
        for (int t = 0; t < THREADS; t++) a[t] = na[t], q[t] = nq[t], n[t] = nn[t];
    }
    const float mu = n[0] > 0.f ? a[0] / n[0] : 0.f;
    const float m2 = n[0] > 0.f ? std::fmax(std::fmaf(-a[0], mu, q[0]), 0.f) : 0.f;
    return n[0] > 0.f ? share{shift + mu, m2, n[0]} : share{0.f, 0.f, 0.f};
}

/* one row through tn tiles against float64 */
void run_row(const char *what, const std::vector<float> &x, int K, int tn) {
    float hn[2] = {0.f, 0.f}, hmean[2] = {0.f, 0.f}, hm2[2] = {0.f, 0.f};
    const int half = (tn + 1) / 2;
    for (int j = 0; j < tn; j++) {
        const share s = tile_share(x, K, tn, j);
        const int h = j < half ? 0 : 1;
        chan_merge(hn[h], hmean[h], hm2[h], s.mean, s.m2, s.n);
    }
    float n = hn[0], mean = hmean[0], m2 = hm2[0];
    chan_merge(n, mean, m2, hmean[1], hm2[1], hn[1]);
    const float rs = rstd_of(m2, K, 1e-5f);
    double sum = 0.0, sq = 0.0;
    for (int k = 0; k < K; k++) sum += x[k];
    const double rm = sum / K;
    for (int k = 0; k < K; k++) sq += (x[k] - rm) * (x[k] - rm);
    const double rr = 1.0 / std::sqrt(sq / K + 1e-5);
    /* the bounds of tests/python/test_numerics.py's split redo test: mean within 1e-5 of
     * itself plus 1e-5 standard deviations, rstd within 1e-4 */
    tu_expect(n == (float)K, "%s tn=%d K=%d: %g values counted", what, tn, K, (double)n);
    tu_expect(std::fabs(mean - rm) <= 1e-5 * std::fabs(rm) + 1e-5 / rr, "%s tn=%d K=%d: mean %.9g vs %.9g",
              what, tn, K, (double)mean, rm);
    tu_expect(std::fabs(rs / rr - 1.0) <= 1e-4, "%s tn=%d K=%d: rstd %.9g vs %.9g", what, tn, K, (double)rs,
              rr);
}

} // namespace

int main() {
    tu_rng r;
    tu_rng_seed(&r, 15);
    const int Ks[] = {8, 64, 72, 128, 200, 520, 1000, 1032, 4096, 8192};
    for (int K : Ks)
        for (int tn = 1; tn <= 16; tn++) {
            struct {
                const char *what;
                double mean, sd;
            } kinds[] = {{"centred", 0.0, 2.0}, {"mean 3", 3.0, 2.0}, {"mean 1e3", 1e3, 2.0},
                         {"spread 1e-3", 0.5, 1e-3}};
            for (auto &kd : kinds)
                for (int rep = 0; rep < 3; rep++) {
                    std::vector<__nv_bfloat16> xb(K);
                    std::vector<double> xd;
                    fill(&r, xb, xd, kd.mean, kd.sd);
                    std::vector<float> x(xd.begin(), xd.end());
                    run_row(kd.what, x, K, tn);
                }
            /* the whole variance in one slice: the last one, or the first */
            for (int where = 0; where < 2; where++) {
                std::vector<float> x(K, 3.f);
                const int k0 = where ? 0 : (K - 1) / BK * BK;
                for (int k = k0; k < K && k < k0 + BK; k++) x[k] = (float)(3.0 + 4.0 * tu_randn(&r));
                for (auto &v : x) v = (float)from_t(to_t<__nv_bfloat16>(v));
                run_row(where ? "variance in the first slice" : "variance in the last slice", x, K, tn);
            }
        }
    return tu_finish();
}
