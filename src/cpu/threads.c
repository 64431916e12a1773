/* A thread team for one call: the caller and nth-1 more threads run the same function
 * and meet at barriers. Nothing global of ours, so concurrent calls from many user
 * threads never share state.
 *
 * Two implementations of the same contract:
 *  - OpenMP (LNL_USE_OPENMP, the default where the compiler has it): a parallel region,
 *    its barrier. In a process that also runs PyTorch, the library then uses PyTorch's
 *    own OpenMP runtime and thread pool (the loader resolves libgomp.so.1 to the copy
 *    torch already loaded), so a call right after a torch op finds that pool's threads
 *    awake instead of competing with them for the cores. With pthreads of our own, a
 *    FUSED forward at 2048,768,768 took 21.1 / 22.4 ms right after F.linear against
 *    14.0 / 15.0 ms after nothing; with OpenMP 13.4 / 15.7 against 13.3 / 15.6
 *    (bench/cpu_after_torch_op.py, two rounds each, 2-vCPU AVX-512 Xeon, 2026-12-01,
 *    docs/results/cpu-2026-12-01-s7-openmp): torch's workers spin for a few ms after
 *    each parallel op;
 *  - pthreads, created for the call and joined at its end (ThreadSanitizer builds,
 *    whose checks do not see inside an uninstrumented OpenMP runtime, and compilers
 *    without OpenMP). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "cpu.h"

#ifdef LNL_USE_OPENMP
#include <omp.h>

/* par->team is not used for OpenMP; a non-NULL marker says "inside a team". */
static lnl_team *const omp_team = (lnl_team *)&omp_team;

void lnl_par_run(int nth, lnl_par_fn fn, void *ctx) {
    if (nth <= 1) {
        lnl_par par = {0, 1, NULL};
        fn(&par, ctx);
        return;
    }
    /* The runtime may give fewer threads (nested inside a user's parallel region: one);
     * every partition reads par.nth, as with pthreads that fail to start. */
#pragma omp parallel num_threads(nth)
    {
        lnl_par par = {omp_get_thread_num(), omp_get_num_threads(), omp_team};
        fn(&par, ctx);
    }
}

void lnl_par_barrier(const lnl_par *par) {
    if (!par->team || par->nth <= 1) return;
#pragma omp barrier
}

#else

#define LNL_MAX_THREADS 256

struct lnl_team {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int nth;          /* threads actually running fn */
    int started;      /* set once nth is final */
    int waiting;      /* barrier arrivals this generation */
    unsigned gen;     /* barrier generation */
    lnl_par_fn fn;
    void *ctx;
};

typedef struct {
    lnl_team *team;
    int tid;
} worker_arg;

static void *worker_main(void *p) {
    worker_arg *w = (worker_arg *)p;
    lnl_team *t = w->team;
    pthread_mutex_lock(&t->mu);
    while (!t->started) pthread_cond_wait(&t->cv, &t->mu);
    int nth = t->nth;
    pthread_mutex_unlock(&t->mu);
    lnl_par par = {w->tid, nth, t};
    t->fn(&par, t->ctx);
    return NULL;
}

void lnl_par_run(int nth, lnl_par_fn fn, void *ctx) {
    if (nth > LNL_MAX_THREADS) nth = LNL_MAX_THREADS;
    if (nth <= 1) {
        lnl_par par = {0, 1, NULL};
        fn(&par, ctx);
        return;
    }
    lnl_team t;
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    t.nth = 1;
    t.started = 0;
    t.waiting = 0;
    t.gen = 0;
    t.fn = fn;
    t.ctx = ctx;
    pthread_t ids[LNL_MAX_THREADS];
    worker_arg args[LNL_MAX_THREADS];
    int created = 0;
    /* Workers wait for "started" so that nth is final (some pthread_create may fail)
     * before anyone partitions work. */
    for (int i = 1; i < nth; i++) {
        args[created].team = &t;
        args[created].tid = created + 1;
        if (pthread_create(&ids[created], NULL, worker_main, &args[created]) != 0) break;
        created++;
    }
    pthread_mutex_lock(&t.mu);
    t.nth = created + 1;
    t.started = 1;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
    lnl_par par = {0, created + 1, &t};
    fn(&par, ctx);
    for (int i = 0; i < created; i++) pthread_join(ids[i], NULL);
    pthread_cond_destroy(&t.cv);
    pthread_mutex_destroy(&t.mu);
}

void lnl_par_barrier(const lnl_par *par) {
    lnl_team *t = par->team;
    if (!t || par->nth <= 1) return;
    pthread_mutex_lock(&t->mu);
    unsigned gen = t->gen;
    if (++t->waiting == par->nth) {
        t->waiting = 0;
        t->gen++;
        pthread_cond_broadcast(&t->cv);
    } else {
        while (gen == t->gen) pthread_cond_wait(&t->cv, &t->mu);
    }
    pthread_mutex_unlock(&t->mu);
}

#endif /* LNL_USE_OPENMP */

void lnl_par_range(const lnl_par *par, int64_t n, int64_t align, int64_t *begin, int64_t *end) {
    if (align < 1) align = 1;
    int64_t units = (n + align - 1) / align;
    int64_t b = units * par->tid / par->nth * align;
    int64_t e = units * (par->tid + 1) / par->nth * align;
    *begin = b < n ? b : n;
    *end = e < n ? e : n;
}
