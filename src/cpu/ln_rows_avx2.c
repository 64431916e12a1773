/* AVX2 LayerNorm statistics for f32 rows, bitwise equal to lnl_ln_stats_f32: the same
 * 16 lanes (two vectors), the same 256-element chunks, the same scalar tails and the
 * same pairwise merge, so FUSED, UNFUSED and every ISA share one mean and rstd. The
 * portable code runs this at about two cycles an element; the statistics pass is then
 * a visible share of a forward whose N is small next to K. */
#include <immintrin.h>
#include <math.h>

#include "cpu.h"
#include "ln_rows.h"

#define LANES 16
#define CHUNK 256

/* tot[16] += lane sums of v[0..n), tail elements going to lanes 0, 1, ... in order. */
static void lanes_add(float tot[LANES], const float *v, int64_t n, int square, float mu) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), m = _mm256_set1_ps(mu);
    int64_t q = 0;
    for (; q + LANES <= n; q += LANES) {
        __m256 v0 = _mm256_loadu_ps(v + q), v1 = _mm256_loadu_ps(v + q + 8);
        if (square) {
            v0 = _mm256_sub_ps(v0, m);
            v1 = _mm256_sub_ps(v1, m);
            v0 = _mm256_mul_ps(v0, v0);
            v1 = _mm256_mul_ps(v1, v1);
        }
        a0 = _mm256_add_ps(a0, v0);
        a1 = _mm256_add_ps(a1, v1);
    }
    float acc[LANES];
    _mm256_storeu_ps(acc, a0);
    _mm256_storeu_ps(acc + 8, a1);
    for (int l = 0; q < n; q++, l++) {
        float e = v[q];
        if (square) {
            e = e - mu;
            e = e * e;
        }
        acc[l] += e;
    }
    for (int l = 0; l < LANES; l++) tot[l] += acc[l];
}

static float lanes_total(float tot[LANES]) {
    for (int w = LANES / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) tot[l] += tot[l + w];
    return tot[0];
}

void lnl_ln_stats_f32_avx2(const float *x, int64_t k, float eps, float *mean, float *rstd) {
    if (k <= LANES) {
        lnl_ln_stats_f32(x, k, eps, mean, rstd);
        return;
    }
    float tot[LANES] = {0};
    for (int64_t c = 0; c < k; c += CHUNK) lanes_add(tot, x + c, k - c < CHUNK ? k - c : CHUNK, 0, 0);
    float mu = lanes_total(tot) / (float)k;
    for (int l = 0; l < LANES; l++) tot[l] = 0;
    for (int64_t c = 0; c < k; c += CHUNK) lanes_add(tot, x + c, k - c < CHUNK ? k - c : CHUNK, 1, mu);
    float var = lanes_total(tot) / (float)k;
    *mean = mu;
    *rstd = 1.0f / sqrtf(var + eps);
}
