/* lnl-bench's random inputs (bench/random_fill.c): the values of a stream must not depend
 * on how many threads drew them, different streams must differ, and the values must be
 * normal with the asked mean and scale, rounded to the dtype. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int failures = 0;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: " __VA_ARGS__);                                                          \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(void) {
    /* a size that is not a multiple of the block (65536), over several blocks */
    const size_t n = 5 * 65536 + 1234;
    const lnl_dtype dts[] = {LNL_DTYPE_F32, LNL_DTYPE_BF16, LNL_DTYPE_F16, LNL_DTYPE_F64};
    for (int d = 0; d < 4; d++) {
        double *one = bench_random_fill_threads(n, 3.0, 2.0, dts[d], 11, 1);
        const int counts[] = {2, 3, 7, 64};
        for (int c = 0; c < 4; c++) {
            double *many = bench_random_fill_threads(n, 3.0, 2.0, dts[d], 11, counts[c]);
            EXPECT(memcmp(one, many, n * sizeof(double)) == 0,
                   "dtype %d: %d threads drew other values than one", (int)dts[d], counts[c]);
            free(many);
        }
        double s = 0, q = 0;
        int rounded = 1;
        for (size_t i = 0; i < n; i++) {
            s += one[i], q += one[i] * one[i];
            float f = (float)one[i];
            if (dts[d] != LNL_DTYPE_F64 && (double)f != one[i]) rounded = 0;
            if (dts[d] == LNL_DTYPE_BF16) {
                unsigned u;
                memcpy(&u, &f, 4);
                if (u & 0xffffu) rounded = 0;
            }
        }
        const double mean = s / n, sd = sqrt(q / n - mean * mean);
        EXPECT(fabs(mean - 3.0) < 0.02 && fabs(sd - 2.0) < 0.02,
               "dtype %d: mean %.4f sd %.4f, asked 3 and 2", (int)dts[d], mean, sd);
        EXPECT(rounded, "dtype %d: values not representable in the dtype", (int)dts[d]);
        double *other = bench_random_fill_threads(n, 3.0, 2.0, dts[d], 12, 4);
        size_t same = 0;
        for (size_t i = 0; i < n; i++)
            same += other[i] == one[i];
        EXPECT(same < n / 50, "dtype %d: streams 11 and 12 share %zu of %zu values", (int)dts[d],
               same, n);
        free(other);
        free(one);
    }
    double *empty = bench_random_fill(0, 0.0, 1.0, LNL_DTYPE_F32, 1);
    free(empty);
    printf("%s\n", failures ? "test_random_fill: FAILED" : "test_random_fill: passed");
    return failures != 0;
}
