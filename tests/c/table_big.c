/*
 * test_table --device cuda --big: one bf16 problem with M*K > 2^31 elements
 * (M = 524801, K = 4096, N = 16), forward (y, mean, rstd) and backward (dx from
 * the saved statistics) checked against the float64 reference on sampled rows,
 * including rows whose element offsets exceed 2^31 and the last row.
 * x is generated from a hash of (row, column) so that the sampled rows can be
 * rebuilt on the host without keeping 4 GiB there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_shim.h"
#include "testutil.h"

enum { BIG_M = 524801, BIG_K = 4096, BIG_N = 16, CHUNK_ROWS = 4096 };

static double big_x(int64_t row, int64_t col) {
    double v = 3.0 + 2.0 * tu_hash_normal((uint64_t)row, (uint64_t)col);
    return tu_round(LNL_DTYPE_BF16, v);
}

static void *dev_guarded(size_t bytes) {
    unsigned char *p = cu_malloc(bytes + TU_GUARD);
    cu_upload(p + bytes, tu_guard_pattern(), TU_GUARD);
    return p;
}

static int dev_guard_ok(const void *p, size_t bytes) {
    unsigned char g[TU_GUARD];
    cu_download(g, (const unsigned char *)p + bytes, TU_GUARD);
    return memcmp(g, tu_guard_pattern(), TU_GUARD) == 0;
}

int table_run_big_cuda(void) {
    const lnl_dtype dt = LNL_DTYPE_BF16;
    const int64_t M = BIG_M, K = BIG_K, N = BIG_N;
    lnl_problem p;
    memset(&p, 0, sizeof p);
    p.rows = M;
    p.in_features = K;
    p.out_features = N;
    p.eps = 1e-5;
    p.dtype = dt;
    p.device = LNL_DEVICE_CUDA;
    p.strategy = LNL_STRATEGY_AUTO;
    printf("big: M=%lld K=%lld N=%lld bf16, M*K = %lld elements (2^31 = %lld)\n", (long long)M,
           (long long)K, (long long)N, (long long)(M * K), 1LL << 31);
    lnl_status st = lnl_check(&p);
    if (st == LNL_STATUS_UNSUPPORTED) {
        printf("skip big: %s\n", lnl_last_error());
        return 0;
    }
    tu_expect(st == LNL_STATUS_SUCCESS, "big: lnl_check %s (%s)", lnl_status_string(st), lnl_last_error());

    /* Small tensors on the host in double (rounded to bf16) and as bf16. */
    tu_rng r;
    tu_rng_seed(&r, 4242);
    double *lnw = malloc(K * sizeof(double)), *lnb = malloc(K * sizeof(double));
    double *W = malloc(N * K * sizeof(double)), *b = malloc(N * sizeof(double));
    double *dy = malloc((size_t)(M * N) * sizeof(double));
    TU_CHECK(lnw && lnb && W && b && dy);
    for (int64_t k = 0; k < K; k++) {
        lnw[k] = tu_round(dt, 1.0 + 0.3 * tu_randn(&r));
        lnb[k] = tu_round(dt, 0.5 * tu_randn(&r));
    }
    for (int64_t i = 0; i < N * K; i++) W[i] = tu_round(dt, tu_randn(&r) / sqrt((double)K));
    for (int64_t n = 0; n < N; n++) b[n] = tu_round(dt, 0.5 * tu_randn(&r));
    for (int64_t i = 0; i < M * N; i++) dy[i] = tu_round(dt, tu_randn(&r));

    size_t xb = (size_t)(M * K) * 2, yb = (size_t)(M * N) * 2, sb = (size_t)M * 4;
    void *d_lnw = dev_guarded(K * 2), *d_lnb = dev_guarded(K * 2), *d_W = dev_guarded(N * K * 2);
    void *d_b = dev_guarded(N * 2), *d_dy = dev_guarded(yb), *d_x = dev_guarded(xb);
    void *d_y = dev_guarded(yb), *d_mean = dev_guarded(sb), *d_rstd = dev_guarded(sb);
    void *d_dx = dev_guarded(xb);
    uint16_t *h = malloc((size_t)(CHUNK_ROWS * K) * 2 + (size_t)(M * N) * 2);
    TU_CHECK(h);
    tu_store(dt, h, lnw, K);
    cu_upload(d_lnw, h, K * 2);
    tu_store(dt, h, lnb, K);
    cu_upload(d_lnb, h, K * 2);
    tu_store(dt, h, W, N * K);
    cu_upload(d_W, h, N * K * 2);
    tu_store(dt, h, b, N);
    cu_upload(d_b, h, N * 2);
    tu_store(dt, h, dy, M * N);
    cu_upload(d_dy, h, yb);
    for (int64_t r0 = 0; r0 < M; r0 += CHUNK_ROWS) {
        int64_t rows = M - r0 < CHUNK_ROWS ? M - r0 : CHUNK_ROWS;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t k = 0; k < K; k++) h[i * K + k] = tu_f32_to_bf16((float)big_x(r0 + i, k));
        cu_upload((unsigned char *)d_x + (size_t)(r0 * K) * 2, h, (size_t)(rows * K) * 2);
    }

    /* Sampled rows, poisoned in y and dx before the calls. */
    int64_t rows[48];
    int ns = 0;
    static const int64_t fixed[] = {0, 1, 2, 524287, 524288, 524289, BIG_M - 2, BIG_M - 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) rows[ns++] = fixed[i];
    while (ns < 48) rows[ns++] = (int64_t)(tu_rng_u64(&r) % (uint64_t)M);
    uint16_t nanrow[BIG_K];
    tu_fill_nan(dt, 0, nanrow, K);
    for (int i = 0; i < ns; i++) {
        cu_upload((unsigned char *)d_y + (size_t)(rows[i] * N) * 2, nanrow, N * 2);
        cu_upload((unsigned char *)d_dx + (size_t)(rows[i] * K) * 2, nanrow, K * 2);
    }

    st = lnl_forward(&p, d_x, d_lnw, d_lnb, d_W, d_b, d_y, d_mean, d_rstd, NULL, NULL, 0);
    cu_sync();
    tu_expect(st == LNL_STATUS_SUCCESS, "big forward: %s (%s)", lnl_status_string(st), lnl_last_error());
    st = lnl_backward(&p, d_dy, d_x, d_lnw, d_lnb, d_W, d_mean, d_rstd, NULL, d_dx, NULL, NULL, NULL,
                      NULL, NULL, 0);
    cu_sync();
    tu_expect(st == LNL_STATUS_SUCCESS, "big backward: %s (%s)", lnl_status_string(st), lnl_last_error());
    tu_expect(dev_guard_ok(d_y, yb) && dev_guard_ok(d_mean, sb) && dev_guard_ok(d_rstd, sb) &&
                  dev_guard_ok(d_dx, xb) && dev_guard_ok(d_x, xb),
              "big: a guard after y/mean/rstd/dx/x was overwritten");

    /* Reference of the sampled rows, compared as one tensor per output. */
    double *xr = malloc(K * sizeof(double)), *ry = malloc((size_t)ns * N * sizeof(double));
    double *oy = malloc((size_t)ns * N * sizeof(double)), *rdx = malloc((size_t)ns * K * sizeof(double));
    double *odx = malloc((size_t)ns * K * sizeof(double));
    double rm[48], rr[48], om[48], orr[48];
    TU_CHECK(xr && ry && oy && rdx && odx);
    for (int i = 0; i < ns; i++) {
        int64_t row = rows[i];
        for (int64_t k = 0; k < K; k++) xr[k] = big_x(row, k);
        tu_ref_forward(1, K, N, p.eps, xr, lnw, lnb, W, b, ry + i * N, &rm[i], &rr[i], NULL);
        tu_ref_backward(1, K, N, p.eps, dy + row * N, xr, lnw, lnb, W, rdx + (size_t)i * K, NULL, NULL,
                        NULL, NULL);
        uint16_t tmp[BIG_K];
        float st2[2];
        cu_download(tmp, (unsigned char *)d_y + (size_t)(row * N) * 2, N * 2);
        tu_load(dt, oy + i * N, tmp, N);
        cu_download(tmp, (unsigned char *)d_dx + (size_t)(row * K) * 2, K * 2);
        tu_load(dt, odx + (size_t)i * K, tmp, K);
        cu_download(&st2[0], (unsigned char *)d_mean + row * 4, 4);
        cu_download(&st2[1], (unsigned char *)d_rstd + row * 4, 4);
        om[i] = st2[0];
        orr[i] = st2[1];
    }
    double e_y = tu_relerr(oy, ry, (size_t)ns * N), e_dx = tu_relerr(odx, rdx, (size_t)ns * K);
    double e_m = tu_relerr(om, rm, ns), e_r = tu_relerr(orr, rr, ns);
    printf("big: sampled %d rows: y %.2e mean %.2e rstd %.2e dx %.2e\n", ns, e_y, e_m, e_r, e_dx);
    tu_expect(e_y <= 1e-2, "big: y rel err %.3e > 1e-2", e_y);
    tu_expect(e_m <= 1e-5, "big: mean rel err %.3e > 1e-5", e_m);
    tu_expect(e_r <= 1e-5, "big: rstd rel err %.3e > 1e-5", e_r);
    tu_expect(e_dx <= 1e-2, "big: dx rel err %.3e > 1e-2", e_dx);
    /* The last row alone, so a dropped high row cannot hide in the average. */
    double e_last = tu_relerr(odx + (size_t)(7 * K), rdx + (size_t)(7 * K), K);
    tu_expect(e_last <= 1e-2, "big: dx of the last row rel err %.3e", e_last);

    void *dev[] = {d_lnw, d_lnb, d_W, d_b, d_dy, d_x, d_y, d_mean, d_rstd, d_dx};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) cu_free(dev[i]);
    free(lnw), free(lnb), free(W), free(b), free(dy), free(h);
    free(xr), free(ry), free(oy), free(rdx), free(odx);
    return 0;
}
