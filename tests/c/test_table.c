/*
 * Table-driven check of every strategy x dtype x shape against the test's own
 * float64 reference (testutil.c), per tensor by ||out - ref|| / ||ref||.
 *
 *   test_table [--device cpu|cuda] [--quick] [--no-auto] [--big] [--dtype f32|f64|bf16|f16]
 *              [--strategy auto|fused|unfused|reference] [--shape M,K,N]
 *
 * Every call runs on NaN-poisoned outputs with guard bytes after each buffer;
 * outputs that were not requested must stay poisoned, inputs must stay intact.
 * Each configuration covers threads 1 and 2 (CPU) and workspace NULL or a
 * caller buffer of exactly the queried size, and repeats the call to check
 * that results are bitwise reproducible. The CPU ISA is whatever the library
 * picks; ctest also runs it under LNL_CPU_ISA=scalar and =avx2.
 *
 * The backward runs through lnl_backward and through lnl_backward_ex given the
 * forward's own y and linear_bias (the dx epilogue's inputs; bwd_ex in messages), each
 * checked alike; where the library ignores y (the CPU; elsewhere unless
 * lnl_backward_wants_y and dx, dlinear_weight requested without ln_out) the two must
 * also agree bitwise. Every CUDA backward call that reads y gets the pair; on the CPU,
 * where it is a cross-check only, a few of each case's (want_ex).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_shim.h"
#include "table_buf.h"
#include "testutil.h"

int table_run_big_cuda(void); /* table_big.c */

enum { IN_X, IN_LNW, IN_LNB, IN_W, IN_B, IN_DY, N_IN };
enum { FO_Y, FO_MEAN, FO_RSTD, FO_LNOUT, N_FO };
enum { G_DX, G_DLNW, G_DLNB, G_DW, G_DB, N_G };
static const char *in_name[N_IN] = {"x", "ln_weight", "ln_bias", "linear_weight", "linear_bias", "dy"};
static const char *fo_name[N_FO] = {"y", "mean", "rstd", "ln_out"};
static const char *g_name[N_G] = {"dx", "dln_weight", "dln_bias", "dlinear_weight", "dlinear_bias"};

#define NULL_LNW 1
#define NULL_LNB 2
#define NULL_LB 4
#define F_QUICK 1   /* part of the --quick set */
#define F_SUBSETS 2 /* all 32 gradient subsets */
#define F_HOPPER 4  /* only --device cuda in bf16/f16: sized for the Hopper kernels' tiles */
#define F_GPU 8     /* only --device cuda (any dtype): too large for the CPU's reference */
#define F_SPLIT 16  /* run under LNL_CUDA_SPLIT_STATS_MIN_K=0: the Hopper forward's split
                       statistics, which the library takes only from K = 4096 */
#define F_PINGPONG 32 /* run under LNL_CUDA_PINGPONG_MAX_K=65536: the Hopper forward's
                         ping-pong form, which the library takes only when asked to */
#define F_BN192 64 /* run under LNL_CUDA_SM90_BN=192 (F_BN128: 128): the Hopper forward's */
#define F_BN128 128 /* narrower tiles at N > 256, taken only where they fill the SMs better */
#define F_DX_COOP 256 /* run under LNL_CUDA_DX_FORM=0: the dx epilogue's cooperative form,
                         which the library takes only when asked to */
#define F_CLUSTER 512 /* run under LNL_CUDA_SM90_CLUSTER=1: the Hopper forward's epilogue form
                         in clusters of two CTAs (with F_PINGPONG: its ping-pong form) where
                         its tiles would be narrower than 256 (F_NO_CLUSTER: =0, never) */
#define F_NO_CLUSTER 1024
#define F_DX_FEW_CTAS 2048 /* run under LNL_CUDA_DX_GRID=5: the dx epilogue on 5 CTAs, so that
                              a small row gives each CTA many tiles and x buffer uses */
#define F_DX_CLUSTER 4096 /* run under LNL_CUDA_DX_CLUSTER=1: the dx epilogue's XS forms in
                             clusters of two CTAs sharing W^T slices, taken only when asked */
#define F_CPU 8192 /* only --device cpu: the CPU GEMM's blocking, which the GPU's kernels do
                    * not share */
#define F_DX_XS3 16384 /* run under LNL_CUDA_DX_FORM=2: the dx epilogue's XS3 form, which the
                          library takes only when asked to (slower than XS on the H200) */
#define OFFSET_F16_LIMIT 2
#define OFFSET_TINY_SPREAD 3

typedef struct {
    int64_t M, K, N;
    int offset;   /* 1: odd rows are 1e3 + randn instead of 3 + 2 randn;
                     OFFSET_F16_LIMIT: x up to +-6e4, near f16's largest finite 65504;
                     OFFSET_TINY_SPREAD: x = 2e-3 + 1e-3 randn (rstd ~ 301, eps-bound)
                     and dy = 100 randn, so rstd * dy passes f16's 65504 */
    int nullmask; /* NULL_* parameters passed as NULL */
    int flags;
} shape_t;

/* Every value of K {1,3,8,67,768,1000,4097}, N {1,16,257,768} and M {0,1,16,129,1024}
 * appears; M = 1024 only with small K*N; one larger shape for the GPU's big-tile kernels. */
