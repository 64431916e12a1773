/* lnl-bench in a build without CUDA: device memory is host memory and no GPU exists. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int bench_cuda_available(void) { return 0; }
void *bench_alloc(lnl_device dev, size_t bytes) { return (void)dev, malloc(bytes ? bytes : 1); }
void bench_free(lnl_device dev, void *ptr) { (void)dev, free(ptr); }
void bench_upload(lnl_device dev, void *dst, const void *src, size_t bytes) {
    (void)dev, memcpy(dst, src, bytes);
}
void bench_download(lnl_device dev, void *dst, const void *src, size_t bytes) {
    (void)dev, memcpy(dst, src, bytes);
}
int bench_cuda_gemms_ms(lnl_dtype dt, int64_t M, int64_t N, int64_t K, const void *ln_out,
                        const void *w, const void *dy, void *y, void *dxhat, void *dw,
                        bench_cuda_gemms *out) {
    (void)dt, (void)M, (void)N, (void)K, (void)ln_out, (void)w, (void)dy, (void)y, (void)dxhat;
    (void)dw, (void)out;
    return -1;
}
double bench_cuda_time_ms(bench_fn fn, void *ctx, int reps) {
    (void)fn, (void)ctx, (void)reps;
    return -1;
}
