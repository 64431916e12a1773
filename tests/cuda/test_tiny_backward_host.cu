/* The tiny backward's body (src/cuda/tiny_backward.cuh) run on the host by one thread,
 * against the float64 reference of tests/c/testutil.c. The body's phases are strided
 * loops with every reduction done whole by one thread, so one thread computes bitwise
 * what the kernel's 256 do; this proves its arithmetic where no GPU is (CI). What only a
 * GPU can show (the launch, shared memory, the barriers) is tests/gpu/run.sh's table. */
#include <cmath>
#include <cstdio>
#include <vector>

#include "tiny_backward.cuh"
#include "tiny_host_util.h"

using namespace lnl;
using namespace tiny_host;

namespace {

/* One case: inputs of mean `offset` (rows of 3 + 2 randn by default), random gamma,
 * beta, W and dy; `mask` picks the outputs (dx, dgamma, dbeta, dW, db) and whether
 * gamma/beta are given. */
template <typename T>
void run_case(const char *dname, int M, int K, int N, double offset, unsigned mask, bool affine,
              double bound, uint64_t seed) {
    tu_rng r;
    tu_rng_seed(&r, seed);
    std::vector<T> x(M * K), dy(M * N), w(N * K), g(K), b(K);
    std::vector<double> xd(M * K), dyd(M * N), wd(N * K), gd(K), bd(K);
    fill(&r, x, xd, offset, 2.0);
    fill(&r, dy, dyd, 0.1, 1.0);
    fill(&r, w, wd, 0.0, 1.0 / std::sqrt((double)K));
    fill(&r, g, gd, 1.0, 0.5);
    fill(&r, b, bd, 0.2, 0.5);

    std::vector<T> dx(M * K), dg(K), dbeta(K), dw(N * K), db(N);
    tiny_bwd_args<T> a{x.data(), dy.data(), w.data(), affine ? g.data() : nullptr,
                       affine ? b.data() : nullptr,
                       (mask & 1) ? dx.data() : nullptr, (mask & 2) ? dg.data() : nullptr,
                       (mask & 4) ? dbeta.data() : nullptr, (mask & 8) ? dw.data() : nullptr,
                       (mask & 16) ? db.data() : nullptr, M, K, N, 1e-5f};
    std::vector<float> sm((size_t)tiny_backward_floats(M, K, N), NAN);
    tiny_backward_body(a, sm.data(), 0, 1, host_sync{});

    std::vector<double> rdx(M * K), rdg(K), rdb(K), rdw(N * K), rdbias(N);
    tu_ref_backward(M, K, N, 1e-5, dyd.data(), xd.data(), affine ? gd.data() : nullptr,
                    affine ? bd.data() : nullptr, wd.data(), rdx.data(), rdg.data(), rdb.data(),
                    rdw.data(), rdbias.data());
    char what[160];
    snprintf(what, sizeof what, "%s M=%d K=%d N=%d offset=%g mask=%u affine=%d", dname, M, K, N,
             offset, mask, (int)affine);
    if (mask & 1) check(what, "dx", dx, rdx, bound);
    if (mask & 2) check(what, "dln_weight", dg, rdg, bound);
    if (mask & 4) check(what, "dln_bias", dbeta, rdb, bound);
    if (mask & 8) check(what, "dW", dw, rdw, bound);
    if (mask & 16) check(what, "db", db, rdbias, bound);
    /* outputs not asked for stay untouched (value-initialized zeros) */
    if (!(mask & 1)) for (T v : dx) tu_expect(from_t(v) == 0.0, "%s: dx written though not asked", dname);
    if (!(mask & 8)) for (T v : dw) tu_expect(from_t(v) == 0.0, "%s: dW written though not asked", dname);
}

template <typename T> void run_dtype(const char *dname, double bound) {
    const int shapes[][3] = {{16, 8, 16}, {1, 1, 1}, {3, 5, 7}, {33, 24, 10}, {64, 32, 48}, {2, 96, 3}};
    uint64_t seed = 1;
    /* the body at every shape, also those the launch rule sends elsewhere (64,32,48) */
    for (auto &s : shapes) {
        run_case<T>(dname, s[0], s[1], s[2], 3.0, 31u, true, bound, seed++);
        run_case<T>(dname, s[0], s[1], s[2], 0.0, 31u, false, bound, seed++);
        run_case<T>(dname, s[0], s[1], s[2], 3.0, 1u | 8u, true, bound, seed++);
        run_case<T>(dname, s[0], s[1], s[2], 3.0, 2u | 4u | 16u, true, bound, seed++);
    }
}

} // namespace

int main() {
    /* the rule's edges: what fits, and what would overflow 48 KB of shared memory */
    tu_expect(tiny_backward_fits(16, 8, 16), "16,8,16 must take the tiny backward");
    tu_expect(!tiny_backward_fits(64, 64, 64), "64,64,64 exceeds 48 KB and must not");
    tu_expect(!tiny_backward_fits(0, 8, 16), "an empty batch is not the tiny kernel's");
    tu_expect(!tiny_backward_fits(4096, 768, 768), "4096,768,768 is not tiny");
    tu_expect(!tiny_backward_fits(64, 32, 48), "64,32,48 was slower in one launch (bf16, H200)");
    check_limits(tiny_backward_fits, tiny_backward_floats);
    /* the bounds of tests/c/test_table.c */
    run_dtype<float>("f32", 1e-5);
    run_dtype<__nv_bfloat16>("bf16", 1e-2);
    run_dtype<__half>("f16", 2e-3);
    /* rows of mean 1e3 (the table's offset1e3 cases, its f32 bound 2e-3 there) */
    run_case<float>("f32", 16, 8, 16, 1e3, 31u, true, 2e-3, 101);
    run_case<float>("f32", 33, 24, 10, 1e3, 31u, true, 2e-3, 102);
    /* ... and held to the general path's f32 floor, 1e-5: the H200 caught dx at 1.06e-5
     * (test_numerics' test_large_row_offset, 16,96,24) when the mean was summed unshifted */
    run_case<float>("f32", 16, 96, 24, 1e3, 31u, true, 1e-5, 103);
    run_case<float>("f32", 16, 8, 16, 1e3, 31u, true, 1e-5, 104);
    return tu_finish();
}
