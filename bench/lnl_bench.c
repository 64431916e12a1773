/*
 * lnl-bench: times every strategy of lnlinear against the GEMM alone in the same
 * process, and checks each against the float64 REFERENCE strategy.
 *
 *   lnl-bench [--shape M,K,N]... [--dtype f32|f64|bf16|f16]... [--device cpu|cuda]...
 *             [--strategy auto|fused|unfused|reference]... [--threads T] [--json FILE]
 *
 * With no arguments: the embedded default problems on the CPU in f32, and on CUDA
 * (bf16, f16 and f32, the GPU problem list) when built with CUDA and a GPU is present.
 * f16 is in the list since session 28: without it nothing timed FUSED's f16 backward,
 * which ran 1.9-3.8x slower than bf16's until then.
 * Timings are medians; the accuracy check runs on the first rows of each problem
 * (enough rows for every tensor to be checked, few enough that the float64
 * reference stays fast): see check_rows(). The timed run's own y and dx are checked
 * too, on the same first rows (y_timed, dx_timed in the JSON).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

typedef struct shape { int64_t M, K, N; } shape;

static const shape cpu_defaults[] = {
    {16, 8, 16}, {2048, 768, 768}, {2048, 768, 3072}, {1024, 4096, 4096}, {4096, 4096, 256}};
static const shape cuda_defaults[] = {{16, 8, 16},        {4096, 768, 768},   {8192, 768, 3072},
                                      {8192, 1024, 1024}, {8192, 4096, 4096}, {8192, 4096, 12288},
                                      {16384, 8192, 1024}, {32768, 4096, 256}};

#define MAX_LIST 32
typedef struct options {
    shape shapes[MAX_LIST];
    int nshapes;
    lnl_dtype dtypes[4];
    int ndtypes;
    lnl_device devices[2];
    int ndevices;
    lnl_strategy strategies[4];
    int nstrategies;
    int threads;
    const char *json;
} options;

static const char *dtype_name(lnl_dtype d) {
    static const char *n[] = {"f32", "f64", "bf16", "f16"};
    return (unsigned)d < 4 ? n[d] : "?";
}
static const char *strategy_name(lnl_strategy s) {
    static const char *n[] = {"auto", "fused", "unfused", "reference"};
    return (unsigned)s < 4 ? n[s] : "?";
}
/* What AUTO ran: one name, or "forward/backward" where the two differ. */
static const char *resolved_name(lnl_strategy fwd, lnl_strategy bwd) {
    if (fwd == bwd) return strategy_name(fwd);
    if (fwd == LNL_STRATEGY_FUSED && bwd == LNL_STRATEGY_UNFUSED) return "fused/unfused";
    if (fwd == LNL_STRATEGY_UNFUSED && bwd == LNL_STRATEGY_FUSED) return "unfused/fused";
    return "?";
}
static double bound_of(lnl_dtype d) {
    return d == LNL_DTYPE_F64 ? 1e-11 : d == LNL_DTYPE_F32 ? 1e-5 : d == LNL_DTYPE_F16 ? 2e-3 : 1e-2;
}

static int lookup(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    fprintf(stderr, "lnl-bench: unknown value '%s'\n", s);
    exit(2);
}

