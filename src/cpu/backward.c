/* CPU backward for FUSED and UNFUSED. */
#include "cpu.h"
#include "gemm.h"
#include "ln_rows.h"

#define T float
#define SUF f32
#include "backward_tmpl.h"
#undef T
#undef SUF

#define T double
#define SUF f64
#include "backward_tmpl.h"
#undef T
#undef SUF
