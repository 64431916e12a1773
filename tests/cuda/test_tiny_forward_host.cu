/* The tiny forward's body (src/cuda/tiny_forward.cuh) run on the host by one thread,
 * against the float64 reference of tests/c/testutil.c: y, mean and rstd. One thread
 * computes bitwise what the kernel's 256 do (every sum is one thread's, in order); what
 * only a GPU can show (the launch, shared memory, the barriers) is tests/gpu/run.sh's
 * table, whose tiny float32 rows take this kernel. */
#include <cmath>
#include <cstdio>
#include <vector>

#include "tiny_forward.cuh"
#include "tiny_host_util.h"

using namespace lnl;
using namespace tiny_host;

namespace {

/* One case: x of rows of mean `offset` and spread `spread`, random W, gamma, beta, bias (or
 * none of the three: affine false); mean/rstd asked for or not. */
template <typename T>
void run_case(const char *dname, int M, int K, int N, double offset, bool affine, bool stats,
              double bound, uint64_t seed, double spread = 2.0) {
    tu_rng r;
    tu_rng_seed(&r, seed);
    std::vector<T> x(M * K), w(N * K), g(K), b(K), bias(N);
    std::vector<double> xd, wd, gd, bd, biasd;
    fill(&r, x, xd, offset, spread);
    fill(&r, w, wd, 0.0, 1.0 / std::sqrt((double)K));
    fill(&r, g, gd, 1.0, 0.5);
    fill(&r, b, bd, 0.2, 0.5);
    fill(&r, bias, biasd, -0.3, 0.5);

    std::vector<T> y(M * N);
    std::vector<float> mean(M, 0.f), rstd(M, 0.f);
    const tiny_fwd_args<T> a{x.data(), affine ? g.data() : nullptr, affine ? b.data() : nullptr,
                             w.data(), affine ? bias.data() : nullptr, y.data(),
                             stats ? mean.data() : nullptr, stats ? rstd.data() : nullptr,
                             M, K, N, 1e-5f};
    std::vector<float> sm((size_t)tiny_forward_floats(M, K, N), NAN);
    tiny_forward_body(a, sm.data(), 0, 1, host_sync{});

    std::vector<double> ry(M * N), rmean(M), rrstd(M);
    tu_ref_forward(M, K, N, 1e-5, xd.data(), affine ? gd.data() : nullptr,
                   affine ? bd.data() : nullptr, wd.data(), affine ? biasd.data() : nullptr,
                   ry.data(), rmean.data(), rrstd.data(), nullptr);
    char what[160];
    snprintf(what, sizeof what, "%s M=%d K=%d N=%d offset=%g affine=%d", dname, M, K, N, offset,
             (int)affine);
    check(what, "y", y, ry, bound);
    if (stats) {
        /* the statistics are float32 whatever T: the float32 bound of the table */
        check(what, "mean", mean, rmean, 1e-5);
        check(what, "rstd", rstd, rrstd, 1e-5);
    } else {
        for (float v : mean) tu_expect(v == 0.f, "%s: mean written though not asked", what);
        for (float v : rstd) tu_expect(v == 0.f, "%s: rstd written though not asked", what);
    }
}

template <typename T> void run_dtype(const char *dname, double bound) {
    /* the body at every shape, also those the launch rule sends elsewhere (64,32,48) */
    const int shapes[][3] = {{16, 8, 16}, {1, 1, 1}, {3, 5, 7}, {33, 24, 10}, {64, 32, 48},
                             {2, 96, 3}, {16, 32, 40}, {1, 3, 257}};
    uint64_t seed = 1;
    for (auto &s : shapes) {
        run_case<T>(dname, s[0], s[1], s[2], 3.0, true, true, bound, seed++);
        run_case<T>(dname, s[0], s[1], s[2], 0.0, false, true, bound, seed++);
        run_case<T>(dname, s[0], s[1], s[2], 3.0, true, false, bound, seed++);
    }
}

} // namespace

int main() {
    /* the rule's edges */
    tu_expect(tiny_forward_fits(16, 8, 16), "16,8,16 must take the tiny forward");
    tu_expect(!tiny_forward_fits(64, 32, 48), "64,32,48 is past 2^15 multiply-adds");
    tu_expect(!tiny_forward_fits(0, 8, 16), "an empty batch is not the tiny kernel's");
    tu_expect(!tiny_forward_fits(1, 4096, 4096), "1,4096,4096's W overflows 48 KB");
    tu_expect(tiny_forward_w_stride(8) == 9 && tiny_forward_w_stride(7) == 7,
              "W's stride in shared memory must be odd and at least K");
    check_limits(tiny_forward_fits, tiny_forward_floats);
    /* the bounds of tests/c/test_table.c */
    run_dtype<float>("f32", 1e-5);
    run_dtype<__nv_bfloat16>("bf16", 1e-2);
    run_dtype<__half>("f16", 2e-3);
    /* rows of mean 1e3, held to the f32 floor (the table allows 2e-3 there) */
    run_case<float>("f32", 16, 8, 16, 1e3, true, true, 1e-5, 101);
    run_case<float>("f32", 16, 96, 20, 1e3, true, true, 1e-5, 102);
    run_case<float>("f32", 7, 300, 15, -1e3, true, true, 1e-5, 103);
    /* rows of spread 1e-3, whose variance (1e-6) eps (1e-5) outweighs */
    run_case<float>("f32", 16, 8, 16, 1.0, true, true, 1e-5, 104, 1e-3);
    return tu_finish();
}
