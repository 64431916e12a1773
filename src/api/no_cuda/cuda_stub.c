/* The CUDA backend's entry points in a build without nvcc: every CUDA problem is
 * UNSUPPORTED, so callers and tests can skip cleanly. */
#include "internal.h"

lnl_status lnl_cuda_check(const lnl_problem *p) {
    (void)p;
    return lnl_set_error(LNL_STATUS_UNSUPPORTED,
                         "device: LNL_DEVICE_CUDA is not available in this build (no CUDA backend)");
}
lnl_strategy lnl_cuda_auto_strategy(const lnl_problem *p, int backward) {
    return (void)p, (void)backward, LNL_STRATEGY_UNFUSED;
}
size_t lnl_cuda_forward_workspace_size(const lnl_problem *p) { return (void)p, 0; }
size_t lnl_cuda_backward_workspace_size(const lnl_problem *p) { return (void)p, 0; }
int lnl_cuda_backward_wants_y(const lnl_problem *p) { return (void)p, 0; }
lnl_status lnl_cuda_forward(const lnl_fwd_args *a) { return lnl_cuda_check(&a->p); }
lnl_status lnl_cuda_backward(const lnl_bwd_args *a) { return lnl_cuda_check(&a->p); }
