/* The portable half of the GEMM engine: blocking loops and thread split, written
 * once; the ISA-specific half is the micro-kernel behind lnl_cpu_isa. */
#include "gemm.h"
#include "half.h"

size_t lnl_gemm_thread_ws(const lnl_blocking *b, size_t elem, int64_t m, int64_t n, int64_t k) {
    int64_t kc = k < b->kc ? k : b->kc;
    int64_t mc = m < b->mc ? m : b->mc;
    int64_t nc = n < b->nc ? n : b->nc;
    mc = (mc + b->mr - 1) / b->mr * b->mr;
    nc = (nc + b->nr - 1) / b->nr * b->nr;
    if (kc < 1) kc = 1;
    return lnl_ws_round((size_t)(mc * kc) * elem) + lnl_ws_round((size_t)(kc * nc) * elem);
}

#define T float
#define TP float
#define GEMM_T lnl_gemm_f32
#define KPAD(kc) (kc)
#define SUF f32
#define BLK blk_f32
#define UKR ukr_f32
#define PACK_A pack_a_f32
#define PACK_B pack_b_f32
#define HALF_PACK 1
#define KERNEL16 0
#define UKR_CALL(kc, a, b, c, ldc, acc, bias, c16) isa->UKR(kc, a, b, c, ldc, acc, bias)
#include "gemm_loop_tmpl.h"
#undef T
#undef TP
#undef GEMM_T
#undef KPAD
#undef SUF
#undef BLK
#undef UKR
#undef PACK_A
#undef PACK_B
#undef HALF_PACK
#undef KERNEL16
#undef UKR_CALL

#define T double
#define TP double
#define GEMM_T lnl_gemm_f64
#define KPAD(kc) (kc)
#define SUF f64
#define BLK blk_f64
#define UKR ukr_f64
#define PACK_A pack_a_f64
#define PACK_B pack_b_f64
#define HALF_PACK 0
#define KERNEL16 0
#define UKR_CALL(kc, a, b, c, ldc, acc, bias, c16) isa->UKR(kc, a, b, c, ldc, acc, bias)
#include "gemm_loop_tmpl.h"
#undef T
#undef TP
#undef GEMM_T
#undef KPAD
#undef SUF
#undef BLK
#undef UKR
#undef PACK_A
#undef PACK_B
#undef HALF_PACK
#undef KERNEL16
#undef UKR_CALL

/* bf16 panels (the AVX-512 BF16 kernel): float C, depth padded to pairs. */
#define T float
#define TP uint16_t
#define GEMM_T lnl_gemm_f32
#define KPAD(kc) (((kc) + 1) & ~(int64_t)1)
#define SUF bf16
#define BLK blk_bf16
#define UKR ukr_bf16
#define PACK_A pack_a_bf16
#define PACK_B pack_b_bf16
#define HALF_PACK 0
#define KERNEL16 1
#define UKR_CALL(kc, a, b, c, ldc, acc, bias, c16) isa->UKR(kc, a, b, c, ldc, acc, bias, c16)
#include "gemm_loop_tmpl.h"
#undef T
#undef TP
#undef GEMM_T
#undef KPAD
#undef SUF
#undef BLK
#undef UKR
#undef PACK_A
#undef PACK_B
#undef HALF_PACK
#undef KERNEL16
#undef UKR_CALL
