/* LayerNorm row and column kernels (statistics, apply, backward) for all strategies,
 * and the column sums of 16-bit rows (half.h). */
#include <math.h>

#include "cpu.h"
#include "half.h"
#include "ln_rows.h"

#define LANES 16
#define CHUNK 256

#define T float
#define SUF f32
#define SQRT sqrtf
#include "ln_rows_tmpl.h"
#undef T
#undef SUF
#undef SQRT

#define T double
#define SUF f64
#define SQRT sqrt
#include "ln_rows_tmpl.h"
#undef T
#undef SUF
#undef SQRT

void lnl_colsum_half(float *out, const void *a, int64_t rows, int64_t ld, int64_t n0, int64_t n1,
                     int64_t rb, lnl_dtype kind) {
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    const uint16_t *h = a;
    float tot[CHUNK], blk[CHUNK], row[CHUNK];
    for (int64_t c = n0; c < n1; c += CHUNK) {
        int64_t n = n1 - c < CHUNK ? n1 - c : CHUNK;
        for (int64_t q = 0; q < n; q++) tot[q] = 0;
        for (int64_t r0 = 0; r0 < rows; r0 += rb) {
            int64_t r1 = rows - r0 < rb ? rows : r0 + rb;
            for (int64_t q = 0; q < n; q++) blk[q] = 0;
            for (int64_t r = r0; r < r1; r++) {
                isa->half_to_f32(row, h + r * ld + c, n, kind);
                for (int64_t q = 0; q < n; q++) blk[q] += row[q];
            }
            for (int64_t q = 0; q < n; q++) tot[q] += blk[q];
        }
        for (int64_t q = 0; q < n; q++) out[c + q] = tot[q];
    }
}