static const shape_t shapes[] = {
    {16, 8, 16, 0, 0, F_QUICK | F_SUBSETS},
    {1, 1, 1, 0, 0, F_QUICK},
    {0, 3, 16, 0, 0, F_QUICK},
    {0, 67, 1, 0, NULL_LNB, F_QUICK},
    {1, 3, 257, 0, 0, F_QUICK},
    {16, 1, 16, 1, 0, F_QUICK},
    {16, 3, 16, 0, NULL_LNB, F_QUICK},
    {129, 8, 1, 0, NULL_LNW | NULL_LNB | NULL_LB, F_QUICK},
    /* the CPU's AVX2 tiny backward (small_bwd_avx2.c): rows of two vectors, the second
     * masked (K = 12) or full (K = 16), and row blocks of 8 with a tail */
    {37, 12, 40, 1, 0, F_QUICK | F_SUBSETS},
    {13, 16, 5, 0, NULL_LNW, F_QUICK},
    {129, 67, 16, 1, 0, F_QUICK},
    /* bf16/f16 rows of at most 16 elements past the one-block tiny kernels' 2^15
     * multiply-adds (tiny_common.cuh): FUSED's forward is the mma.sync kernel computing the
     * statistics itself (fused_forward.cu, inline_stats_fit); no other row reaches it. */
    {1024, 8, 24, 1, 0, F_QUICK},
    {129, 67, 257, 0, 0, 0},
    {16, 768, 768, 0, 0, 0},
    {129, 1000, 16, 1, 0, 0},
    {16, 4097, 257, 0, 0, 0},
    {1, 4097, 1, 1, 0, 0},
    {1024, 67, 16, 0, 0, 0},
    {1024, 768, 16, 1, NULL_LB, 0},
    {16, 1000, 768, 0, NULL_LNW | NULL_LB, 0},
    {129, 768, 257, 0, 0, 0},
    /* On the H200 the first GPU shape of the quick set (the sanitizers' set) with enough
     * tiles for the f32 128x128 fused kernel (144 >= 132 SMs) and with the Hopper
     * forward's epilogue through shared memory (N % 8 == 0, N % 256 != 0). */
    {2048, 16, 1088, 0, 0, F_QUICK},
    /* The Hopper forward's two forms under the sanitizers: the shape above takes the
     * epilogue form (rows 3 + 2 randn), this one's 1e3 + randn rows send it to the
     * transform form (|mean| * rstd > 64; fused_forward_sm90.cu). */
    {129, 64, 272, 1, 0, F_QUICK},
    /* The Hopper forward without ln_weight (and without a bias) under the sanitizers: K = 72
     * is nine 16-byte chunks a row, so the weight folding reads past the first chunk of the
     * absent gamma; the quick set's other rows without ln_weight have K = 8 or K % 8 != 0,
     * which the Hopper kernel does not take. A pre-pass that tested gamma + k for null
     * instead of gamma read an illegal address on the H200, and only the full table's
     * M=16 K=1000 N=768 rows caught it (session 7, branch s7-fold-prep, bf80f75). */
    {129, 72, 272, 0, NULL_LNW | NULL_LB, F_QUICK},
    /* One column of output tiles (N <= 256) whose 100 tiles fill 3/4 of the H200's 132
     * SMs: the Hopper epilogue form computes the row statistics inside its GEMM kernel
     * (K = 200 and 72: the last slice holds one 8-column chunk, so its threads merge
     * unequal counts); centred, with 128- and 256-wide tiles, and with 1e3 rows, which
     * the transform form then redoes with those statistics. Too large for the CPU's
     * table (a float64 reference of 3 x 0.35 GFLOP per dtype under the sanitizers). */
    {12800, 200, 136, 0, 0, F_QUICK | F_HOPPER},
    /* The dx epilogue (FUSED's bf16 and f16 backward given y, N < K past the tiny class,
     * dx_epilogue_sm90.cu): M, K, N off its 128-row and 256-column tiles and 64-deep
     * slices, off-centre rows (its dgamma/dbeta then come from the fused dW kernel's
     * partials of P), and every parameter absent. */
    {1000, 1032, 200, 0, 0, F_HOPPER},
    {600, 2056, 72, 1, 0, F_HOPPER},
    /* ... whose default form gives each consumer warpgroup its own 64-row tiles and x
     * tile buffer (XS in dx_epilogue_sm90.cu); here 68 x 5 = 340 tiles on the
     * H200's 132 CTAs, so a CTA's warpgroups reuse their x buffers (a third tile) and hand
     * the main loop to each other, and K's 5 slices of N (the last 8 wide) outrun the
     * 4-stage ring, so the producer loads a tile's x between its slices. The rows above
     * have fewer tiles than SMs. XS3 (F_DX_XS3): three x buffers shared by the
     * warpgroups' tiles in turn, a 3-stage ring. The two forms on 5 CTAs
     * (F_DX_FEW_CTAS), 10 x 5 tiles: each CTA's ten tiles use XS3's three x buffers three or
     * four times each and XS's two five times each, XS3's 4 slices of N outrun its ring, and
     * the last tiles of M and K are partial (24 rows, 8 columns). The cooperative form
     * (F_DX_COOP) on a row of 8 x 5 tiles of 128 rows. */
    {4300, 1032, 264, 0, 0, F_HOPPER},
    {600, 1032, 200, 0, 0, F_QUICK | F_HOPPER | F_DX_FEW_CTAS | F_DX_XS3},
    {600, 1032, 264, 1, 0, F_QUICK | F_HOPPER | F_DX_FEW_CTAS},
    /* ... and both in clusters of two (F_DX_CLUSTER): 650 rows are 11 tiles of 64, an odd
     * count, so the last pairs' lower tiles lie past M and only load their half of W^T for
     * the other CTA; on 2 clusters (F_DX_FEW_CTAS) the 6 x 5 pairs give each CTA 15 tiles.
     * 2200,1032,136: 35 tiles down M (odd again), 18 x 5 pairs on every cluster the H200
     * can hold (66), a quarter of 4300,1032,264's work (run.sh's table step took 448 of
     * its 500 s in session 44). */
    {650, 1032, 200, 0, 0, F_QUICK | F_HOPPER | F_DX_FEW_CTAS | F_DX_CLUSTER | F_DX_XS3},
    {650, 1032, 264, 1, 0, F_HOPPER | F_DX_FEW_CTAS | F_DX_CLUSTER},
    {2200, 1032, 136, 0, 0, F_HOPPER | F_DX_CLUSTER | F_DX_XS3},
    {1000, 1032, 200, 0, 0, F_HOPPER | F_DX_COOP},
    {300, 1032, 72, 1, 0, F_QUICK | F_HOPPER},
    {260, 1288, 96, 0, NULL_LNW | NULL_LNB | NULL_LB, F_QUICK | F_HOPPER},
    /* f16's dW from the raw x scales rstd * dy by a power of two into f16's range
     * (dw_from_x.cu): here it is up to ~1.3e5 before scaling, while every gradient stays
     * in range (dx ~ 2.6e3 randn at N = 16 of K = 2056; dy = 300 randn took the exact dx
     * past 65504, H200, session 41). bf16 takes the same row unscaled. */
    {600, 2056, 16, OFFSET_TINY_SPREAD, 0, F_HOPPER},
    {12800, 72, 100, 0, NULL_LB, F_QUICK | F_HOPPER},
    {12800, 72, 136, 1, 0, F_QUICK | F_HOPPER},
    /* The epilogue form with the pre-pass's statistics (N > 256, K < 4096) on more tiles
     * than SMs, as the ping-pong form (fused_forward_sm90.cu; off unless asked for):
     * 132 x 3 tiles of 64 rows, which its warpgroups take in turn; K = 136 is three
     * slices, not a multiple of the four ring stages, so the stage sequence wraps inside
     * tiles. */
    {8448, 136, 520, 0, 0, F_QUICK | F_HOPPER | F_PINGPONG | F_NO_CLUSTER},
    /* ... and K = 1024, 16 slices, more than twice the ring, on 66 x 3 tiles of 64 rows: a
     * ping-pong warpgroup that waited for its tile's stages while the other was still in
     * its main loop took a slot's earlier use for its own (parity waits; session 22's
     * first run of the form failed this way at K = 1024). The cooperative form (the
     * default) at the same shape: 33 x 3 tiles of 128 x 192 (pick_bn's width there) on
     * fewer CTAs than SMs. */
    {4224, 1024, 520, 0, 0, F_QUICK | F_HOPPER | F_PINGPONG},
    {4224, 1024, 520, 0, 0, F_HOPPER},
    /* ... both forms in clusters of two CTAs sharing W' slices (the default at 256-wide
     * tiles; above, the ping-pong form's rows without them, then with them): 65 tiles of
     * 64 rows (33 of 128) down M, an odd count, so the last pairs' lower tiles lie past M
     * and only load their half of W' for the other CTA; 33 x 3 pairs on 66 clusters (17 x
     * 3 in the cooperative form); K's 5 slices wrap the 4-stage ring inside tiles (session
     * 44's call 2 ran these two rows at K = 1024). 600,264,520: 5 tiles down M, the quick
     * set's (for the sanitizers). 8448,136,520 with 1e3 rows: the cluster form runs to its
     * end (it never stops early) and the transform form redoes the call. 8448,72,1024 on 66
     * x 4 tiles of 256 columns, which pick_bn takes there: the cooperative form without
     * clusters. */
    {4160, 264, 520, 0, 0, F_HOPPER | F_PINGPONG | F_CLUSTER},
    {4160, 264, 520, 0, 0, F_HOPPER | F_CLUSTER},
    {600, 264, 520, 0, 0, F_QUICK | F_HOPPER | F_CLUSTER},
    {8448, 136, 520, 1, 0, F_HOPPER | F_PINGPONG | F_CLUSTER},
    {8448, 72, 1024, 0, 0, F_HOPPER | F_NO_CLUSTER},
    /* Narrower tiles at N > 256 (pick_bn in fused_forward_sm90.cu; session 29), both
     * forms: 300,136,776 on 3 x 5 tiles of 192 columns, the last 8 wide, K's three slices
     * the last partial, y through TMA stores; 300,72,580 with 1e3 rows (the transform form
     * redoes it) and N % 8 != 0 (plain stores), no bias; 300,136,904 on 3 x 8 tiles of 128,
     * the last 8 wide. The rule takes them on the H200's 132 SMs at 4096,136,768 (96 tiles
     * of 256 columns or 128 of 192, one round each) and 384,264,2056 (27 tiles of 256, or
     * 51 of 128: one round either way; the last 8 columns wide). */
    {300, 136, 776, 0, 0, F_QUICK | F_HOPPER | F_BN192},
    {300, 72, 580, 1, NULL_LB, F_QUICK | F_HOPPER | F_BN192},
    {300, 136, 904, 0, 0, F_HOPPER | F_BN128},
    /* ... and more tiles than SMs in the epilogue form with the pre-pass's statistics: 5 x
     * 33 tiles of 128 columns on 132 CTAs, so a CTA's producer reads the pre-pass's
     * verdict before its second tile: centred (it goes on) and with 1e3 rows (it stops;
     * the transform form redoes the call). The second is in the quick set for racecheck
     * (the first too would lengthen run.sh's racecheck steps, 342-349 s of their 480 in
     * session 29's run, for the same wait): until session 29 no quick row gave a CTA of that form a second
     * tile, and the producer's spin on the verdict word, a race to racecheck, went unseen
     * (an mbarrier carries it since e3bb6ac).
     * The off-centre row still draws one report (session 29, call 3): the consumers' read
     * of *stop at an earlier tile against the producer's later write of it, which no
     * barrier orders where a tile has fewer K slices than the ring has stages. Benign (the
     * consumers either run a tile whose data has landed or stop early in a call the
     * transform form redoes), but a failure of run.sh's racecheck steps until fixed. */
    {600, 72, 4104, 0, 0, F_HOPPER | F_BN128},
    {600, 72, 4104, 1, NULL_LB, F_QUICK | F_HOPPER | F_BN128},
    {4096, 136, 768, 0, 0, F_HOPPER},
    {384, 264, 2056, 1, 0, F_HOPPER},
    /* Two to four columns of tiles (N <= 1024) on enough tiles: the split statistics, each
     * column tile summing every tn-th K slice and the tiles of a row of tiles merging
     * their shares (fused_forward_sm90.cu; F_SPLIT takes them at these small K).
     * 4224,200,520: 33 x 3 tiles, K's four slices shared {0, 3}, {1}, {2}; 3200,72,1000:
     * 25 x 4 tiles, two slices, so two of the four tiles have no share, and 1e3 rows, which
     * the transform form redoes with the merged statistics; 12800,200,1000: 400 tiles,
     * three rounds of the persistent grid. */
    {4224, 200, 520, 0, 0, F_QUICK | F_HOPPER | F_SPLIT},
    {3200, 72, 1000, 1, NULL_LB, F_QUICK | F_HOPPER | F_SPLIT},
    {12800, 200, 1000, 0, 0, F_HOPPER | F_SPLIT},
    /* Up to 8 column tiles share the statistics (session 25): 1664,72,1990 on 13 x 8
     * tiles (one round of 104 CTAs), K's two slices among 8 tiles, partial last row and
     * column of tiles (N % 8 != 0: y without TMA stores); 2200,200,1990 likewise on 18 x 8
     * tiles (a grid of 128, two rounds, four slices); 4200,264,1300 on 33 x 6 tiles (a
     * grid of 132, two rounds), five slices, the last of 8 columns, 1e3 rows (the
     * transform form's redo) and no bias. With at most 4 column tiles sharing (before
     * session 25) all took the pre-pass. None is in the quick set: with 2200,200,1990
     * there, racecheck's bf16 and f16 steps of tests/gpu/run.sh ran past their 480 s limit
     * (400 s before it; session 25), and with 1664,72,1990 in its place they did again
     * (session 26: bf16 on the quick set's last row, f16 on this one, no hazard in our
     * kernels up to there). Session 25's call 4 ran racecheck on 1664,72,1990 (bf16, f16)
     * and 2200,200,1990 (bf16) alone: 0 hazards. */
    {1664, 72, 1990, 0, 0, F_HOPPER | F_SPLIT},
    {2200, 200, 1990, 0, 0, F_HOPPER | F_SPLIT},
    {4200, 264, 1300, 1, NULL_LB, F_HOPPER | F_SPLIT},
    /* The Hopper forward's pre-pass for rows of 2049 to 8192 elements: one launch, a block
     * a row, folds the weight and computes x's statistics (fold_weight.cu, session 26).
     * K = 2056 is 257 chunks (a thread of 128 holds three, the others two); 1100,2056,300
     * has 1e3 rows, which the block flags send to the transform form; K = 8200 (past the
     * block kernel) takes the folding kernel and launch_ln_forward's statistics. Not in
     * the quick set: tests/gpu/run.sh's racecheck steps are near their limit (session 26's
     * device call ran the sanitizers on these rows). */
    {130, 2056, 264, 0, NULL_LNB, F_HOPPER},
    {1100, 2056, 300, 1, 0, F_HOPPER},
    {260, 8200, 136, 0, NULL_LNW, F_HOPPER},
    /* The block kernel at partial chunk counts (session 27): K = 3000 is 375 chunks (4 a
     * thread, threads 119-127 holding two), with 1e3 rows; K = 4104 is 513 (8 a thread, one
     * thread holding five), without ln_bias and bias. */
    {1100, 3000, 300, 1, 0, F_HOPPER},
    {130, 4104, 264, 0, NULL_LNB | NULL_LB, F_HOPPER},
    /* Stress: values near the f16 limit must neither overflow the statistics nor the
     * GEMMs (everything accumulates in float32); dy is scaled by 1e2 so that dx
     * (~ 1e2 * rstd ~ 5e-3) stays clear of f16's subnormal range while the true
     * dlinear_weight (std ~ 1e2 * sqrt(M) * 1.5 ~ 1.7e3) stays far below 65504. A scale
     * of 1e3 made the exact dW exceed f16's range (seen on the H200, commit 056362d). */
    {129, 768, 257, OFFSET_F16_LIMIT, 0, F_QUICK},
    /* The Hopper LayerNorm backward's ring kernel (ln_backward.cu), which runs where the
     * register kernel fits one block an SM: rows of more than 512 16-byte chunks, K = 4104
     * in bf16/f16 (f32 takes the general kernel there) and K = 2056 in f32 (1e3 rows: the
     * shifted statistics; no ln_weight). 700 rows on at most 132 blocks are 6 a block, so
     * each block's 4-slot ring is refilled. Not in the quick set: under racecheck they
     * took tests/gpu/run.sh's f32 step past 420 s and bf16/f16 from ~290 to ~410 s (H200,
     * f351c9c, session 8, where they passed memcheck, synccheck and racecheck in bf16/f16;
     * f32 racecheck on its own: `--shape 700,2056,16`). */
    {700, 4104, 16, 0, 0, F_GPU},
    {700, 2056, 16, 1, NULL_LNW, F_GPU},
    /* The LayerNorm forward's warp kernel (ln_forward.cu: a warp a row up to 128 16-byte
     * chunks, CPT of them a lane) at every CPT the rows above leave out: K = 496 is 62
     * chunks in bf16/f16 (CPT 2) and 124 in f32 (CPT 4); K = 384 48 (CPT 2) and 96 (CPT
     * 3); K = 200 50 f32 chunks (CPT 2). 300 rows: 38 blocks of 8 warps, the last one
     * part-full. N = 40, 136 and 72 give the column sums 2-D blocks of 32 x 16 (bf16). */
    {300, 496, 40, 0, 0, 0},
    /* The CPU GEMM's blocks: K = 1000 is two depth blocks of the bf16 kernel (kc 768) and
     * three of the float one (384), so 16-bit outputs are rounded from float partial sums;
     * 600 rows are two row blocks of the backward (512 at this K), 1e3 rows included; N =
     * 3100 is two column blocks (nc 3072: the float engine rounds a 16-bit result per
     * column block). */
    {600, 1000, 40, 1, 0, F_CPU},
    {40, 1000, 3100, 0, NULL_LB, F_CPU},
    {300, 384, 136, 1, 0, 0},
    {300, 200, 72, 0, NULL_LNB, 0},
};

