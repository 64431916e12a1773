/* CPU backward for FUSED and UNFUSED; the float instance also serves bf16 and f16. */
#include "cpu.h"
#include "gemm.h"
#include "half.h"
#include "ln_rows.h"

#define T float
#define SUF f32
#define STATS lnl_cpu_isa_get()->ln_stats_f32
#define DX_COLSUMS lnl_cpu_isa_get()->ln_dx_colsums_f32
#define HALF 1
#include "backward_tmpl.h"
#undef T
#undef SUF
#undef STATS
#undef DX_COLSUMS
#undef HALF

#define T double
#define SUF f64
#define STATS lnl_ln_stats_f64
#define DX_COLSUMS NULL
#define HALF 0
#include "backward_tmpl.h"
#undef T
#undef SUF
#undef STATS
#undef DX_COLSUMS
#undef HALF
