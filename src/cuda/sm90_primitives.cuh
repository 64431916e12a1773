/* Hopper (sm_90a) building blocks as thin inline-PTX wrappers: mbarriers, the tensor
 * copy engine (TMA), wgmma group control, proxy fences and shared-memory
 * matrix descriptors. Only the sm_90a pass of nvcc emits them (LNL_SM90A); the compute_80 PTX
 * pass compiles them to nothing, and the host never launches a Hopper kernel on
 * another GPU (see fused_forward_sm90.cu). */
#ifndef LNL_SM90_PRIMITIVES_CUH
#define LNL_SM90_PRIMITIVES_CUH

#include <cuda.h> /* CUtensorMap (a plain 128-byte struct; no driver library is linked) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LNL_SM90A 1
#else
#define LNL_SM90A 0
#endif

namespace lnl {

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* ---- mbarriers (one 8-byte word in shared memory each) ---- */
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
#if LNL_SM90A
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
#endif
}
/* Makes the initialized barriers visible to the copy engine before first use. */
__device__ __forceinline__ void mbar_init_fence() {
#if LNL_SM90A
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
#if LNL_SM90A
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
#endif
}
/* Arrives and announces that `bytes` will land through the copy engine in this phase. */
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
#if LNL_SM90A
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
                 "r"(bytes)
                 : "memory");
#endif
}
/* Arrives on the barrier at bar's offset in the shared memory of cluster CTA `rank`
 * (mapa gives that CTA's address of it), with the instruction's default semantics (release,
 * CTA scope), as CUTLASS's cluster pipelines release a stage. Session 7's clusters with
 * cluster-scope arrivals and waits ran 1.6-1.7x slower than session 8's at the default
 * scope (docs/results/cuda/2026-11-30-sm90-variants.md, variants 18 and 18b). */
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *bar, uint32_t rank) {
#if LNL_SM90A
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"(smem_addr(bar)), "r"(rank));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
#endif
}
/* Blocks until the phase of parity `parity` has completed. A fresh barrier is in phase
 * 0, so waiting for parity 1 returns at once (the producer's first pass). */
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity) {
#if LNL_SM90A
    asm volatile(
        "{\n.reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(bar)),
        "r"(parity)
        : "memory");
#endif
}

/* ---- TMA: one 2-D box of a tensor map into shared memory, completing on bar ---- */
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int32_t c0,
                                            int32_t c1, uint64_t *bar) {
#if LNL_SM90A
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(dst)),
        "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
        : "memory");
#endif
}
/* tma_load_2d's box into the same shared-memory offset of every CTA of the cluster whose bit
 * is set in cta_mask, each completing on its own barrier at bar's offset. */
__device__ __forceinline__ void tma_load_2d_multicast(void *dst, const CUtensorMap *map,
                                                      int32_t c0, int32_t c1, uint64_t *bar,
                                                      uint16_t cta_mask) {
#if LNL_SM90A
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_addr(dst)),
        "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
        : "memory");
#endif
}
/* `bytes` contiguous bytes (a multiple of 16; both addresses 16-byte aligned) from global
 * memory into this CTA's shared memory through the copy engine, completing on bar. */
__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
#if LNL_SM90A
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map) {
#if LNL_SM90A
    asm volatile("prefetch.tensormap [%0];" ::"l"((uint64_t)map) : "memory");
#endif
}

/* ---- TMA stores: a 2-D box of shared memory out to a tensor map's global tensor ----
 * The copy engine reads the box asynchronously; the issuing thread commits its stores
 * as a bulk group and waits on its groups before the box's bytes are written again
 * (wait_read: the engine has read them) or before the CTA exits (wait_all). Elements
 * outside the tensor are not written. */
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, const void *src, int32_t c0,
                                             int32_t c1) {
#if LNL_SM90A
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                     (uint64_t)map),
                 "r"(smem_addr(src)), "r"(c0), "r"(c1)
                 : "memory");
