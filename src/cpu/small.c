/* The tiny-problem path (see LNL_TINY_MAX_MNK): a forward at M=16, K=8, N=16 must
 * cost about a microsecond, so no malloc, no threads, no packing. */
#include "cpu.h"
#include "ln_rows.h"

#define T float
#define SUF f32
#include "small_tmpl.h"
#undef T
#undef SUF

#define T double
#define SUF f64
#include "small_tmpl.h"
#undef T
#undef SUF