typedef struct {
    shape_t s;
    lnl_dtype dt; /* the problem's dtype */
    int lnf32;    /* ln_float32: x, its parameters and their gradients in float32 */
    lnl_dtype in_dt[N_IN], g_dt[N_G]; /* each buffer's dtype (ln_out's and y's: dt) */
    int dev;
    double eps, bound;
    size_t n_in[N_IN], n_fo[N_FO], n_g[N_G];
    double *in[N_IN], *ref_fo[N_FO], *ref_g[N_G];
    tbuf bin[N_IN], bfo[N_FO], saved[3], bg[N_G];
    tbuf saved_y; /* y of the forward with mean/rstd and without ln_out: lnl_backward_ex's y */
    unsigned char *image[N_IN]; /* the bytes each input must keep */
    double *scratch;
    double maxerr[N_FO + N_G];
    char tag[200];
} tcase;

static int fo_acc(int i) { return i == FO_MEAN || i == FO_RSTD; }

static double bound_for(lnl_dtype dt, int offset) {
    switch (dt) {
    case LNL_DTYPE_F64: return 1e-11;
    case LNL_DTYPE_F32: return offset == 1 ? 2e-3 : 1e-5;
    case LNL_DTYPE_F16: return 2e-3;
    case LNL_DTYPE_BF16: return 1e-2;
    }
    return 0;
}

