/* CPU forward for FUSED and UNFUSED (which differ only in the workspace layout:
 * UNFUSED's has an M x K ln_out that the GEMM reads back). */
#include "cpu.h"
#include "gemm.h"
#include "ln_rows.h"

#define T float
#define SUF f32
#include "forward_tmpl.h"
#undef T
#undef SUF

#define T double
#define SUF f64
#include "forward_tmpl.h"
#undef T
#undef SUF
