/* Picks the micro-kernels once per process: the best the CPU supports, lowered
 * (never raised) by LNL_CPU_ISA=scalar|avx2|avx512|avx512bf16 so tests can exercise
 * every kernel on one host. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "half.h"
#include "ln_rows.h"

/* Blocking: a kc x nr sliver of B stays in L1, mc x kc of A in L2, kc x nc of B in L3.
 * AVX2 f32: 144/384 on Zen 3 (32 KiB L1d, 512 KiB L2): the 24 KiB B sliver still fits
 * L1, and K=4096 takes 11 instead of 16 passes over C (+4.5% at M=1024 K=N=4096 on 2
 * threads, neutral at K=768; mc 96/120/192 and kc 320 measured no better).
 * AVX-512: a sweep on a 2-core slice of a Xeon (48 KiB L1d, 2 MiB L2) over mc in {96..480}, kc in {192..512} put
 * 480/384 first (189 vs 124 GFLOP/s at 144/256, fused forward M=2048 K=N=768); on Zen 4
 * (32 KiB L1d, 1 MiB L2) kc 192 or 256 measured up to 11% slower, and kc 512 or mc 336
 * no different (bench/cpu_ab.py), so it stays.
 * The row passes (tiny forward and backward, statistics, the backward's one-visit row pass) are the
 * AVX2 ones in both tables: on Zen 4 the portable ones made the 16,8,16 forward 3x slower
 * (1.19 vs 0.40 us) and the 4096,4096,256 backward ~6% slower; on session 6's Xeon the
 * two measured the same. */
static const lnl_cpu_isa isa_scalar = {
    "scalar", lnl_ukr_f32_scalar, {4, 4, 64, 256, 1024}, lnl_ukr_f64_scalar, {4, 4, 64, 256, 1024},
    lnl_pack_a_f32, lnl_pack_b_f32, lnl_pack_a_f64, lnl_pack_b_f64, NULL, NULL, lnl_ln_stats_f32,
    NULL, NULL, lnl_half_to_f32_row, lnl_f32_to_half_row, NULL, NULL, {0}, NULL, NULL};
static const lnl_cpu_isa isa_avx2 = {
    "avx2", lnl_ukr_f32_avx2, {6, 16, 144, 384, 4080}, lnl_ukr_f64_avx2, {6, 8, 96, 256, 2040},
    lnl_pack_a_f32_avx2, lnl_pack_b_f32_avx2, lnl_pack_a_f64, lnl_pack_b_f64,
    lnl_cpu_small_forward_f32_avx2, lnl_cpu_small_backward_f32_avx2, lnl_ln_stats_f32_avx2,
    lnl_ln_dx_colsums_f32_avx2, lnl_ln_dx_colsums_half_avx2, lnl_half_to_f32_row_avx2,
    lnl_f32_to_half_row_avx2, lnl_pack_b_half_avx2, NULL, {0}, NULL, NULL};
static const lnl_cpu_isa isa_avx512 = {
    "avx512", lnl_ukr_f32_avx512, {12, 32, 480, 384, 3072}, lnl_ukr_f64_avx512, {12, 16, 240, 256, 3072},
    lnl_pack_a_f32_avx2, lnl_pack_b_f32_avx2, lnl_pack_a_f64, lnl_pack_b_f64,
    lnl_cpu_small_forward_f32_avx2, lnl_cpu_small_backward_f32_avx2, lnl_ln_stats_f32_avx2,
    lnl_ln_dx_colsums_f32_avx2, lnl_ln_dx_colsums_half_avx2, lnl_half_to_f32_row_avx2,
    lnl_f32_to_half_row_avx2, lnl_pack_b_half_avx2, NULL, {0}, NULL, NULL};

/* AVX-512 with BF16 (Zen 4, Cooper Lake, Sapphire Rapids): bf16 problems' GEMMs on bf16
 * panels with VDPBF16PS; everything else as avx512. Its kc of 768 bf16 keeps the B sliver
 * at 48 KiB and the A block (480 x 768 x 2 bytes) within Zen 4's 1 MiB L2: on Zen 4,
 * bench/cpu_ab.py (7 rounds, bf16 FUSED forward+backward) put it 3-5% ahead of 384 at
 * 2048,768,3072 and 1024,4096,4096 (512 between them); 1024 with mc 480 or 240, or mc
 * 240 at 768, measured no better at 2048,768,3072 and 4096,4096,256. */
static const lnl_cpu_isa isa_avx512bf16 = {
    "avx512bf16", lnl_ukr_f32_avx512, {12, 32, 480, 384, 3072}, lnl_ukr_f64_avx512, {12, 16, 240, 256, 3072},
    lnl_pack_a_f32_avx2, lnl_pack_b_f32_avx2, lnl_pack_a_f64, lnl_pack_b_f64,
    lnl_cpu_small_forward_f32_avx2, lnl_cpu_small_backward_f32_avx2, lnl_ln_stats_f32_avx2,
    lnl_ln_dx_colsums_f32_avx2, lnl_ln_dx_colsums_half_avx2, lnl_half_to_f32_row_avx2,
    lnl_f32_to_half_row_avx2, lnl_pack_b_half_avx2, lnl_ukr_bf16_avx512, {12, 32, 480, 768, 3072}, lnl_pack_a_bf16_avx512, lnl_pack_b_bf16_avx512};

static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static const lnl_cpu_isa *isa_chosen = &isa_scalar;

static int isa_rank(const char *name) {
    if (!name) return 99;
    if (strcmp(name, "scalar") == 0) return 0;
    if (strcmp(name, "avx2") == 0) return 1;
    if (strcmp(name, "avx512") == 0) return 2;
    if (strcmp(name, "avx512bf16") == 0) return 3;
    return 99;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/* F16C (the AVX2 tables' 16-bit conversions), from CPUID leaf 1, ECX bit 29: clang's
 * __builtin_cpu_supports does not know the name. */
static int has_f16c(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
}
#endif

static void isa_init(void) {
    int best = 0;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c()) best = 1;
    if (best == 1 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        best = 2;
    if (best == 2 && __builtin_cpu_supports("avx512bf16")) best = 3;
#endif
    int want = isa_rank(getenv("LNL_CPU_ISA"));
    int rank = want < best ? want : best;
    isa_chosen = rank == 3   ? &isa_avx512bf16
                 : rank == 2 ? &isa_avx512
                 : rank == 1 ? &isa_avx2
                             : &isa_scalar;
}

const lnl_cpu_isa *lnl_cpu_isa_get(void) {
    pthread_once(&isa_once, isa_init);
    return isa_chosen;
}

const char *lnl_cpu_isa_name(void) { return lnl_cpu_isa_get()->name; }
