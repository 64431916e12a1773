/* LayerNorm row and column kernels (statistics, apply, backward) for all strategies. */
#include <math.h>

#include "ln_rows.h"

#define LANES 16
#define CHUNK 256

#define T float
#define SUF f32
#define SQRT sqrtf
#include "ln_rows_tmpl.h"
#undef T
#undef SUF
#undef SQRT

#define T double
#define SUF f64
#define SQRT sqrt
#include "ln_rows_tmpl.h"
#undef T
#undef SUF
#undef SQRT
