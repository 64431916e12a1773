/* AVX2 + FMA micro-kernels: 6 x 16 floats / 6 x 8 doubles, i.e. 12 accumulators,
 * 2 B vectors and 1 broadcast out of 16 ymm registers.
 * The C tile is prefetched before the k loop: C lives in L3 between the kc passes,
 * and without the prefetch the epilogue stalls on 6-12 misses every call. The k loop
 * is unrolled by 4 so the loop overhead stays off the front end (24 instructions per
 * k step otherwise, close to the 4/cycle a 12-FMA step needs at full rate). */
#include <immintrin.h>

#include "cpu.h"

#define UKR_AVX2(NAME, T, V, MR, NV, W, LOAD, STORE, ADD, SET1, FMA, ZERO)                    \
    void NAME(int64_t kc, const T *a, const T *b, T *c, int64_t ldc, int accumulate,          \
              const T *bias) {                                                                \
        V acc[MR][NV];                                                                        \
        for (int i = 0; i < MR; i++) {                                                        \
            _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);                           \
            _mm_prefetch((const char *)(c + i * ldc + NV * W - 1), _MM_HINT_T0);              \
            for (int v = 0; v < NV; v++) acc[i][v] = ZERO();                                  \
        }                                                                                     \
        _Pragma("GCC unroll 4") for (int64_t p = 0; p < kc; p++, a += MR, b += NV * W) {      \
            V b0 = LOAD(b), b1 = LOAD(b + W);                                                 \
            for (int i = 0; i < MR; i++) {                                                    \
                V ai = SET1(a[i]);                                                            \
                acc[i][0] = FMA(ai, b0, acc[i][0]);                                           \
                acc[i][1] = FMA(ai, b1, acc[i][1]);                                           \
            }                                                                                 \
        }                                                                                     \
        for (int i = 0; i < MR; i++)                                                          \
            for (int v = 0; v < NV; v++) {                                                    \
                T *cp = c + i * ldc + v * W;                                                  \
                if (accumulate) STORE(cp, ADD(LOAD(cp), acc[i][v]));                          \
                else if (bias) STORE(cp, ADD(acc[i][v], LOAD(bias + v * W)));                 \
                else STORE(cp, acc[i][v]);                                                    \
            }                                                                                 \
    }

UKR_AVX2(lnl_ukr_f32_avx2, float, __m256, 6, 2, 8, _mm256_loadu_ps, _mm256_storeu_ps,
         _mm256_add_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_setzero_ps)
UKR_AVX2(lnl_ukr_f64_avx2, double, __m256d, 6, 2, 4, _mm256_loadu_pd, _mm256_storeu_pd,
         _mm256_add_pd, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_setzero_pd)