static void parse(int argc, char **argv, options *o) {
    static const char *const dts[] = {"f32", "f64", "bf16", "f16"};
    static const char *const devs[] = {"cpu", "cuda"};
    static const char *const strs[] = {"auto", "fused", "unfused", "reference"};
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(a, "--help") != 0) {
            fprintf(stderr, "lnl-bench: %s needs a value\n", a);
            exit(2);
        }
        if (strcmp(a, "--shape") == 0 && o->nshapes < MAX_LIST) {
            shape *s = &o->shapes[o->nshapes++];
            if (sscanf(v, "%ld,%ld,%ld", (long *)&s->M, (long *)&s->K, (long *)&s->N) != 3) {
                fprintf(stderr, "lnl-bench: --shape wants M,K,N\n");
                exit(2);
            }
        } else if (strcmp(a, "--dtype") == 0 && o->ndtypes < 4) {
            o->dtypes[o->ndtypes++] = (lnl_dtype)lookup(v, dts, 4);
        } else if (strcmp(a, "--device") == 0 && o->ndevices < 2) {
            o->devices[o->ndevices++] = (lnl_device)lookup(v, devs, 2);
        } else if (strcmp(a, "--strategy") == 0 && o->nstrategies < 4) {
            o->strategies[o->nstrategies++] = (lnl_strategy)lookup(v, strs, 4);
        } else if (strcmp(a, "--threads") == 0) {
            o->threads = atoi(v);
        } else if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else {
            printf("usage: lnl-bench [--shape M,K,N]... [--dtype f32|f64|bf16|f16]...\n"
                   "                 [--device cpu|cuda]... [--strategy auto|fused|unfused|reference]...\n"
                   "                 [--threads T] [--json FILE]\n");
            exit(strcmp(a, "--help") == 0 ? 0 : 2);
        }
        i++;
    }
}

/* ---- random data: x with non-zero row means, random parameters, never ones/zeros ---- */
typedef struct host_data {
    size_t M, K, N;
    double *x, *g, *b, *w, *bias, *dy; /* dtype-rounded values, as double */
} host_data;

/* Each problem's six inputs draw from streams of their own (random_fill.c, on every
 * core); the counter runs across problems, so no two tensors of a run share values. */
static uint64_t fill_streams = 0;
static double *fill(size_t n, double mean, double scale, lnl_dtype dt) {
    return bench_random_fill(n, mean, scale, dt, ++fill_streams);
}

static host_data make_data(lnl_dtype dt, shape s) {
    host_data h = {(size_t)s.M, (size_t)s.K, (size_t)s.N, 0, 0, 0, 0, 0, 0};
    h.x = fill(h.M * h.K, 3.0, 2.0, dt);
    h.g = fill(h.K, 1.0, 0.3, dt);
    h.b = fill(h.K, 0.0, 0.5, dt);
    h.w = fill(h.N * h.K, 0.0, 1.0 / sqrt((double)h.K), dt);
    h.bias = fill(h.N, 0.0, 0.5, dt);
    h.dy = fill(h.M * h.N, 0.0, 1.0, dt);
    return h;
}
static void free_data(host_data *h) {
    free(h->x), free(h->g), free(h->b), free(h->w), free(h->bias), free(h->dy);
}

/* ---- buffers of one problem on one device ---- */
enum { X, G, B, W, BIAS, DY, NIN, Y = NIN, MEAN, RSTD, LNOUT, DX, DG, DB, DW, DBIAS, WSF, WSB, NBUF };
typedef struct run {
    lnl_problem p;
    int keep_ln_out;
    void *buf[NBUF];
    size_t bytes[NBUF];
} run;

static void run_setup(run *r, const lnl_problem *p, const host_data *h, size_t rows) {
    memset(r, 0, sizeof *r);
    r->p = *p;
    r->p.rows = (int64_t)rows;
    size_t es = lnl_dtype_size(p->dtype), acc = p->dtype == LNL_DTYPE_F64 ? 8 : 4;
    size_t M = rows, K = h->K, N = h->N;
    const size_t counts[NBUF] = {M * K, K, K, N * K, N, M * N, M * N, M, M, M * K,
                                 M * K, K, K, N * K, N, 0, 0};
    const double *src[NIN] = {h->x, h->g, h->b, h->w, h->bias, h->dy};
    for (int i = 0; i < NBUF; i++) r->bytes[i] = counts[i] * ((i == MEAN || i == RSTD) ? acc : es);
    r->bytes[WSF] = lnl_forward_workspace_size(&r->p);
    r->bytes[WSB] = lnl_backward_workspace_size(&r->p);
    for (int i = 0; i < NBUF; i++) r->buf[i] = bench_alloc(p->device, r->bytes[i]);
    for (int i = 0; i < NIN; i++) {
        void *tmp = malloc(r->bytes[i] ? r->bytes[i] : 1);
        bench_from_double(p->dtype, src[i], tmp, counts[i]);
        bench_upload(p->device, r->buf[i], tmp, r->bytes[i]);
        free(tmp);
    }
}
static void run_free(run *r) {
    for (int i = 0; i < NBUF; i++) bench_free(r->p.device, r->buf[i]);
}

