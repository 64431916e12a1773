/* AVX2 forward for tiny f32 problems with short rows (K <= 16): the generic path
 * (small_tmpl.h) spends its microsecond in per-row dependency chains (statistics) and
 * in strided reads of W. Here eight rows' statistics run side by side, one lane per
 * row, and W is transposed once into a stack buffer so that eight outputs are one
 * vector. Every value sees exactly the generic path's operations in the same order
 * (plain k-order sums, no FMA), so the results are bitwise identical. */
#include <immintrin.h>
#include <math.h>

#include "cpu.h"
#include "ln_rows.h"

#define SMALL_MAX_K 16
#define SMALL_MAX_NK 4096

/* Statistics of rows [m, m+8) of x (k <= SMALL_MAX_K), as the generic short-row code:
 * s += x[q] in order, mean = s / k, v += (x[q]-mean)^2 in order, rstd = 1/sqrt(v/k+eps). */
static void stats8(const float *x, int64_t k, float eps, float *mean, float *rstd) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32((int)k));
    __m256 col[SMALL_MAX_K];
    __m256 s = _mm256_setzero_ps(), v = _mm256_setzero_ps();
    for (int64_t q = 0; q < k; q++) {
        col[q] = _mm256_i32gather_ps(x + q, idx, 4);
        s = _mm256_add_ps(s, col[q]);
    }
    __m256 kf = _mm256_set1_ps((float)k);
    __m256 mu = _mm256_div_ps(s, kf);
    for (int64_t q = 0; q < k; q++) {
        __m256 d = _mm256_sub_ps(col[q], mu);
        v = _mm256_add_ps(v, _mm256_mul_ps(d, d));
    }
    __m256 rs = _mm256_div_ps(_mm256_set1_ps(1.0f),
                              _mm256_sqrt_ps(_mm256_add_ps(_mm256_div_ps(v, kf), _mm256_set1_ps(eps))));
    _mm256_storeu_ps(mean, mu);
    _mm256_storeu_ps(rstd, rs);
}

/* Returns 0 (nothing done) when the problem is not of the shape handled here. */
int lnl_cpu_small_forward_f32_avx2(const lnl_fwd_args *a) {
    const int64_t M = a->p.rows, K = a->p.in_features, N = a->p.out_features;
    if (K > SMALL_MAX_K || N * K > SMALL_MAX_NK) return 0;
    const float *x = a->x, *w = a->linear_weight, *bias = a->linear_bias;
    const float *gamma = a->ln_weight, *beta = a->ln_bias;
    const float eps = (float)a->p.eps;
    float *y = a->y, *lnout = a->ln_out;
    float wt[SMALL_MAX_NK], row[SMALL_MAX_K], mu[8], rs[8];
    /* wt[q][n] = w[n][q] */
    for (int64_t n = 0; n < N; n++)
        for (int64_t q = 0; q < K; q++) wt[q * N + n] = w[n * K + q];
    for (int64_t m0 = 0; m0 < M; m0 += 8) {
        int64_t rows = M - m0 < 8 ? M - m0 : 8;
        if (rows == 8) stats8(x + m0 * K, K, eps, mu, rs);
        else
            for (int64_t r = 0; r < rows; r++) lnl_ln_stats_f32(x + (m0 + r) * K, K, eps, mu + r, rs + r);
        for (int64_t r = 0; r < rows; r++) {
            const int64_t m = m0 + r;
            const float *xr = x + m * K;
            for (int64_t q = 0; q < K; q++) {
                float v = (xr[q] - mu[r]) * rs[r];
                if (gamma) v = v * gamma[q];
                if (beta) v = v + beta[q];
                row[q] = v;
            }
            if (a->mean) {
                ((float *)a->mean)[m] = mu[r];
                ((float *)a->rstd)[m] = rs[r];
            }
            if (lnout)
                for (int64_t q = 0; q < K; q++) lnout[m * K + q] = row[q];
            float *yr = y + m * N;
            int64_t n = 0;
            for (; n + 8 <= N; n += 8) {
                __m256 acc = _mm256_setzero_ps();
                for (int64_t q = 0; q < K; q++)
                    acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(row[q]), _mm256_loadu_ps(wt + q * N + n)));
                if (bias) acc = _mm256_add_ps(acc, _mm256_loadu_ps(bias + n));
                _mm256_storeu_ps(yr + n, acc);
            }
            for (; n < N; n++) {
                float acc = 0;
                for (int64_t q = 0; q < K; q++) acc += row[q] * wt[q * N + n];
                yr[n] = bias ? acc + bias[n] : acc;
            }
        }
    }
    return 1;
}
