/*
 * 8 pthreads call lnl_forward and lnl_backward at the same time on different
 * problems (shapes, strategies, dtypes, library thread counts); every result
 * must be bitwise equal to a single-threaded run of the same calls made
 * beforehand. Each thread also provokes its own validation error and checks
 * that lnl_last_error() reports that one (the message is per thread).
 * Built under ThreadSanitizer by `make test-tsan`.
 */
#include <pthread.h>
#include <string.h>

#include "testutil.h"

enum { NTHREADS = 11, REPS = 3 };

typedef struct {
    int64_t M, K, N;
    lnl_dtype dt;
    lnl_strategy strat;
    int threads;
} job_spec;

static const job_spec specs[NTHREADS] = {
    {37, 67, 19, LNL_DTYPE_F32, LNL_STRATEGY_FUSED, 1},
    {64, 128, 64, LNL_DTYPE_F32, LNL_STRATEGY_UNFUSED, 2},
    {5, 300, 7, LNL_DTYPE_F64, LNL_STRATEGY_FUSED, 2},
    {129, 33, 40, LNL_DTYPE_F64, LNL_STRATEGY_UNFUSED, 1},
    {16, 1000, 3, LNL_DTYPE_F32, LNL_STRATEGY_AUTO, 2},
    {1, 8, 1, LNL_DTYPE_F64, LNL_STRATEGY_AUTO, 1},
    {23, 45, 67, LNL_DTYPE_F32, LNL_STRATEGY_REFERENCE, 1},
    {200, 16, 16, LNL_DTYPE_F32, LNL_STRATEGY_FUSED, 3},
    /* 16-bit storage past the serial threshold (2e6 multiply-adds): the library's own
     * threads run; K = 8192 gives row blocks of 512, so 600 rows take two blocks, and
     * the widened x of the first must not be overwritten while it is read */
    {600, 8192, 2, LNL_DTYPE_BF16, LNL_STRATEGY_UNFUSED, 2},
    {600, 8192, 2, LNL_DTYPE_F16, LNL_STRATEGY_FUSED, 3},
    {160, 130, 100, LNL_DTYPE_BF16, LNL_STRATEGY_AUTO, 2},
};

enum { B_X, B_LNW, B_LNB, B_W, B_B, B_DY, B_Y, B_MEAN, B_RSTD, B_LNOUT, B_DX, B_DLNW, B_DLNB, B_DW, B_DB, NB };
enum { FIRST_OUT = B_Y };

typedef struct {
    job_spec s;
    lnl_problem p;
    size_t bytes[NB];
    void *buf[NB];
    unsigned char *expect[NB]; /* the single-threaded results */
    int failures;
    char err[256];
} job;

static void job_init(job *j, const job_spec *s, uint64_t seed) {
    memset(j, 0, sizeof *j);
    j->s = *s;
    j->p.rows = s->M, j->p.in_features = s->K, j->p.out_features = s->N;
    j->p.eps = 1e-5, j->p.dtype = s->dt, j->p.strategy = s->strat, j->p.threads = s->threads;
    size_t es = tu_dtype_size(s->dt), as = tu_acc_size(s->dt);
    size_t M = (size_t)s->M, K = (size_t)s->K, N = (size_t)s->N;
    size_t n[NB] = {M * K, K, K, N * K, N, M * N, M * N, M, M, M * K, M * K, K, K, N * K, N};
    tu_rng r;
    tu_rng_seed(&r, seed);
    for (int i = 0; i < NB; i++) {
        j->bytes[i] = n[i] * (i == B_MEAN || i == B_RSTD ? as : es);
        j->buf[i] = tu_galloc(j->bytes[i]);
        if (i < FIRST_OUT) {
            double *v = malloc((n[i] + 1) * sizeof(double));
            TU_CHECK(v);
            for (size_t k = 0; k < n[i]; k++) v[k] = (i == B_X ? 3.0 : 0.0) + tu_randn(&r);
            tu_store(s->dt, j->buf[i], v, n[i]);
            free(v);
        }
    }
}

static void job_free(job *j) {
    for (int i = 0; i < NB; i++) {
        tu_gfree(j->buf[i]);
        free(j->expect[i]);
    }
}

static int job_run(job *j) {
    void **b = j->buf;
    for (int i = FIRST_OUT; i < NB; i++) memset(b[i], 0xFF, j->bytes[i]);
    lnl_status st = lnl_forward(&j->p, b[B_X], b[B_LNW], b[B_LNB], b[B_W], b[B_B], b[B_Y], b[B_MEAN],
                                b[B_RSTD], b[B_LNOUT], NULL, 0);
    if (st != LNL_STATUS_SUCCESS) return 0;
    st = lnl_backward(&j->p, b[B_DY], b[B_X], b[B_LNW], b[B_LNB], b[B_W], b[B_MEAN], b[B_RSTD], NULL, b[B_DX],
                      b[B_DLNW], b[B_DLNB], b[B_DW], b[B_DB], NULL, 0);
    return st == LNL_STATUS_SUCCESS;
}

static void *thread_main(void *arg) {
    job *j = arg;
    for (int rep = 0; rep < REPS; rep++) {
        if (!job_run(j)) {
            j->failures++;
            snprintf(j->err, sizeof j->err, "call failed: %s", lnl_last_error());
            continue;
        }
        for (int i = FIRST_OUT; i < NB; i++) {
            if (memcmp(j->buf[i], j->expect[i], j->bytes[i]) != 0 || !tu_guard_ok(j->buf[i], j->bytes[i])) {
                j->failures++;
                snprintf(j->err, sizeof j->err, "output %d differs from the single-threaded run", i);
            }
        }
        /* a failing call of this thread's own kind; its message must be this thread's */
        lnl_problem bad = j->p;
        const char *want;
        if (j->s.threads == 1) {
            bad.rows = -1;
            want = "rows";
        } else {
            bad.threads = -1;
            want = "threads";
        }
        if (lnl_check(&bad) != LNL_STATUS_INVALID_ARGUMENT || !strstr(lnl_last_error(), want)) {
            j->failures++;
            snprintf(j->err, sizeof j->err, "lnl_last_error \"%s\" does not name %s", lnl_last_error(), want);
        }
    }
    return NULL;
}

int main(void) {
    job jobs[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        job_init(&jobs[t], &specs[t], 1234 + t);
        int ok = job_run(&jobs[t]);
        tu_expect(ok, "single-threaded job %d failed: %s", t, lnl_last_error());
        for (int i = 0; i < NB; i++) {
            jobs[t].expect[i] = malloc(jobs[t].bytes[i] + 1);
            TU_CHECK(jobs[t].expect[i]);
            memcpy(jobs[t].expect[i], jobs[t].buf[i], jobs[t].bytes[i]);
        }
    }
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) TU_CHECK(pthread_create(&th[t], NULL, thread_main, &jobs[t]) == 0);
    for (int t = 0; t < NTHREADS; t++) TU_CHECK(pthread_join(th[t], NULL) == 0);
    for (int t = 0; t < NTHREADS; t++) {
        const job_spec *s = &specs[t];
        tu_expect(jobs[t].failures == 0, "thread %d (%s %s M=%lld K=%lld N=%lld threads=%d): %d failures, last: %s",
                  t, tu_dtype_name(s->dt), tu_strategy_name(s->strat), (long long)s->M, (long long)s->K,
                  (long long)s->N, s->threads, jobs[t].failures, jobs[t].err);
        job_free(&jobs[t]);
    }
    return tu_finish();
}