static void case_setup(tcase *c, const shape_t *s, lnl_dtype dt, int lnf32, int dev, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->s = *s;
    c->dt = dt;
    c->lnf32 = lnf32;
    for (int i = 0; i < N_IN; i++)
        c->in_dt[i] = lnf32 && (i == IN_X || i == IN_LNW || i == IN_LNB) ? LNL_DTYPE_F32 : dt;
    for (int i = 0; i < N_G; i++)
        c->g_dt[i] = lnf32 && (i == G_DX || i == G_DLNW || i == G_DLNB) ? LNL_DTYPE_F32 : dt;
    c->dev = dev;
    c->eps = 1e-5;
    c->bound = bound_for(dt, s->offset);
    int64_t M = s->M, K = s->K, N = s->N;
    size_t n_in[N_IN] = {(size_t)(M * K), (size_t)K, (size_t)K, (size_t)(N * K), (size_t)N,
                         (size_t)(M * N)};
    size_t n_fo[N_FO] = {(size_t)(M * N), (size_t)M, (size_t)M, (size_t)(M * K)};
    size_t n_g[N_G] = {(size_t)(M * K), (size_t)K, (size_t)K, (size_t)(N * K), (size_t)N};
    memcpy(c->n_in, n_in, sizeof n_in);
    memcpy(c->n_fo, n_fo, sizeof n_fo);
    memcpy(c->n_g, n_g, sizeof n_g);
    size_t most = 1;
    tu_rng r;
    tu_rng_seed(&r, seed);
    for (int i = 0; i < N_IN; i++) {
        c->in[i] = malloc((n_in[i] + 1) * sizeof(double));
        TU_CHECK(c->in[i]);
        for (size_t j = 0; j < n_in[i]; j++) {
            double v, z = tu_randn(&r);
            switch (i) {
            case IN_X:
                if (s->offset == OFFSET_F16_LIMIT)
                    v = fmax(-6e4, fmin(6e4, 2e4 * z));
                else if (s->offset == OFFSET_TINY_SPREAD)
                    v = 2e-3 + 1e-3 * z;
                else
                    v = (s->offset && (j / (size_t)K) % 2 == 1) ? 1e3 + z : 3.0 + 2.0 * z;
                break;
            case IN_LNW: v = 1.0 + 0.3 * z; break;
            case IN_W: v = z / sqrt((double)K); break;
            case IN_DY:
                v = s->offset == OFFSET_F16_LIMIT || s->offset == OFFSET_TINY_SPREAD ? 1e2 * z : z;
                break;
            default: v = 0.5 * z; break;
            }
            c->in[i][j] = tu_round(c->in_dt[i], v);
        }
        if (n_in[i] > most) most = n_in[i];
        c->bin[i] = tb_new(n_in[i] * tu_dtype_size(c->in_dt[i]), dev);
        tu_store(c->in_dt[i], c->bin[i].host, c->in[i], n_in[i]);
        tb_push(&c->bin[i]);
        c->image[i] = malloc(c->bin[i].bytes + 1);
        TU_CHECK(c->image[i]);
        memcpy(c->image[i], c->bin[i].host, c->bin[i].bytes);
    }
    for (int i = 0; i < N_FO; i++) {
        c->ref_fo[i] = malloc((n_fo[i] + 1) * sizeof(double));
        TU_CHECK(c->ref_fo[i]);
        size_t es = fo_acc(i) ? tu_acc_size(dt) : tu_dtype_size(dt);
        c->bfo[i] = tb_new(n_fo[i] * es, dev);
        if (i > 0) c->saved[i - 1] = tb_new(n_fo[i] * es, dev);
        if (i == FO_Y) c->saved_y = tb_new(n_fo[i] * es, dev);
        if (n_fo[i] > most) most = n_fo[i];
    }
    for (int i = 0; i < N_G; i++) {
        c->ref_g[i] = malloc((n_g[i] + 1) * sizeof(double));
        TU_CHECK(c->ref_g[i]);
        c->bg[i] = tb_new(n_g[i] * tu_dtype_size(c->g_dt[i]), dev);
    }
    c->scratch = malloc((most + 1) * sizeof(double));
    TU_CHECK(c->scratch);
    const double *lnw = (s->nullmask & NULL_LNW) ? NULL : c->in[IN_LNW];
    const double *lnb = (s->nullmask & NULL_LNB) ? NULL : c->in[IN_LNB];
    const double *lb = (s->nullmask & NULL_LB) ? NULL : c->in[IN_B];
    tu_ref_forward(M, K, N, c->eps, c->in[IN_X], lnw, lnb, c->in[IN_W], lb, c->ref_fo[FO_Y],
                   c->ref_fo[FO_MEAN], c->ref_fo[FO_RSTD], c->ref_fo[FO_LNOUT]);
    tu_ref_backward(M, K, N, c->eps, c->in[IN_DY], c->in[IN_X], lnw, lnb, c->in[IN_W],
                    c->ref_g[G_DX], c->ref_g[G_DLNW], c->ref_g[G_DLNB], c->ref_g[G_DW],
                    c->ref_g[G_DB]);
}

static void case_teardown(tcase *c) {
    for (int i = 0; i < N_IN; i++) {
        free(c->in[i]);
        free(c->image[i]);
        tb_free(&c->bin[i]);
    }
    for (int i = 0; i < N_FO; i++) {
        free(c->ref_fo[i]);
        tb_free(&c->bfo[i]);
        if (i > 0) tb_free(&c->saved[i - 1]);
    }
    tb_free(&c->saved_y);
    for (int i = 0; i < N_G; i++) {
        free(c->ref_g[i]);
        tb_free(&c->bg[i]);
    }
    free(c->scratch);
}

static const void *param_ptr(const tcase *c, int i) {
    int bit = i == IN_LNW ? NULL_LNW : i == IN_LNB ? NULL_LNB : i == IN_B ? NULL_LB : 0;
    return (c->s.nullmask & bit) ? NULL : c->bin[i].ptr;
}

static void poison(tbuf *b, lnl_dtype dt, int acc, size_t n) {
    tu_fill_nan(dt, acc, b->host, n);
    tb_push(b);
}

/* Pulls b (of dtype dt) and checks that it still holds the NaN poison and its guard. */
static void expect_poisoned(tcase *c, tbuf *b, lnl_dtype dt, int acc, size_t n, const char *name,
                            const char *what) {
    tb_pull(b);
    unsigned char *img = malloc(b->bytes + 1);
    TU_CHECK(img);
    tu_fill_nan(dt, acc, img, n);
    tu_expect(memcmp(img, b->host, b->bytes) == 0 && tb_guard_ok(b),
              "%s %s: %s not requested but written (or guard hit)", c->tag, what, name);
    free(img);
}

