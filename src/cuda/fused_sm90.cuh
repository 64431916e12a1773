/* The Hopper (sm_90a, wgmma + TMA) fused kernels' host launchers. */
#ifndef LNL_FUSED_SM90_CUH
#define LNL_FUSED_SM90_CUH

#include <cuda.h> /* CUtensorMap */

#include <atomic>

#include "cuda_common.cuh"
#include "tile_width.cuh" /* fold_cd_columns */

/* Timing-only switch: -DLNL_SM90_FOLD=0 builds a library whose Hopper forward always
 * takes the transform form (for same-run A/B measurements; never shipped that way). */
#ifndef LNL_SM90_FOLD
#define LNL_SM90_FOLD 1
#endif
/* Likewise -DLNL_SM90_STATS_INSIDE=0: the statistics always from the pre-pass. */
#ifndef LNL_SM90_STATS_INSIDE
#define LNL_SM90_STATS_INSIDE 1
#endif

namespace lnl {

/* y = LN(x) @ W^T + b for bf16/f16 on an sm_90 device (fused_forward_sm90.cu).
 * *launched says whether it ran. It declines (cudaSuccess, *launched = false) on other
 * GPUs and dtypes, when K % 8 != 0, and when x, W, gamma or beta is not 16-byte
 * aligned; the caller then runs the portable mma.sync kernel. */
/* Whether the Hopper forward serves a problem of this dtype and shape on device d,
 * given 16-byte aligned x, W, gamma and beta (AUTO's rule asks before pointers exist). */
bool fused_forward_sm90_serves(lnl_dtype dt, int64_t M, int64_t K, int64_t N,
                               const device_info &d);
/* The number of output tiles it splits an M x K x N problem into on device d (its
 * persistent grid runs min(tiles, SMs) CTAs). */
int64_t fused_forward_sm90_tiles(int64_t M, int64_t K, int64_t N, const device_info &d);

/* Whether launch_fused_forward_sm90 will run for these operands (served, aligned, and
 * the driver's tensor-map encoder found). */
bool fused_forward_sm90_runs(lnl_dtype dt, int64_t M, int64_t K, int64_t N, const void *x,
                             const void *W, const void *gamma, const void *beta,
                             const device_info &d);

/* The epilogue form's operands (fold_weight.cu), all in the workspace: the folded
 * weight W' (N x K), {c, d} per column (float32 pairs, padded with zeros to
 * fold_cd_columns(N) columns), the pre-pass's flags (one word a block of its grid: has
 * it seen a row too far off centre for this form?) and the flag the GEMM kernel sets for
 * the transform form. All nullptr: the transform form only. */
struct sm90_fold {
    const void *wfold;
    const float *cd;
    int *off_centre;
    const int *block_flags;
    int flag_blocks; /* words of block_flags written by the pre-pass (0: none) */
    /* the GEMM kernel computes mean/rstd itself (and writes them, and the flag); no
     * statistics pre-pass. Only where fused_forward_sm90_stats_inside(K, N). */
    bool stats_inside;
    float eps;
    /* with stats_inside and several column tiles (split statistics): each tile's share of
     * its rows' statistics (float4, M x fused_forward_sm90_split_cols) and one counter a
     * row of tiles (fused_forward_sm90_split_rows of them), zeroed before the call */
    void *split_part;
    int *split_count;
};
/* Whether the GEMM kernel can compute the rows' statistics itself: N fits one column of
 * tiles, where each tile's CTA reads whole rows of x, or (split statistics, K large
 * enough; see fused_forward_sm90.cu) at most SPLIT_STATS_MAX_COL_TILES, which then share
 * the work and merge their shares. */
bool fused_forward_sm90_stats_inside(int64_t K, int64_t N);
/* The split statistics' counters (rows of tiles) for an M x K x N problem; 0 when the
 * statistics inside need none (one column of tiles) or are not taken. */
int64_t fused_forward_sm90_split_rows(int64_t M, int64_t K, int64_t N);
/* ... and the column tiles that share a row's statistics (0 likewise): split_part holds
 * M x this many shares */
int64_t fused_forward_sm90_split_cols(int64_t K, int64_t N);
/* Session 25 (docs/results/cuda/2026-12-03-session25): up to 8 column tiles gained 5-6% at
 * 8192,4096,2048 against 4 with the same merge, and 4.9% against session 24's library
 * (back to back at the power cap; lnl-bench agrees); 16 were 1.4-2.2% slower at
 * 8192,4096,4096 at the cap (4-6% faster in lnl-bench's short runs): not taken. */
constexpr int SPLIT_STATS_MAX_COL_TILES = 8;
/* One launch (fold_weight.cu): the folded weight and {c, d} from W, gamma, beta and the
 * bias, and, for the first stats_rows rows of x, mean and rstd (stats_rows = 0: none,
 * for the in-kernel statistics, or for K > fold_prep_max_stats_k() (8192; an override
 * in fold_weight.cu), where the caller runs launch_ln_forward after it). Clears
 * off_centre and writes block_flags[0, *blocks) (at most FOLD_PREP_MAX_BLOCKS): whether a
 * block's rows of x were off centre or a W' of its rows of W overflowed (f16). Needs
 * K % 8 == 0 and 16-byte aligned x, W, gamma and beta. */
constexpr int FOLD_PREP_MAX_BLOCKS = 2048;
int64_t fold_prep_max_stats_k();
cudaError_t launch_fold_prep(lnl_dtype dt, const void *x, float *mean, float *rstd,
                             int64_t stats_rows, float eps, const void *W, const void *gamma,
                             const void *beta, const void *bias, void *wfold, float *cd,
                             int *off_centre, int *block_flags, int64_t N, int64_t K,
                             const device_info &d, cudaStream_t s, int *blocks);

/* cuTensorMapEncodeTiled through the runtime's driver entry point (nullptr if
 * unavailable), and a rows x K row-major 2-byte matrix's map with boxes of box_rows x 64
 * and the 128-byte swizzle (fused_forward_sm90.cu; also the dx epilogue's). */
using encode_fn = CUresult (*)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                               const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                               CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
encode_fn tensor_map_encoder();
bool make_map(encode_fn enc, CUtensorMap *map, lnl_dtype dt, const void *base, int64_t rows,
              int64_t K, int box_rows);

cudaError_t launch_fused_forward_sm90(lnl_dtype dt, const void *x, const float *mean,
                                      const float *rstd, const void *gamma, const void *beta,
                                      const void *W, const void *bias, const sm90_fold &fold,
                                      void *y, int64_t M, int64_t K, int64_t N,
                                      const device_info &d, cudaStream_t s, bool *launched);

/* Clusters of two CTAs of kernel k (`threads` a CTA, `smem` bytes of dynamic shared
 * memory) resident at once on device d, asked once per device and kernel type: a
 * persistent grid of clusters has no more, so that none waits for another's CTAs to
 * finish. 0 where the query fails or the device cannot place a pair of these CTAs (an
 * answer not kept, asked again next call): the call then runs without clusters rather
 * than fail to launch. Kernels of one pointer type share the record. */
template <typename Kernel>
int64_t sm90_max_clusters(Kernel k, unsigned threads, size_t smem, const device_info &d) {
    static std::atomic<int> cache[64];
    std::atomic<int> *slot = d.device >= 0 && d.device < 64 ? &cache[d.device] : nullptr;
    int n = slot ? slot->load(std::memory_order_relaxed) : 0;
    if (n > 0) return n;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(2 * (unsigned)d.sm_count);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaOccupancyMaxActiveClusters(&n, k, &cfg) != cudaSuccess || n <= 0) {
        (void)cudaGetLastError();
        return 0;
    }
    if (slot) slot->store(n, std::memory_order_relaxed);
    return n;
}

} // namespace lnl

#endif
