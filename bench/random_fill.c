/* lnl-bench's random inputs, generated on all of the host's cores.
 *
 * One thread drawing normals (Box-Muller: a log, a sqrt and a cos a value) took 9 s for the
 * 160 M values of 16384,8192,1024 on the 2-core CI machine, under load; on the H200's host a
 * large shape took ~6 s of lnl-bench's time (session 19). The values depend on (stream,
 * index) alone, not on how many threads ran. The values are cut into blocks of FILL_BLOCK.
 * Block b of stream s starts from a xorshift state seeded by splitmix64 of (s, b). Thread t
 * of T fills blocks t, t + T, ... and rounds each to the dtype as it goes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

enum { FILL_BLOCK = 1 << 16, FILL_MAX_THREADS = 64 };

static uint64_t splitmix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return ((double)(*s >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

typedef struct fill_job {
    double *v;
    size_t n;
    double mean, scale;
    lnl_dtype dt;
    uint64_t stream;
    int threads, t;
} fill_job;

/* Blocks t, t + T, ... of the job: normals, then each rounded to dt and back. */
static void *fill_blocks(void *arg) {
    const fill_job *j = arg;
    void *tmp = malloc((size_t)FILL_BLOCK * 8);
    if (!tmp) {
        fprintf(stderr, "lnl-bench: out of host memory\n");
        exit(2);
    }
    const size_t blocks = (j->n + FILL_BLOCK - 1) / FILL_BLOCK;
    for (size_t b = (size_t)j->t; b < blocks; b += (size_t)j->threads) {
        uint64_t s = splitmix64(j->stream * 0x100000001b3ull ^ splitmix64(b));
        if (s == 0) s = 1; /* xorshift's one fixed point */
        const size_t i0 = b * FILL_BLOCK, i1 = i0 + FILL_BLOCK < j->n ? i0 + FILL_BLOCK : j->n;
        for (size_t i = i0; i < i1; i++)
            j->v[i] = j->mean + j->scale * sqrt(-2.0 * log(uniform(&s))) *
                                    cos(6.283185307179586 * uniform(&s));
        bench_from_double(j->dt, j->v + i0, tmp, i1 - i0);
        bench_to_double(j->dt, tmp, j->v + i0, i1 - i0);
    }
    free(tmp);
    return NULL;
}

double *bench_random_fill_threads(size_t n, double mean, double scale, lnl_dtype dt,
                                  uint64_t stream, int threads) {
    double *v = malloc(sizeof(double) * (n ? n : 1));
    if (!v) {
        fprintf(stderr, "lnl-bench: out of host memory\n");
        exit(2);
    }
    const size_t blocks = (n + FILL_BLOCK - 1) / FILL_BLOCK;
    if (threads < 1) threads = 1;
    if (threads > FILL_MAX_THREADS) threads = FILL_MAX_THREADS;
    if ((size_t)threads > blocks) threads = blocks ? (int)blocks : 1;
    fill_job jobs[FILL_MAX_THREADS];
    pthread_t tid[FILL_MAX_THREADS];
    int running[FILL_MAX_THREADS] = {0};
    for (int t = 0; t < threads; t++)
        jobs[t] = (fill_job){v, n, mean, scale, dt, stream, threads, t};
    for (int t = 1; t < threads; t++)
        running[t] = pthread_create(&tid[t], NULL, fill_blocks, &jobs[t]) == 0;
    /* thread 0's share here, and the share of any thread that could not start (the same
     * blocks, so the same values) */
    fill_blocks(&jobs[0]);
    for (int t = 1; t < threads; t++) {
        if (running[t])
            pthread_join(tid[t], NULL);
        else
            fill_blocks(&jobs[t]);
    }
    return v;
}

double *bench_random_fill(size_t n, double mean, double scale, lnl_dtype dt, uint64_t stream) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return bench_random_fill_threads(n, mean, scale, dt, stream,
                                     cores > FILL_MAX_THREADS ? FILL_MAX_THREADS : (int)cores);
}
