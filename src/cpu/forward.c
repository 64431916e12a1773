/* CPU forward for FUSED and UNFUSED (which differ only in the workspace layout:
 * UNFUSED's has an M x K ln_out that the GEMM reads back); the float instance also
 * serves bf16 and f16 storage. */
#include "cpu.h"
#include "gemm.h"
#include "half.h"
#include "ln_rows.h"

#define T float
#define SUF f32
#define STATS lnl_cpu_isa_get()->ln_stats_f32
#define HALF 1
#include "forward_tmpl.h"
#undef T
#undef SUF
#undef STATS
#undef HALF

#define T double
#define SUF f64
#define STATS lnl_ln_stats_f64
#define HALF 0
#include "forward_tmpl.h"
#undef T
#undef SUF
#undef STATS
#undef HALF