static void forward(void *ctx) {
    run *r = ctx;
    void **b = r->buf;
    BENCH_CHECK(lnl_forward(&r->p, b[X], b[G], b[B], b[W], b[BIAS], b[Y], b[MEAN], b[RSTD],
                            r->keep_ln_out ? b[LNOUT] : NULL, b[WSF], r->bytes[WSF]));
}
/* The backward is given the forward's y (its last run's, for these inputs), as the
 * PyTorch op gives it where lnl_backward_wants_y: FUSED's CUDA bf16 backward then forms dx
 * in the dy . W GEMM's epilogue; everywhere else y is ignored. */
static void backward(void *ctx) {
    run *r = ctx;
    void **b = r->buf;
    const lnl_backward_args a = {b[DY], b[X], b[G], b[B], b[W], b[MEAN], b[RSTD],
                                 r->keep_ln_out ? b[LNOUT] : NULL, b[DX], b[DG], b[DB], b[DW],
                                 b[DBIAS], b[WSB], r->bytes[WSB], b[Y], b[BIAS]};
    BENCH_CHECK(lnl_backward_ex(&r->p, &a));
}

/* The outputs checked against the reference, in the order of this table. */
static const int checked[] = {Y, DX, DG, DB, DW, DBIAS};
static const char *const checked_name[] = {"y", "dx", "dln_weight", "dln_bias", "dlinear_weight",
                                           "dlinear_bias"};
enum { NCHECK = 6 };
/* The row-local outputs checked again on the timed run itself (its first rows), as
 * positions in checked[]: the check run above has only check_rows() rows, and at large M
 * the library can take other kernels for it than for the timed problem (fewer tiles
 * than SMs, for one). dx's rows depend on their own rows of x and dy only; the weight
 * gradients sum over every row, so they are checked on the check run alone. */
static const int timed_checked[] = {0, 1};
static const char *const timed_checked_name[] = {"y_timed", "dx_timed"};
enum { NTIMED = 2 };

/* The first n elements of buffer i, in double. */
static double *download_n(const run *r, int i, size_t n) {
    const size_t bytes = n * lnl_dtype_size(r->p.dtype);
    void *tmp = malloc(bytes ? bytes : 1);
    double *d = malloc(sizeof(double) * (n ? n : 1));
    bench_download(r->p.device, tmp, r->buf[i], bytes);
    bench_to_double(r->p.dtype, tmp, d, n);
    free(tmp);
    return d;
}
static double *download(const run *r, int i) {
    return download_n(r, i, r->bytes[i] / lnl_dtype_size(r->p.dtype));
}

