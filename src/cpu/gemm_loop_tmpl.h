/* BLIS-style blocking loops, instantiated by gemm.c once per dtype and once for bf16
 * panels (T: C's type; TP: the panels'; GEMM_T: the problem struct; KPAD: a panel's
 * depth for kc; SUF, BLK, UKR, PACK_A, PACK_B; HALF_PACK: the float instance, whose
 * 16-bit operands are widened while packing, or handed to the bf16 instance; KERNEL16:
 * the bf16 instance, whose kernel rounds the finished sums into g->c_half itself).
 * Loop order jc (nc columns) > pc (kc depth) > ic (mc rows) > jr > ir: a packed kc x nr
 * sliver of B stays in L1 while mc x kc of A streams from L2. With g->c_half, g->c
 * holds float partial sums across depth blocks and the result is rounded once into
 * c_half: by the bf16 kernel on the last depth block, or (float instance) by each thread
 * over its own rows of a column block once that block's depth loop is done. */
#define LP_CAT_(a, b) a##b
#define LP_CAT(a, b) LP_CAT_(a, b)
#define GEMM GEMM_T

static void LP_CAT(gemm_block_, SUF)(const GEMM *g, int64_t mb, int64_t me, int64_t nb,
                                     int64_t ne, TP *pa, TP *pb, const lnl_cpu_isa *isa) {
    const lnl_blocking *bk = &isa->BLK;
    const int mr = bk->mr, nr = bk->nr;
    T edge[LNL_UKR_MAX_TILE];
    for (int64_t jc = nb; jc < ne; jc += bk->nc) {
        int64_t nc = ne - jc < bk->nc ? ne - jc : bk->nc;
        for (int64_t pc = 0; pc < g->k; pc += bk->kc) {
            int64_t kc = g->k - pc < bk->kc ? g->k - pc : bk->kc, kp = KPAD(kc);
            int acc = pc > 0;
            uint16_t *c16 = KERNEL16 && pc + kc >= g->k ? g->c_half : NULL;
#if HALF_PACK
            if (g->b_half) (isa->pack_b_half ? isa->pack_b_half : lnl_pack_b_half)(pb, g, pc, kc, jc, nc, nr);
            else
#endif
                isa->PACK_B(pb, g, pc, kc, jc, nc, nr);
            for (int64_t ic = mb; ic < me; ic += bk->mc) {
                int64_t mc = me - ic < bk->mc ? me - ic : bk->mc;
#if HALF_PACK
                if (g->a_half) lnl_pack_a_half(pa, g, ic, mc, pc, kc, mr);
                else
#endif
                    isa->PACK_A(pa, g, ic, mc, pc, kc, mr);
                for (int64_t jr = 0; jr < nc; jr += nr) {
                    int nn = (int)(nc - jr < nr ? nc - jr : nr);
                    const T *bias = (!acc && g->bias) ? g->bias + jc + jr : NULL;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        int mm = (int)(mc - ir < mr ? mc - ir : mr);
                        const int64_t at = (ic + ir) * g->ldc + jc + jr;
                        T *c = g->c + at;
                        if (mm == mr && nn == nr) {
                            UKR_CALL(kc, pa + ir * kp, pb + jr * kp, c, g->ldc, acc, bias,
                                     c16 ? c16 + at : NULL);
                            continue;
                        }
                        /* Edge: full tile into scratch, then the same combine as the kernel. */
                        UKR_CALL(kc, pa + ir * kp, pb + jr * kp, edge, nr, 0, NULL, NULL);
                        for (int i = 0; i < mm; i++)
                            for (int j = 0; j < nn; j++) {
                                T v = edge[i * nr + j];
                                T *cij = c + i * g->ldc + j;
                                v = acc ? *cij + v : bias ? v + bias[j] : v;
                                if (c16) c16[at + i * g->ldc + j] = lnl_f32_to_bf16((float)v);
                                else *cij = v;
                            }
                    }
                }
            }
        }
#if HALF_PACK
        if (g->c_half) /* this thread's rows of the finished column block */
            for (int64_t r = mb; r < me; r++)
                isa->f32_to_half(g->c_half + r * g->ldc + jc, g->c + r * g->ldc + jc, nc, g->half);
#endif
    }
}

void LP_CAT(LP_CAT(lnl_gemm_, SUF), _run)(const lnl_par *par, const GEMM *g, char *ws,
                                          size_t ws_stride) {
    const lnl_cpu_isa *isa = lnl_cpu_isa_get();
    const lnl_blocking *bk = &isa->BLK;
    if (g->m <= 0 || g->n <= 0) return;
#if HALF_PACK
    /* bf16 panels from 16-bit operands, or one of them float (x under ln_float32) */
    if (g->half == LNL_DTYPE_BF16 && (g->a_half || g->b_half) && isa->ukr_bf16) {
        lnl_gemm_bf16_run(par, g, ws, ws_stride);
        return;
    }
#endif
    /* Split the larger output dimension: each thread then repacks only the smaller
     * operand, and no reduction is ever divided between threads. */
    int64_t mb = 0, me = g->m, nb = 0, ne = g->n;
    if (g->m >= g->n) lnl_par_range(par, g->m, bk->mr, &mb, &me);
    else lnl_par_range(par, g->n, bk->nr, &nb, &ne);
    if (mb >= me || nb >= ne) return;
    char *mine = ws + (size_t)par->tid * ws_stride;
    int64_t kc = g->k < bk->kc ? g->k : bk->kc;
    int64_t mc = me - mb < bk->mc ? me - mb : bk->mc;
    mc = (mc + bk->mr - 1) / bk->mr * bk->mr;
    TP *pa = (TP *)mine;
    TP *pb = (TP *)(mine + lnl_ws_round((size_t)(mc * KPAD(kc)) * sizeof(TP)));
    LP_CAT(gemm_block_, SUF)(g, mb, me, nb, ne, pa, pb, isa);
}

#undef GEMM
#undef LP_CAT
#undef LP_CAT_
