/* CPU forward for FUSED and UNFUSED (which differ only in the workspace layout:
 * UNFUSED's has an M x K ln_out that the GEMM reads back). */
#include "cpu.h"
#include "gemm.h"
#include "ln_rows.h"

#define T float
#define SUF f32
#define STATS lnl_cpu_isa_get()->ln_stats_f32
#include "forward_tmpl.h"
#undef T
#undef SUF
#undef STATS

#define T double
#define SUF f64
#define STATS lnl_ln_stats_f64
#include "forward_tmpl.h"
#undef T
#undef SUF
#undef STATS
