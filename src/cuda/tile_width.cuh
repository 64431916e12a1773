/* The Hopper forward's tile width along N (fused_forward_sm90.cu), as host functions of the
 * problem alone, and the padding of {c, d} to whole tiles, so that
 * tests/cuda/test_tile_width_host.cu checks the rule and the padding without a GPU. */
#ifndef LNL_TILE_WIDTH_CUH
#define LNL_TILE_WIDTH_CUH

#include <cstdint>

namespace lnl {

/* Rows of x a tile holds (the kernel's BM). */
constexpr int SM90_TILE_ROWS = 128;

/* The width the statistics' forms and their workspace count columns of: 256, which halves
 * the transform's work per output column; it beat 128 on every shape measured, N = 256
 * included (H200: 8192,4096,4096 0.65 vs 0.92 ms; 32768,4096,256 0.26 vs 0.33 ms, both
 * with the transform form). 128 only when N fits in it. N = 256 as two 128-wide tiles
 * sharing the statistics (split statistics, session 16) lost too: bf16 FUSED forward
 * 0.187-0.188 vs 0.146-0.147 ms at 32768,4096,256 and 0.151-0.152 vs 0.099-0.102 at
 * 65536,1024,256 (docs/results/cuda/2026-12-02-session16). */
inline int sm90_column_bn(int64_t N) { return N <= 128 ? 128 : 256; }

/* A call's time at width w, up to a constant: rounds of the persistent grid (one tile on
 * each of `sms` SMs a round) times the width, which a tile's time goes with (its MMAs, its
 * operand bytes). */
inline double sm90_tile_cost(int64_t M, int64_t N, int w, int sms) {
    const int64_t tm = (M + SM90_TILE_ROWS - 1) / SM90_TILE_ROWS, s = sms > 0 ? sms : 1;
    return (double)((tm * ((N + w - 1) / w) + s - 1) / s * w);
}

/* Narrower tiles where 256-wide ones leave the grid's last round mostly empty: at
 * 4096,768,768 on 132 SMs, 96 tiles of 256 columns take one round of 256, 128 tiles of
 * 192 one round of 192; at 512,4096,4096, 64 tiles of 256 one round of 256, 128 of 128 one
 * round of 128. A narrower width is taken where its cost is at most SM90_NARROW_GAIN[] of
 * 256's, since narrower tiles move more operand bytes a MAC (192: 11%, 128: 33%), and only
 * where the caller does not need column_bn (keep_column_bn: the statistics computed in the
 * kernel, whose workspace counts columns of it, or the ping-pong form, 256 wide). H200,
 * bf16 FUSED forward, 256 / narrow (session 29): 0.0298-0.0328 / 0.0291-0.0293 ms at
 * 4096,768,768, 0.0742-0.0757 / 0.0597-0.0598 at 512,4096,4096 (128); where the rule keeps
 * 256 the narrow widths were the same or slower. forced = 128, 192 or 256 takes that width
 * wherever a narrower one could be taken (LNL_CUDA_SM90_BN; tests and timing), else 0. */
constexpr int SM90_NARROW_BN[2] = {192, 128};
constexpr double SM90_NARROW_GAIN[2] = {0.9, 0.8};
inline int sm90_pick_bn(int64_t M, int64_t N, int sms, bool keep_column_bn, int64_t forced) {
    const int bn = sm90_column_bn(N);
    if (bn != 256 || N <= 256 || keep_column_bn) return bn;
    if (forced == 128 || forced == 192 || forced == 256) return (int)forced;
    const double wide = sm90_tile_cost(M, N, 256, sms);
    int best = 256;
    double best_cost = wide;
    for (int i = 0; i < 2; i++) {
        const double c = sm90_tile_cost(M, N, SM90_NARROW_BN[i], sms);
        if (c <= SM90_NARROW_GAIN[i] * wide && c < best_cost) best = SM90_NARROW_BN[i], best_cost = c;
    }
    return best;
}

/* {c, d}'s columns (fold_weight.cu, the workspace): N padded with zero pairs to a whole
 * tile, so that the GEMM kernel's epilogue reads a tile's pairs with no bounds checks (they
 * cost ~160 of its ~1330 instructions a warp and tile). 768 is a whole number of tiles of
 * each width the kernel takes (128, 192 and 256 columns). */
constexpr int64_t FOLD_CD_PAD = 768;
__host__ __device__ constexpr int64_t fold_cd_columns(int64_t N) {
    return (N + FOLD_CD_PAD - 1) / FOLD_CD_PAD * FOLD_CD_PAD;
}

} // namespace lnl

#endif