static void expect_close(tcase *c, tbuf *b, lnl_dtype dt, int acc, const double *ref, size_t n,
                         const char *name, int slot, const char *what) {
    tb_pull(b);
    tu_expect(tb_guard_ok(b), "%s %s: guard bytes after %s overwritten", c->tag, what, name);
    if (acc)
        tu_load_acc(dt, c->scratch, b->host, n);
    else
        tu_load(dt, c->scratch, b->host, n);
    double e = tu_relerr(c->scratch, ref, n);
    if (!(e <= c->maxerr[slot])) c->maxerr[slot] = e;
    tu_expect(e <= c->bound, "%s %s: %s rel err %.3e > %.1e", c->tag, what, name, e, c->bound);
}

static void expect_inputs_intact(tcase *c, const char *what) {
    for (int i = 0; i < N_IN; i++) {
        tb_pull(&c->bin[i]);
        tu_expect(memcmp(c->image[i], c->bin[i].host, c->bin[i].bytes) == 0 && tb_guard_ok(&c->bin[i]),
                  "%s %s: input %s modified", c->tag, what, in_name[i]);
    }
}

static tbuf ws_alloc(tcase *c, size_t bytes) { return tb_new(bytes, c->dev); }

static void ws_check(tcase *c, tbuf *ws, const char *what) {
    tb_pull_guard(ws);
    tu_expect(tb_guard_ok(ws), "%s %s: write past the end of the %zu-byte workspace", c->tag, what,
              ws->bytes);
    tb_free(ws);
}

static lnl_status call_forward(tcase *c, const lnl_problem *p, int stats, int lnout, int exact_ws,
                               tbuf *ws) {
    size_t wsb = exact_ws ? lnl_forward_workspace_size(p) : 0;
    if (exact_ws) *ws = ws_alloc(c, wsb);
    lnl_status st = lnl_forward(p, c->bin[IN_X].ptr, param_ptr(c, IN_LNW), param_ptr(c, IN_LNB),
                                c->bin[IN_W].ptr, param_ptr(c, IN_B), c->bfo[FO_Y].ptr,
                                stats ? c->bfo[FO_MEAN].ptr : NULL, stats ? c->bfo[FO_RSTD].ptr : NULL,
                                lnout ? c->bfo[FO_LNOUT].ptr : NULL, exact_ws ? ws->ptr : NULL, wsb);
    if (c->dev) cu_sync();
    return st;
}

static void run_forward(tcase *c, const lnl_problem *p, int stats, int lnout, int exact_ws) {
    char what[96];
    snprintf(what, sizeof what, "fwd[threads=%d ws=%s stats=%d ln_out=%d]", p->threads,
             exact_ws ? "exact" : "NULL", stats, lnout);
    for (int i = 0; i < N_FO; i++) poison(&c->bfo[i], c->dt, fo_acc(i), c->n_fo[i]);
    tbuf ws;
    lnl_status st = call_forward(c, p, stats, lnout, exact_ws, &ws);
    tu_expect(st == LNL_STATUS_SUCCESS, "%s %s: status %s (%s)", c->tag, what, lnl_status_string(st),
              lnl_last_error());
    if (exact_ws) ws_check(c, &ws, what);
    if (st != LNL_STATUS_SUCCESS) return;
    for (int i = 0; i < N_FO; i++) {
        int want = i == FO_Y || ((i == FO_MEAN || i == FO_RSTD) && stats) || (i == FO_LNOUT && lnout);
        if (want)
            expect_close(c, &c->bfo[i], c->dt, fo_acc(i), c->ref_fo[i], c->n_fo[i], fo_name[i], i, what);
        else
            expect_poisoned(c, &c->bfo[i], c->dt, fo_acc(i), c->n_fo[i], fo_name[i], what);
    }
    expect_inputs_intact(c, what);
    if (stats && lnout) { /* keep them for the backward */
        for (int i = 0; i < 3; i++) {
            memcpy(c->saved[i].host, c->bfo[i + 1].host, c->saved[i].bytes);
            tb_push(&c->saved[i]);
        }
    }
    if (stats && !lnout) { /* y as the PyTorch autograd's forward (recompute=True) writes it */
        memcpy(c->saved_y.host, c->bfo[FO_Y].host, c->saved_y.bytes);
        tb_push(&c->saved_y);
    }
}

static int allowed_grads(const tcase *c) {
    int m = 31;
    if (c->s.nullmask & NULL_LNW) m &= ~(1 << G_DLNW);
    if (c->s.nullmask & NULL_LNB) m &= ~(1 << G_DLNB);
    /* linear_bias is no argument of lnl_backward: dlinear_bias is always computable. */
    return m;
}

/* y: NULL calls lnl_backward; otherwise lnl_backward_ex with y and the case's
 * linear_bias (NULL where the case has none). */
static lnl_status call_backward(tcase *c, const lnl_problem *p, int use, int mask, int exact_ws,
                                tbuf *ws, const void *y) {
    size_t wsb = exact_ws ? lnl_backward_workspace_size(p) : 0;
    if (exact_ws) *ws = ws_alloc(c, wsb);
    void *g[N_G];
    for (int i = 0; i < N_G; i++) g[i] = (mask >> i) & 1 ? c->bg[i].ptr : NULL;
    const void *mean = (use & 1) ? c->saved[0].ptr : NULL, *rstd = (use & 1) ? c->saved[1].ptr : NULL;
    const void *ln_out = (use & 2) ? c->saved[2].ptr : NULL;
    lnl_status st;
    if (y) {
        lnl_backward_args a;
        memset(&a, 0, sizeof a);
        a.dy = c->bin[IN_DY].ptr, a.x = c->bin[IN_X].ptr, a.ln_weight = param_ptr(c, IN_LNW);
        a.ln_bias = param_ptr(c, IN_LNB), a.linear_weight = c->bin[IN_W].ptr;
        a.mean = mean, a.rstd = rstd, a.ln_out = ln_out;
        a.dx = g[G_DX], a.dln_weight = g[G_DLNW], a.dln_bias = g[G_DLNB];
        a.dlinear_weight = g[G_DW], a.dlinear_bias = g[G_DB];
        a.workspace = exact_ws ? ws->ptr : NULL, a.workspace_bytes = wsb;
        a.y = y, a.linear_bias = param_ptr(c, IN_B);
        st = lnl_backward_ex(p, &a);
    } else {
        st = lnl_backward(p, c->bin[IN_DY].ptr, c->bin[IN_X].ptr, param_ptr(c, IN_LNW),
                          param_ptr(c, IN_LNB), c->bin[IN_W].ptr, mean, rstd, ln_out, g[G_DX],
                          g[G_DLNW], g[G_DLNB], g[G_DW], g[G_DB], exact_ws ? ws->ptr : NULL, wsb);
    }
    if (c->dev) cu_sync();
    return st;
}

/* use: bit 0 = pass the saved mean/rstd, bit 1 = pass the saved ln_out.
 * ex: through lnl_backward_ex with the saved y (and the case's linear_bias). */
