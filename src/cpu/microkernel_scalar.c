/* Plain C micro-kernels (4 x 4): the fallback for any CPU and the baseline the
 * vector kernels are tested against. */
#include "cpu.h"

#define UKR_SCALAR(NAME, T)                                                                   \
    void NAME(int64_t kc, const T *a, const T *b, T *c, int64_t ldc, int accumulate,          \
              const T *bias) {                                                                \
        T acc[4][4] = {{0}};                                                                  \
        for (int64_t p = 0; p < kc; p++, a += 4, b += 4)                                      \
            for (int i = 0; i < 4; i++)                                                       \
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];                         \
        for (int i = 0; i < 4; i++)                                                           \
            for (int j = 0; j < 4; j++) {                                                     \
                T *cij = c + i * ldc + j;                                                     \
                if (accumulate) *cij = *cij + acc[i][j];                                      \
                else *cij = bias ? acc[i][j] + bias[j] : acc[i][j];                           \
            }                                                                                 \
    }

UKR_SCALAR(lnl_ukr_f32_scalar, float)
UKR_SCALAR(lnl_ukr_f64_scalar, double)
