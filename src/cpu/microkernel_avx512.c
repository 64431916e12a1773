/* AVX-512 micro-kernels: 12 x 32 floats / 12 x 16 doubles, i.e. 24 accumulators,
 * 2 B vectors and 1 broadcast out of 32 zmm registers. Kept deliberately plain:
 * it is compiled everywhere but only runs where the CPU has AVX-512. */
#include <immintrin.h>

#include "cpu.h"

#define UKR_AVX512(NAME, T, V, MR, NV, W, LOAD, STORE, ADD, SET1, FMA, ZERO)                       \
    void NAME(int64_t kc, const T *a, const T *b, T *c, int64_t ldc, int accumulate,               \
              const T *bias) {                                                                     \
        V acc[MR][NV];                                                                             \
        for (int i = 0; i < MR; i++)                                                               \
            for (int v = 0; v < NV; v++) acc[i][v] = ZERO();                                       \
        for (int64_t p = 0; p < kc; p++, a += MR, b += NV * W) {                                   \
            V b0 = LOAD(b), b1 = LOAD(b + W);                                                      \
            for (int i = 0; i < MR; i++) {                                                         \
                V ai = SET1(a[i]);                                                                 \
                acc[i][0] = FMA(ai, b0, acc[i][0]);                                                \
                acc[i][1] = FMA(ai, b1, acc[i][1]);                                                \
            }                                                                                      \
        }                                                                                          \
        for (int i = 0; i < MR; i++)                                                               \
            for (int v = 0; v < NV; v++) {                                                         \
                T *cp = c + i * ldc + v * W;                                                       \
                if (accumulate) STORE(cp, ADD(LOAD(cp), acc[i][v]));                               \
                else if (bias) STORE(cp, ADD(acc[i][v], LOAD(bias + v * W)));                      \
                else STORE(cp, acc[i][v]);                                                         \
            }                                                                                      \
    }

UKR_AVX512(lnl_ukr_f32_avx512, float, __m512, 12, 2, 16, _mm512_loadu_ps, _mm512_storeu_ps,
           _mm512_add_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_setzero_ps)
UKR_AVX512(lnl_ukr_f64_avx512, double, __m512d, 12, 2, 8, _mm512_loadu_pd, _mm512_storeu_pd,
           _mm512_add_pd, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_setzero_pd)