static void run_backward_via(tcase *c, const lnl_problem *p, int use, int mask, int exact_ws, int ex) {
    char what[112];
    mask &= allowed_grads(c);
    snprintf(what, sizeof what, "%s[threads=%d ws=%s stats=%d ln_out=%d grads=0x%02x]", ex ? "bwd_ex" : "bwd",
             p->threads, exact_ws ? "exact" : "NULL", use & 1, (use >> 1) & 1, mask);
    for (int i = 0; i < N_G; i++) poison(&c->bg[i], c->g_dt[i], 0, c->n_g[i]);
    tbuf ws;
    lnl_status st = call_backward(c, p, use, mask, exact_ws, &ws, ex ? c->saved_y.ptr : NULL);
    tu_expect(st == LNL_STATUS_SUCCESS, "%s %s: status %s (%s)", c->tag, what, lnl_status_string(st),
              lnl_last_error());
    if (exact_ws) ws_check(c, &ws, what);
    if (st != LNL_STATUS_SUCCESS) return;
    for (int i = 0; i < N_G; i++) {
        if (!((mask >> i) & 1)) {
            expect_poisoned(c, &c->bg[i], c->g_dt[i], 0, c->n_g[i], g_name[i], what);
            continue;
        }
        expect_close(c, &c->bg[i], c->g_dt[i], 0, c->ref_g[i], c->n_g[i], g_name[i], N_FO + i, what);
        if (c->s.M == 0) { /* an empty batch must still write zero parameter gradients */
            tu_load(c->g_dt[i], c->scratch, c->bg[i].host, c->n_g[i]);
            int zero = 1;
            for (size_t j = 0; j < c->n_g[i]; j++) zero &= c->scratch[j] == 0.0;
            tu_expect(zero, "%s %s: M=0 but %s is not all zeros", c->tag, what, g_name[i]);
        }
    }
    expect_inputs_intact(c, what);
    for (int i = 0; i < 3; i++) {
        unsigned char *img = malloc(c->saved[i].bytes + 1);
        TU_CHECK(img);
        memcpy(img, c->saved[i].host, c->saved[i].bytes);
        tb_pull(&c->saved[i]);
        tu_expect(memcmp(img, c->saved[i].host, c->saved[i].bytes) == 0, "%s %s: saved %s modified",
                  c->tag, what, fo_name[i + 1]);
        free(img);
    }
    if (ex) {
        unsigned char *img = malloc(c->saved_y.bytes + 1);
        TU_CHECK(img);
        memcpy(img, c->saved_y.host, c->saved_y.bytes);
        tb_pull(&c->saved_y);
        tu_expect(memcmp(img, c->saved_y.host, c->saved_y.bytes) == 0 && tb_guard_ok(&c->saved_y),
                  "%s %s: y (an input of lnl_backward_ex) modified", c->tag, what);
        free(img);
    }
}

/* Whether lnl_backward_ex reads y on this call (lnl_backward_wants_y's conditions);
 * elsewhere it must give lnl_backward's bytes. */
static int ex_reads_y(const lnl_problem *p, int use, int mask) {
    return lnl_backward_wants_y(p) && (mask & (1 << G_DX)) && (mask & (1 << G_DW)) && !(use & 2);
}

/* lnl_backward, then (when ex) lnl_backward_ex on the same call, each checked against
 * the reference; where y is ignored, the two must agree bitwise. */
static void run_backward(tcase *c, const lnl_problem *p, int use, int mask, int exact_ws, int ex) {
    run_backward_via(c, p, use, mask, exact_ws, 0);
    if (!ex) return;
    mask &= allowed_grads(c);
    unsigned char *plain[N_G];
    for (int i = 0; i < N_G; i++) { /* run_backward_via pulled every gradient buffer */
        plain[i] = malloc(c->bg[i].bytes + 1);
        TU_CHECK(plain[i]);
        memcpy(plain[i], c->bg[i].host, c->bg[i].bytes);
    }
    run_backward_via(c, p, use, mask, exact_ws, 1);
    const int same = !ex_reads_y(p, use, mask);
    for (int i = 0; i < N_G; i++) {
        if (same && ((mask >> i) & 1)) {
            tb_pull(&c->bg[i]);
            tu_expect(memcmp(plain[i], c->bg[i].host, c->bg[i].bytes) == 0,
                      "%s bwd_ex[threads=%d ws=%s stats=%d ln_out=%d grads=0x%02x]: %s differs from "
                      "lnl_backward's although y is ignored here", c->tag, p->threads,
                      exact_ws ? "exact" : "NULL", use & 1, (use >> 1) & 1, mask, g_name[i]);
        }
        free(plain[i]);
    }
}

/* The same call twice must give bitwise-identical outputs; with ex, lnl_backward_ex's
 * too (given the y of the same repetition's forward). */
static void check_determinism(tcase *c, const lnl_problem *p, int ex) {
    unsigned char *first[N_FO + 2 * N_G];
    tbuf ws;
    const int n = N_FO + (ex ? 2 : 1) * N_G;
    for (int rep = 0; rep < 2; rep++) {
        for (int i = 0; i < N_FO; i++) poison(&c->bfo[i], c->dt, fo_acc(i), c->n_fo[i]);
        for (int i = 0; i < N_G; i++) poison(&c->bg[i], c->g_dt[i], 0, c->n_g[i]);
        lnl_status s1 = call_forward(c, p, 1, 1, 0, &ws);
        lnl_status s2 = call_backward(c, p, 0, allowed_grads(c), 0, &ws, NULL);
        tu_expect(s1 == LNL_STATUS_SUCCESS && s2 == LNL_STATUS_SUCCESS, "%s determinism: status %d %d",
                  c->tag, (int)s1, (int)s2);
        for (int i = 0; i < n; i++) {
            if (i == N_FO + N_G) { /* the same again through lnl_backward_ex */
                for (int j = 0; j < N_G; j++) poison(&c->bg[j], c->g_dt[j], 0, c->n_g[j]);
                lnl_status s3 = call_backward(c, p, 0, allowed_grads(c), 0, &ws, c->bfo[FO_Y].ptr);
                tu_expect(s3 == LNL_STATUS_SUCCESS, "%s determinism: lnl_backward_ex status %d", c->tag,
                          (int)s3);
            }
            tbuf *b = i < N_FO ? &c->bfo[i] : &c->bg[(i - N_FO) % N_G];
            tb_pull(b);
            if (rep == 0) {
                first[i] = malloc(b->bytes + 1);
                TU_CHECK(first[i]);
                memcpy(first[i], b->host, b->bytes);
            } else {
                tu_expect(memcmp(first[i], b->host, b->bytes) == 0,
                          "%s determinism (threads=%d): %s%s differs between two identical calls",
                          c->tag, p->threads, i < N_FO ? fo_name[i] : g_name[(i - N_FO) % N_G],
                          i >= N_FO + N_G ? " (lnl_backward_ex)" : "");
                free(first[i]);
            }
        }
    }
}

/* The requested weight gradients (mask, dx excluded) of an M = 0 backward: all zeros,
 * guards intact. */
static void expect_zero_grads(tcase *c, int mask, const char *what) {
    for (int i = 1; i < N_G; i++) {
        if (!((mask >> i) & 1)) continue;
        tb_pull(&c->bg[i]);
        tu_load(c->g_dt[i], c->scratch, c->bg[i].host, c->n_g[i]);
        int zero = tb_guard_ok(&c->bg[i]);
        for (size_t j = 0; j < c->n_g[i]; j++) zero &= c->scratch[j] == 0.0;
        tu_expect(zero, "%s %s: %s is not all zeros", c->tag, what, g_name[i]);
    }
}

