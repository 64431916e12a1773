/* Packs GEMM operands into micro-panels, applying the LayerNorm on the way when
 * asked: this is where the FUSED strategy forms the normalized activation. */
#include "gemm.h"

/* Bounds of the stack scratch rows: every blocking in isa_dispatch.c stays within. */
#define PACK_MAX_KC 512
#define PACK_MAX_NR 64

#define T float
#define SUF f32
#include "gemm_pack_tmpl.h"
#undef T
#undef SUF

#define T double
#define SUF f64
#include "gemm_pack_tmpl.h"
#undef T
#undef SUF