#endif
}
__device__ __forceinline__ void bulk_commit() {
#if LNL_SM90A
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
/* until at most N of this thread's bulk groups still read their shared memory */
template <int N> __device__ __forceinline__ void bulk_wait_read() {
#if LNL_SM90A
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#endif
}
/* until all of this thread's bulk groups are complete (their writes done) */
__device__ __forceinline__ void bulk_wait_all() {
#if LNL_SM90A
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

/* ---- ldmatrix: stmatrix's inverse (below), four 8 x 8 matrices of 16-bit values into a
 * warp's registers in the accumulator fragment's layout; lane l gives the shared address of
 * row l % 8 of matrix l / 8 ---- */
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2,
                                            uint32_t &r3) {
#if LNL_SM90A
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
#endif
}

/* ---- stmatrix: four 8 x 8 matrices of 16-bit values from a warp's registers ----
 * Register i of lane l holds row l / 4, columns 2 (l % 4) + {0, 1} of matrix i (the
 * mma/wgmma accumulator fragment, packed in pairs); lane l gives the shared address of
 * row l % 8 of matrix l / 8. */
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
#if LNL_SM90A
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
#endif
}

/* ---- wgmma group control ---- */
/* Orders this warpgroup's register writes (accumulators, A fragments) before the
 * wgmma instructions that read them. */
__device__ __forceinline__ void wgmma_fence() {
#if LNL_SM90A
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if LNL_SM90A
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
/* Waits until at most N committed groups are still running. */
template <int N> __device__ __forceinline__ void wgmma_wait() {
#if LNL_SM90A
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}
/* Keeps the compiler from moving accumulator accesses across a wgmma wait. */
__device__ __forceinline__ void fence_regs(float &r) { asm volatile("" : "+f"(r)::"memory"); }

/* ---- register budget per warpgroup role (needs __launch_bounds__(threads, 1)) ---- */
template <int R> __device__ __forceinline__ void regs_dealloc() {
#if LNL_SM90A
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
#endif
}
template <int R> __device__ __forceinline__ void regs_alloc() {
#if LNL_SM90A
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
#endif
}

/* ---- thread-block clusters ---- */
__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t r = 0;
#if LNL_SM90A
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
    return r;
}
/* Every thread of every CTA of the cluster: what each wrote before (its barriers' init
 * included) is visible to the others after. */
__device__ __forceinline__ void cluster_sync() {
#if LNL_SM90A
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

/* Barrier `id` (1-15; 0 is __syncthreads) among `count` threads. */
__device__ __forceinline__ void named_bar_sync(int id, int count) {
#if LNL_SM90A
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
#endif
}

/* Arrives at barrier `id` without waiting: the producer side of a barrier whose other
 * threads wait in named_bar_sync with the same count. */
__device__ __forceinline__ void named_bar_arrive(int id, int count) {
#if LNL_SM90A
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
#endif
}

/* Orders this thread's earlier shared-memory stores (generic proxy) before later
 * reads of the same bytes by wgmma or TMA (async proxy). */
__device__ __forceinline__ void fence_proxy_async() {
#if LNL_SM90A
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/* ---- shared-memory matrix descriptor, K-major tile with the 128-byte swizzle ----
 * The tile is rows x 64 elements of 2 bytes, written by TMA with
 * CU_TENSOR_MAP_SWIZZLE_128B: each row is 128 bytes, 8-row groups are 1024 bytes
 * apart (the stride byte offset), and the tile starts 1024-byte aligned (base offset
 * 0). The leading byte offset is unused for swizzled K-major layouts (set to 1).
 * Stepping 16 elements along K inside the swizzle atom adds 32 bytes to the start. */
__device__ __forceinline__ uint64_t desc_kmajor_sw128(const void *tile) {
    const uint64_t addr = smem_addr(tile);
    uint64_t d = (addr & 0x3FFFFu) >> 4;    /* bits 0-13: start address / 16 */
    d |= (uint64_t)1 << 16;                  /* bits 16-29: leading byte offset / 16 */
    d |= (uint64_t)(1024 >> 4) << 32;        /* bits 32-45: stride byte offset / 16 */
    d |= (uint64_t)1 << 62;                  /* bits 62-63: 1 = 128-byte swizzle */
    return d;
}

} // namespace lnl

#endif