/* M = 0: x, y, dy, dx and the statistics may all be NULL. */
static void check_empty_with_nulls(tcase *c, const lnl_problem *p) {
    lnl_status st = lnl_forward(p, NULL, param_ptr(c, IN_LNW), param_ptr(c, IN_LNB), c->bin[IN_W].ptr,
                                param_ptr(c, IN_B), NULL, NULL, NULL, NULL, NULL, 0);
    tu_expect(st == LNL_STATUS_SUCCESS, "%s fwd M=0 with NULL x/y: %s (%s)", c->tag,
              lnl_status_string(st), lnl_last_error());
    int mask = allowed_grads(c) & ~(1 << G_DX);
    for (int i = 0; i < N_G; i++) poison(&c->bg[i], c->g_dt[i], 0, c->n_g[i]);
    st = lnl_backward(p, NULL, NULL, param_ptr(c, IN_LNW), param_ptr(c, IN_LNB), c->bin[IN_W].ptr,
                      NULL, NULL, NULL, NULL, (mask & 2) ? c->bg[G_DLNW].ptr : NULL,
                      (mask & 4) ? c->bg[G_DLNB].ptr : NULL, c->bg[G_DW].ptr,
                      (mask & 16) ? c->bg[G_DB].ptr : NULL, NULL, 0);
    if (c->dev) cu_sync();
    tu_expect(st == LNL_STATUS_SUCCESS, "%s bwd M=0 with NULL dy/x/dx: %s (%s)", c->tag,
              lnl_status_string(st), lnl_last_error());
    expect_zero_grads(c, mask, "bwd M=0 with NULL dy/x/dx");
    /* lnl_backward_ex likewise, y NULL too */
    for (int i = 0; i < N_G; i++) poison(&c->bg[i], c->g_dt[i], 0, c->n_g[i]);
    lnl_backward_args a;
    memset(&a, 0, sizeof a);
    a.ln_weight = param_ptr(c, IN_LNW), a.ln_bias = param_ptr(c, IN_LNB), a.linear_weight = c->bin[IN_W].ptr;
    a.dln_weight = (mask & 2) ? c->bg[G_DLNW].ptr : NULL, a.dln_bias = (mask & 4) ? c->bg[G_DLNB].ptr : NULL;
    a.dlinear_weight = c->bg[G_DW].ptr, a.dlinear_bias = (mask & 16) ? c->bg[G_DB].ptr : NULL;
    a.linear_bias = param_ptr(c, IN_B);
    st = lnl_backward_ex(p, &a);
    if (c->dev) cu_sync();
    tu_expect(st == LNL_STATUS_SUCCESS, "%s bwd_ex M=0 with NULL dy/x/dx/y: %s (%s)", c->tag,
              lnl_status_string(st), lnl_last_error());
    expect_zero_grads(c, mask, "bwd_ex M=0 with NULL dy/x/dx/y");
}

/* An environment variable set for one row of the table (when `on`), and the caller's own
 * value, put back by env_restore. */
typedef struct {
    const char *name;
    int on, had;
    char saved[32];
} env_override;

static void env_set(env_override *e, const char *name, const char *value, int on) {
    const char *had = on ? getenv(name) : NULL;
    e->name = name;
    e->on = on != 0;
    e->had = had != NULL;
    snprintf(e->saved, sizeof e->saved, "%s", had ? had : "");
    if (e->on) setenv(name, value, 1);
}

static void env_restore(const env_override *e) {
    if (!e->on) return;
    if (e->had) setenv(e->name, e->saved, 1);
    else unsetenv(e->name);
}

/* Which backward calls lnl_backward_ex repeats: on CUDA every one that reads y (the dx
 * epilogue's path: ex_reads_y), and no other: the sanitizer steps of tests/gpu/run.sh run
 * the quick table near their time limits (a cross-check subset on every CUDA case took
 * f16's racecheck from 357 to 449 s of 480, session 40). On the CPU, which ignores y, the
 * pair is a bitwise cross-check of the struct's wiring, kept to three calls a case for
 * CI's time: in the first configuration, every gradient with no saved tensor and with all
 * of them (mean, rstd, ln_out), and dx with dlinear_weight alone (the epilogue's minimal
 * request). */
static int want_ex(const tcase *c, const lnl_problem *p, int first, int use, int mask) {
    const int dx_dw = (1 << G_DX) | (1 << G_DW);
    if (c->dev) return ex_reads_y(p, use, mask & allowed_grads(c));
    return first && ((mask == 31 && (use == 0 || use == 3)) || (use == 0 && mask == dx_dw));
}

static void run_case(tcase *c, lnl_strategy strat) {
    lnl_problem p;
    memset(&p, 0, sizeof p);
    p.rows = c->s.M;
    p.in_features = c->s.K;
    p.out_features = c->s.N;
    p.eps = c->eps;
    p.dtype = c->dt;
    p.ln_float32 = c->lnf32;
    p.device = c->dev ? LNL_DEVICE_CUDA : LNL_DEVICE_CPU;
    p.strategy = strat;
    p.threads = 1;
    snprintf(c->tag, sizeof c->tag, "[%s %s%s %s M=%lld K=%lld N=%lld%s null=%d]", c->dev ? "cuda" : "cpu",
             tu_dtype_name(c->dt), c->lnf32 ? "-lnf32" : "", tu_strategy_name(strat), (long long)c->s.M, (long long)c->s.K,
             (long long)c->s.N,
             c->s.offset == 1                  ? " offset1e3"
             : c->s.offset == OFFSET_F16_LIMIT ? " f16limit"
             : c->s.offset                     ? " tinyspread"
                                               : "",
             c->s.nullmask);
    lnl_status st = lnl_check(&p);
    if (st == LNL_STATUS_UNSUPPORTED) {
        printf("skip %s: %s\n", c->tag, lnl_last_error());
        return;
    }
    tu_expect(st == LNL_STATUS_SUCCESS, "%s lnl_check: %s (%s)", c->tag, lnl_status_string(st),
              lnl_last_error());
    if (st != LNL_STATUS_SUCCESS) return;
    for (int i = 0; i < N_FO + N_G; i++) c->maxerr[i] = 0;
    long failed_before = tu_failed;
    static const int cpu_threads[] = {1, 2}, cuda_threads[] = {0};
    const int *threads = c->dev ? cuda_threads : cpu_threads;
    int n_threads = c->dev ? 1 : 2;
    for (int ti = 0; ti < n_threads; ti++) {
        for (int exact_ws = 0; exact_ws < 2; exact_ws++) {
            p.threads = threads[ti];
            int first = ti == 0 && !exact_ws;
            if (first) {
                run_forward(c, &p, 0, 0, exact_ws);
                run_forward(c, &p, 1, 0, exact_ws);
                run_forward(c, &p, 0, 1, exact_ws);
            }
            run_forward(c, &p, 1, 1, exact_ws); /* last: saves mean/rstd/ln_out */
            if (first && (c->s.flags & F_SUBSETS)) {
                for (int use = 0; use < 4; use++)
                    for (int mask = 0; mask < 32; mask++)
                        if (use == 0 || use == 3 || mask == 31)
                            run_backward(c, &p, use, mask, exact_ws, want_ex(c, &p, first, use, mask));
            } else if (first) {
                for (int use = 0; use < 4; use++) run_backward(c, &p, use, 31, exact_ws, want_ex(c, &p, first, use, 31));
                static const int masks[] = {0, 1, 8 | 16, 2 | 4 | 16, 1 | 8};
                for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++)
                    run_backward(c, &p, 0, masks[k], exact_ws, want_ex(c, &p, first, 0, masks[k]));
            } else {
                run_backward(c, &p, 3, 31, exact_ws, want_ex(c, &p, first, 3, 31));
                run_backward(c, &p, 0, 31, exact_ws, want_ex(c, &p, first, 0, 31));
            }
        }
    }
    check_determinism(c, &p, c->dev && ex_reads_y(&p, 0, allowed_grads(c)));
    if (c->s.M == 0) check_empty_with_nulls(c, &p);
    /* what AUTO ran: "fused", "unfused", or "forward/backward" where they differ */
    char resolved[32] = "";
    if (strat == LNL_STRATEGY_AUTO) {
        const lnl_strategy fw = lnl_resolve_strategy(&p), bw = lnl_resolve_backward_strategy(&p);
        snprintf(resolved, sizeof resolved, fw == bw ? "%s" : "%s/%s", tu_strategy_name(fw),
                 tu_strategy_name(bw));
    }
    printf("%s %s %s: y %.1e mean %.1e rstd %.1e ln_out %.1e | dx %.1e dlnw %.1e dlnb %.1e dW %.1e db %.1e\n",
           tu_failed == failed_before ? "ok  " : "FAIL", c->tag, resolved,
           c->maxerr[0], c->maxerr[1], c->maxerr[2], c->maxerr[3], c->maxerr[4], c->maxerr[5],
           c->maxerr[6], c->maxerr[7], c->maxerr[8]);
    fflush(stdout);
}

/* The table's dtypes: the four, and bf16 and f16 with ln_float32 (float32 x, its
 * parameters and their gradients; torch.autocast's split). */