static double rel_err(const double *a, const double *ref, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = a[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (isnan(num)) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Rows used for the accuracy check: all of small problems, else enough that the
 * float64 reference (3 M*N*K multiply-adds in scalar double) stays under a second. */
static size_t check_rows(shape s) {
    double per_row = 3.0 * (double)s.K * (double)s.N;
    size_t rows = (size_t)(4e8 / per_row);
    rows = rows < 8 ? 8 : rows > 256 ? 256 : rows;
    return rows < (size_t)s.M ? rows : (size_t)s.M;
}

/* Runs forward + backward of r's strategy on the check rows; per-tensor errors vs ref. */
static void check_against(run *r, double *const ref[NCHECK], double err[NCHECK]) {
    forward(r);
    backward(r);
    for (int c = 0; c < NCHECK; c++) {
        double *got = download(r, checked[c]);
        err[c] = rel_err(got, ref[c], r->bytes[checked[c]] / lnl_dtype_size(r->p.dtype));
        free(got);
    }
}

/* The timed run's y and dx (from its last forward and backward), first `rows` rows, vs
 * the reference's, which has exactly those rows. LNL_BENCH_PERTURB_TIMED=y (or dx) adds 1
 * to the last checked element of that tensor after the download: the ctests
 * bench_timed_check_y and _dx show that each check can fail. */
static void check_timed(const run *r, size_t rows, double *const ref[NCHECK],
                        double err[NTIMED]) {
    const char *perturb = getenv("LNL_BENCH_PERTURB_TIMED");
    for (int c = 0; c < NTIMED; c++) {
        const int i = checked[timed_checked[c]];
        const size_t n = rows * (size_t)(i == Y ? r->p.out_features : r->p.in_features);
        double *got = download_n(r, i, n);
        if (perturb && n && strncmp(perturb, timed_checked_name[c], strlen(perturb)) == 0 &&
            timed_checked_name[c][strlen(perturb)] == '_')
            got[n - 1] += 1.0;
        err[c] = rel_err(got, ref[timed_checked[c]], n);
        free(got);
    }
}

typedef struct result {
    lnl_device dev;
    lnl_dtype dt;
    shape s;
    const char *strategy; /* as asked */
    const char *resolved;
    double fwd_ms, bwd_ms, gemm_ms, gemm3_ms, floor_ms, gemm_constant_ms, err[NCHECK],
        err_timed[NTIMED], max_err, bound;
    size_t saved_bytes;
    int ok;
} result;

static void print_header(void) {
    printf("%-4s %-4s %21s  %-17s %9s %9s %8s %8s %7s %9s %9s %9s %9s\n", "dev", "type",
           "M,K,N", "strategy", "fwd ms", "bwd ms", "fwd GF/s", "f+b GF/s", "fwd/GEMM",
           "f+b/3GEMM", "f+b/floor", "max err", "kept MB");
}

static void print_result(const result *r) {
    char shp[64], strat[40], a[16] = "-", b[16] = "-", c[16] = "-";
    snprintf(shp, sizeof shp, "%lld,%lld,%lld", (long long)r->s.M, (long long)r->s.K,
             (long long)r->s.N);
    snprintf(strat, sizeof strat, "%s%s%s", r->strategy, strcmp(r->strategy, r->resolved) ? "->" : "",
             strcmp(r->strategy, r->resolved) ? r->resolved : "");
    double flops = 2.0 * (double)r->s.M * (double)r->s.N * (double)r->s.K;
    if (r->gemm_ms > 0) snprintf(a, sizeof a, "%.3f", r->fwd_ms / r->gemm_ms);
    if (r->gemm3_ms > 0) snprintf(b, sizeof b, "%.3f", (r->fwd_ms + r->bwd_ms) / r->gemm3_ms);
    if (r->floor_ms > 0) snprintf(c, sizeof c, "%.3f", (r->fwd_ms + r->bwd_ms) / r->floor_ms);
    printf("%-4s %-4s %21s  %-17s %9.4f %9.4f %8.1f %8.1f %7s %9s %9s %9.2e %9.3f %s\n",
           r->dev == LNL_DEVICE_CPU ? "cpu" : "cuda", dtype_name(r->dt), shp, strat, r->fwd_ms,
           r->bwd_ms, flops / r->fwd_ms * 1e-6, 3 * flops / (r->fwd_ms + r->bwd_ms) * 1e-6, a, b, c,
           r->max_err, (double)r->saved_bytes / 1e6, r->ok ? "ok" : "FAIL");
}

static void print_json(FILE *f, const result *r, int first) {
    fprintf(f, "%s  {\"device\": \"%s\", \"dtype\": \"%s\", \"M\": %lld, \"K\": %lld, \"N\": %lld, "
               "\"strategy\": \"%s\", \"resolved\": \"%s\", \"fwd_ms\": %.6f, \"bwd_ms\": %.6f, "
               "\"gemm_ms\": %.6f, \"three_gemm_ms\": %.6f, \"floor_ms\": %.6f, "
               "\"gemm_constant_data_ms\": %.6f, \"saved_bytes\": %zu, "
               "\"error_bound\": %g, \"ok\": %s, \"errors\": {",
            first ? "" : ",\n", r->dev == LNL_DEVICE_CPU ? "cpu" : "cuda", dtype_name(r->dt),
            (long long)r->s.M, (long long)r->s.K, (long long)r->s.N, r->strategy, r->resolved,
            r->fwd_ms, r->bwd_ms, r->gemm_ms, r->gemm3_ms, r->floor_ms, r->gemm_constant_ms,
            r->saved_bytes, r->bound,
            r->ok ? "true" : "false");
    for (int c = 0; c < NCHECK; c++)
        fprintf(f, "%s\"%s\": %.3e", c ? ", " : "", checked_name[c], r->err[c]);
    for (int c = 0; c < NTIMED; c++)
        fprintf(f, ", \"%s\": %.3e", timed_checked_name[c], r->err_timed[c]);
    fprintf(f, "}}");
}

/* The memory part of #7's forward+backward floor on CUDA: the LayerNorm backward reads
 * dy.W and x and writes dx (3 M x K elements), and the bias gradient reads dy (M x N);
 * timed at 4.2 TB/s, next to the three GEMMs. */
static double floor_bytes(lnl_dtype dt, shape s) {
    return (double)lnl_dtype_size(dt) * (3.0 * (double)s.M * (double)s.K + (double)s.M * (double)s.N);
}

/* The library's default thread count, so the GEMM baseline uses as many cores. */
static int default_threads(void) {
    const char *env = getenv("LNL_NUM_THREADS");
    if (env && atoi(env) > 0) return atoi(env);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    options o;
    parse(argc, argv, &o);
    bench_cpu_gemm_fix_core(argv);
    const int default_devices = o.ndevices == 0;
    if (default_devices) {
        o.devices[o.ndevices++] = LNL_DEVICE_CPU;
        if (bench_cuda_available()) o.devices[o.ndevices++] = LNL_DEVICE_CUDA;
    }
    if (o.nstrategies == 0) {
        const lnl_strategy all[] = {LNL_STRATEGY_FUSED, LNL_STRATEGY_UNFUSED, LNL_STRATEGY_AUTO,
                                    LNL_STRATEGY_REFERENCE};
        memcpy(o.strategies, all, sizeof all);
        o.nstrategies = 4;
    }
    result *res = NULL;
    int nres = 0, failed = 0;
    const double t_start = now_s();
    printf("lnl-bench: GEMM baseline on cpu: %s\n", bench_cpu_gemm_name());
    print_header();
    for (int d = 0; d < o.ndevices; d++) {
        const lnl_device dev = o.devices[d];
        if (dev == LNL_DEVICE_CUDA && !bench_cuda_available()) {
            printf("cuda: skipped (no CUDA backend in this build, or no GPU)\n");
            continue;
        }
        lnl_dtype dts[4];
        int ndt = o.ndtypes;
        memcpy(dts, o.dtypes, sizeof dts);
        if (ndt == 0) {
            if (dev == LNL_DEVICE_CUDA) {
                dts[ndt++] = LNL_DTYPE_BF16;
                dts[ndt++] = LNL_DTYPE_F16;
            }
            dts[ndt++] = LNL_DTYPE_F32;
        }
        const shape *shapes = o.shapes;
        int nshapes = o.nshapes;
        if (nshapes == 0) {
            shapes = dev == LNL_DEVICE_CPU ? cpu_defaults : cuda_defaults;
            nshapes = dev == LNL_DEVICE_CPU ? 5 : 8;
        }
        for (int t = 0; t < ndt; t++) {
            for (int si = 0; si < nshapes; si++) {
                const shape s = shapes[si];
                lnl_problem p = {.rows = s.M, .in_features = s.K, .out_features = s.N, .eps = 1e-5,
                                 .dtype = dts[t], .device = dev, .strategy = LNL_STRATEGY_AUTO,
                                 .threads = o.threads};
                if (lnl_check(&p) != LNL_STATUS_SUCCESS) {
                    printf("%s %s %lld,%lld,%lld: skipped: %s\n", dev ? "cuda" : "cpu",
                           dtype_name(dts[t]), (long long)s.M, (long long)s.K, (long long)s.N,
                           lnl_last_error());
                    continue;
                }
                if (now_s() - t_start > 2.0)
                    fprintf(stderr, "lnl-bench: %s %s %lld,%lld,%lld ...\n", dev ? "cuda" : "cpu",
                            dtype_name(dts[t]), (long long)s.M, (long long)s.K, (long long)s.N);
                host_data h = make_data(dts[t], s);
                /* The float64 oracle on the check rows, on the CPU. */
                const size_t crow = check_rows(s);
                lnl_problem pref = {.rows = s.M, .in_features = s.K, .out_features = s.N, .eps = 1e-5,
                                    .dtype = LNL_DTYPE_F64, .device = LNL_DEVICE_CPU,
                                    .strategy = LNL_STRATEGY_REFERENCE, .threads = 1};
                run ref;
                run_setup(&ref, &pref, &h, crow);
                forward(&ref);
                backward(&ref);
                double *refv[NCHECK];
                for (int c = 0; c < NCHECK; c++) refv[c] = download(&ref, checked[c]);
                run_free(&ref);
                /* The GEMM alone, and the three GEMMs of a forward + backward. */
                double g1, g3, floor_ms = -1;
                bench_cuda_gemms cg = {-1, -1, -1, -1};
                const int threads = o.threads > 0 ? o.threads : 0;
                if (dev == LNL_DEVICE_CPU) {
                    int th = threads ? threads : default_threads();
                    g1 = bench_cpu_gemm_ms(dts[t], s.M, s.N, s.K, th);
                    g3 = g1 < 0 ? -1
                                : g1 + bench_cpu_gemm_ms(dts[t], s.M, s.K, s.N, th) +
                                      bench_cpu_gemm_ms(dts[t], s.N, s.K, s.M, th);
                } else {
                    /* cuBLAS on this problem's own data: ln_out from UNFUSED's forward
                     * (the already-normalized input), W and dy as uploaded. */
                    lnl_problem pu = p;
                    pu.strategy = LNL_STRATEGY_UNFUSED;
                    run base;
                    run_setup(&base, &pu, &h, h.M);
                    base.keep_ln_out = 1;
                    forward(&base);
                    void **bb = base.buf;
                    g1 = g3 = -1;
                    if (bench_cuda_gemms_ms(dts[t], s.M, s.N, s.K, bb[LNOUT], bb[W], bb[DY], bb[Y],
                                            bb[DX], bb[DW], &cg) == 0) {
                        g1 = cg.fwd, g3 = cg.fwd + cg.dgrad + cg.wgrad;
                        floor_ms = g3 + floor_bytes(dts[t], s) / 4.2e9;
                    }
                    run_free(&base);
                }
                /* The baseline first: the rows below are ratios to it. */
                if (g1 > 0) {
                    char shp[64];
                    snprintf(shp, sizeof shp, "%lld,%lld,%lld", (long long)s.M, (long long)s.K,
                             (long long)s.N);
                    printf("%-4s %-4s %21s  %-17s %9.4f %9s %8.1f   (three GEMMs of fwd+bwd: %.4f ms",
                           dev ? "cuda" : "cpu", dtype_name(dts[t]), shp,
                           dev ? "cuBLAS GEMM" : "OpenBLAS GEMM", g1, "-",
                           2.0 * (double)s.M * (double)s.N * (double)s.K / g1 * 1e-6, g3);
                    if (floor_ms > 0)
                        printf(" = %.4f + dy.W %.4f + dy^T.ln_out %.4f; f+b floor %.4f ms; the "
                               "forward GEMM on constant data %.4f ms",
                               cg.fwd, cg.dgrad, cg.wgrad, floor_ms, cg.fwd_constant);
                    printf(")\n");
                }
                fflush(stdout);
                for (int k = 0; k < o.nstrategies; k++) {
                    lnl_problem ps = p;
                    ps.strategy = o.strategies[k];
                    if (lnl_check(&ps) != LNL_STATUS_SUCCESS) continue;
                    const int is_ref = ps.strategy == LNL_STRATEGY_REFERENCE;
                    /* The reference is the oracle, timed only where it takes seconds at most. */
                    if (is_ref && (double)s.M * (double)s.N * (double)s.K > 3e8) continue;
                    result r;
                    memset(&r, 0, sizeof r);
                    r.dev = dev, r.dt = dts[t], r.s = s, r.gemm_ms = g1, r.gemm3_ms = g3;
                    r.floor_ms = floor_ms, r.gemm_constant_ms = cg.fwd_constant;
                    r.strategy = strategy_name(ps.strategy);
                    const lnl_strategy rs = lnl_resolve_strategy(&ps);
                    const lnl_strategy rbs = lnl_resolve_backward_strategy(&ps);
                    r.resolved = resolved_name(rs, rbs);
                    run x;
                    /* UNFUSED keeps ln_out for its backward, as PyTorch eager does;
                     * FUSED and REFERENCE recompute it from x, mean and rstd. AUTO keeps
                     * it only where it resolves to UNFUSED both ways: a FUSED forward
                     * asked for ln_out would have to write it, as UNFUSED does. */
                    const int keep = rs == LNL_STRATEGY_UNFUSED && rbs == LNL_STRATEGY_UNFUSED;
                    run_setup(&x, &ps, &h, crow);
                    x.keep_ln_out = keep;
                    check_against(&x, refv, r.err);
                    run_free(&x);
                    r.bound = bound_of(dts[t]);
                    run_setup(&x, &ps, &h, h.M);
                    x.keep_ln_out = keep;
                    r.saved_bytes = lnl_saved_bytes(&ps, x.keep_ln_out);
                    const double budget = dev == LNL_DEVICE_CPU ? 1500 : 150; /* ms per median */
                    r.fwd_ms = bench_median_ms(dev, forward, &x, budget);
                    forward(&x); /* the backward times on this forward's saved tensors */
                    r.bwd_ms = bench_median_ms(dev, backward, &x, budget);
                    check_timed(&x, crow, refv, r.err_timed);
                    run_free(&x);
                    r.ok = 1;
                    for (int c = 0; c < NCHECK + NTIMED; c++) {
                        const double e = c < NCHECK ? r.err[c] : r.err_timed[c - NCHECK];
                        if (e > r.max_err || isnan(e)) r.max_err = e;
                        if (!(e <= r.bound)) r.ok = 0;
                    }
                    failed += !r.ok;
                    print_result(&r);
                    fflush(stdout);
                    res = realloc(res, sizeof(result) * (size_t)(nres + 1));
                    res[nres++] = r;
                }
                for (int c = 0; c < NCHECK; c++) free(refv[c]);
                free_data(&h);
            }
        }
    }
    if (o.json) {
        FILE *f = fopen(o.json, "w");
        if (!f) {
            fprintf(stderr, "lnl-bench: cannot write %s\n", o.json);
            return 2;
        }
        fprintf(f, "[\n");
        for (int i = 0; i < nres; i++) print_json(f, &res[i], i == 0);
        fprintf(f, "\n]\n");
        fclose(f);
    }
    printf("%d results, %d outside their error bound\n", nres, failed);
    free(res);
    return failed ? 1 : 0;
}
