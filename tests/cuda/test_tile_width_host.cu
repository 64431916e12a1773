/* The Hopper forward's tile width (tile_width.cuh) on the host: the shapes session 29
 * measured take the width that won there, a narrower width never costs more rounds x width
 * than 256, the statistics' forms and the ping-pong form keep sm90_column_bn, the override
 * holds, and {c, d}'s padding (fold_cd_columns) covers the last tile of every width the rule
 * can take, so the epilogue's unchecked reads of {c, d} stay inside the workspace's region. */
#include <cstdio>

#include "tile_width.cuh"
extern "C" {
#include "testutil.h"
}

using namespace lnl;

namespace {

constexpr int H200_SMS = 132;

void expect_bn(int64_t M, int64_t N, int want) {
    const int got = sm90_pick_bn(M, N, H200_SMS, false, 0);
    tu_expect(got == want, "M=%lld N=%lld on %d SMs: width %d, want %d", (long long)M,
              (long long)N, H200_SMS, got, want);
}

} // namespace

int main() {
    /* session 29's call 1 (bf16 FUSED forward, each width forced in turn): where the rule
     * narrows, the narrow width won; where it keeps 256, 192 and 128 were the same or
     * slower. Then one column of tiles: column_bn. {M, N, width} */
    const int64_t cases[][3] = {{4096, 768, 192},   {4096, 2304, 192},  {8192, 2304, 192},
                                {2048, 3072, 192},  {512, 4096, 128},   {4096, 3072, 256},
                                {8192, 3072, 256},  {8192, 1024, 256},  {8192, 4096, 256},
                                {8192, 12288, 256}, {12800, 100, 128},  {32768, 256, 256},
                                {16, 200, 256}};
    for (const auto &c : cases) expect_bn(c[0], c[1], (int)c[2]);

    int narrowed = 0;
    for (int64_t M = 1; M <= 20000; M = M < 64 ? M + 7 : M * 5 / 4 + 13)
        for (int64_t N = 1; N <= 20000; N = N < 64 ? N + 5 : N * 9 / 8 + 11)
            for (int sms : {1, 78, 114, 132}) {
                const int bn = sm90_pick_bn(M, N, sms, false, 0);
                tu_expect(bn == 128 || bn == 192 || bn == 256, "M=%lld N=%lld: width %d",
                          (long long)M, (long long)N, bn);
                /* what the rule takes never costs more than 256-wide tiles */
                if (N > 256) {
                    tu_expect(sm90_tile_cost(M, N, bn, sms) <= sm90_tile_cost(M, N, 256, sms),
                              "M=%lld N=%lld sms=%d: width %d costs more than 256", (long long)M,
                              (long long)N, sms, bn);
                    narrowed += bn != 256;
                } else {
                    tu_expect(bn == sm90_column_bn(N), "M=%lld N=%lld: width %d, column_bn %d",
                              (long long)M, (long long)N, bn, sm90_column_bn(N));
                }
                /* the statistics' forms and the ping-pong form keep column_bn */
                tu_expect(sm90_pick_bn(M, N, sms, true, 0) == sm90_column_bn(N),
                          "M=%lld N=%lld: kept width %d", (long long)M, (long long)N,
                          sm90_pick_bn(M, N, sms, true, 0));
                tu_expect(sm90_pick_bn(M, N, sms, true, 192) == sm90_column_bn(N),
                          "M=%lld N=%lld: the override narrowed a kept width", (long long)M,
                          (long long)N);
                /* the override, where a narrower width could be taken */
                for (int forced : {128, 192, 256}) {
                    const int want = N > 256 ? forced : sm90_column_bn(N);
                    tu_expect(sm90_pick_bn(M, N, sms, false, forced) == want,
                              "M=%lld N=%lld: forced %d gave %d", (long long)M, (long long)N,
                              forced, sm90_pick_bn(M, N, sms, false, forced));
                }
            }
    /* {c, d} is padded to whole tiles of every width the kernel may take */
    for (int64_t N = 1; N <= 20000; N++)
        for (int w : {128, 192, 256})
            tu_expect(fold_cd_columns(N) >= (N + w - 1) / w * w,
                      "N=%lld: {c, d} padded to %lld columns, a %d-wide tile reads to %lld",
                      (long long)N, (long long)fold_cd_columns(N), w, (long long)((N + w - 1) / w * w));
    tu_expect(narrowed > 0, "the sweep never took a narrower width");
    return tu_finish();
}