static const struct {
    lnl_dtype dt;
    int lnf32;
    const char *name; /* for --dtype */
} variants[] = {{LNL_DTYPE_F32, 0, "f32"},       {LNL_DTYPE_F64, 0, "f64"},
                {LNL_DTYPE_BF16, 0, "bf16"},     {LNL_DTYPE_F16, 0, "f16"},
                {LNL_DTYPE_BF16, 1, "bf16-lnf32"}, {LNL_DTYPE_F16, 1, "f16-lnf32"}};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

int main(int argc, char **argv) {
    /* --no-auto: AUTO's rows left out. AUTO runs FUSED's or UNFUSED's kernels on the same
     * case (each strategy's own row runs them too), so a sanitizer learns nothing new from
     * it; tests/gpu/run.sh's racecheck steps use this to stay inside their time limit. */
    int dev = 0, quick = 0, big = 0, no_auto = 0;
    /* --strategy: that strategy's rows only (run.sh splits bf16's racecheck in two) */
    int only_strategy = -1;
    const char *only_dtype = NULL; /* --dtype: run one dtype (tests/gpu/run.sh's initcheck step) */
    long long only_shape[3] = {-1, -1, -1}; /* --shape: the table's rows of that shape only */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            const char *d = argv[++i];
            if (!strcmp(d, "cuda")) dev = 1;
            else if (strcmp(d, "cpu")) {
                fprintf(stderr, "unknown device %s\n", d);
                return 2;
            }
        } else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--no-auto")) {
            no_auto = 1;
        } else if (!strcmp(argv[i], "--big")) {
            big = 1;
        } else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            only_dtype = argv[++i];
            int known = 0;
            for (size_t v = 0; v < N_VARIANTS; v++) known |= !strcmp(only_dtype, variants[v].name);
            if (!known) {
                fprintf(stderr, "unknown dtype %s\n", only_dtype);
                return 2;
            }
        } else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) {
            const char *st = argv[++i];
            only_strategy = !strcmp(st, "fused")       ? LNL_STRATEGY_FUSED
                            : !strcmp(st, "unfused")   ? LNL_STRATEGY_UNFUSED
                            : !strcmp(st, "reference") ? LNL_STRATEGY_REFERENCE
                            : !strcmp(st, "auto")      ? LNL_STRATEGY_AUTO
                                                       : -2;
            if (only_strategy == -2) {
                fprintf(stderr, "unknown strategy %s\n", st);
                return 2;
            }
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (sscanf(argv[++i], "%lld,%lld,%lld", &only_shape[0], &only_shape[1], &only_shape[2]) != 3) {
                fprintf(stderr, "--shape wants M,K,N, got %s\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr,
                    "usage: %s [--device cpu|cuda] [--quick] [--no-auto] [--big]\n"
                    "          [--dtype f32|f64|bf16|f16|bf16-lnf32|f16-lnf32]\n"
                    "          [--strategy auto|fused|unfused|reference] [--shape M,K,N]\n",
                    argv[0]);
            return 2;
        }
    }
    const char *isa = getenv("LNL_CPU_ISA");
    printf("test_table: device %s%s%s%s%s, LNL_CPU_ISA=%s\n", dev ? "cuda" : "cpu", quick ? " --quick" : "",
           big ? " --big" : "", only_dtype ? " --dtype " : "", only_dtype ? only_dtype : "",
           isa ? isa : "(unset)");
    if (dev) {
        const char *msg = "";
        if (cu_init(&msg) != 0) {
            fprintf(stderr, "--device cuda: %s\n", msg);
            tu_expect(0, "CUDA runtime unavailable: %s", msg);
            return tu_finish();
        }
    }
    if (big) {
        if (!dev) {
            fprintf(stderr, "--big needs --device cuda\n");
            return 2;
        }
        table_run_big_cuda();
        return tu_finish();
    }
    static const lnl_strategy strats[] = {LNL_STRATEGY_REFERENCE, LNL_STRATEGY_UNFUSED,
                                          LNL_STRATEGY_FUSED, LNL_STRATEGY_AUTO};
    int supported[N_VARIANTS][4], any[N_VARIANTS];
    for (size_t di = 0; di < N_VARIANTS; di++) {
        any[di] = 0;
        if (only_dtype && strcmp(only_dtype, variants[di].name)) continue;
        for (size_t k = 0; k < 4; k++) {
            lnl_problem p;
            memset(&p, 0, sizeof p);
            p.rows = 1;
            p.in_features = p.out_features = 1;
            p.eps = 1e-5;
            p.dtype = variants[di].dt;
            p.ln_float32 = variants[di].lnf32;
            p.device = dev ? LNL_DEVICE_CUDA : LNL_DEVICE_CPU;
            p.strategy = strats[k];
            lnl_status st = lnl_check(&p);
            supported[di][k] = st != LNL_STATUS_UNSUPPORTED;
            any[di] |= supported[di][k];
            if (!supported[di][k])
                printf("skip %s %s %s: lnl_check says UNSUPPORTED (%s)\n", dev ? "cuda" : "cpu",
                       variants[di].name, tu_strategy_name(strats[k]), lnl_last_error());
        }
    }
    int shapes_run = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        if (quick && !(shapes[si].flags & F_QUICK)) continue;
        if (only_shape[0] >= 0 && (shapes[si].M != only_shape[0] || shapes[si].K != only_shape[1] ||
                                   shapes[si].N != only_shape[2]))
            continue;
        shapes_run++;
        for (size_t di = 0; di < N_VARIANTS; di++) {
            const lnl_dtype dt = variants[di].dt;
            if (!any[di]) continue;
            if ((shapes[si].flags & F_HOPPER) &&
                (!dev || (dt != LNL_DTYPE_BF16 && dt != LNL_DTYPE_F16)))
                continue;
            if ((shapes[si].flags & F_GPU) && !dev) continue;
            if ((shapes[si].flags & F_CPU) && dev) continue;
            tcase c;
            case_setup(&c, &shapes[si], dt, variants[di].lnf32, dev, 1000 * si + di + 1);
            /* the library reads these on each call; the caller's own settings come back after */
            env_override split, pingpong, bn, dx_form, cluster, dx_grid, dx_cluster;
            env_set(&split, "LNL_CUDA_SPLIT_STATS_MIN_K", "0", shapes[si].flags & F_SPLIT);
            env_set(&pingpong, "LNL_CUDA_PINGPONG_MAX_K", "65536", shapes[si].flags & F_PINGPONG);
            env_set(&bn, "LNL_CUDA_SM90_BN", shapes[si].flags & F_BN128 ? "128" : "192",
                    shapes[si].flags & (F_BN192 | F_BN128));
            env_set(&dx_form, "LNL_CUDA_DX_FORM", shapes[si].flags & F_DX_XS3 ? "2" : "0",
                    shapes[si].flags & (F_DX_COOP | F_DX_XS3));
            env_set(&dx_grid, "LNL_CUDA_DX_GRID", "5", shapes[si].flags & F_DX_FEW_CTAS);
            env_set(&dx_cluster, "LNL_CUDA_DX_CLUSTER", "1", shapes[si].flags & F_DX_CLUSTER);
            env_set(&cluster, "LNL_CUDA_SM90_CLUSTER", shapes[si].flags & F_CLUSTER ? "1" : "0",
                    shapes[si].flags & (F_CLUSTER | F_NO_CLUSTER));
            for (size_t k = 0; k < 4; k++)
                if (supported[di][k] && !(no_auto && strats[k] == LNL_STRATEGY_AUTO) &&
                    (only_strategy < 0 || strats[k] == (lnl_strategy)only_strategy))
                    run_case(&c, strats[k]);
            env_restore(&dx_cluster);
            env_restore(&dx_grid);
            env_restore(&cluster);
            env_restore(&dx_form);
            env_restore(&bn);
            env_restore(&pingpong);
            env_restore(&split);
            case_teardown(&c);
        }
    }
    if (only_shape[0] >= 0)
        tu_expect(shapes_run > 0, "--shape %lld,%lld,%lld: no such row in the table%s", only_shape[0],
                  only_shape[1], only_shape[2], quick ? " (with --quick)" : "");
    return tu_finish();
}
