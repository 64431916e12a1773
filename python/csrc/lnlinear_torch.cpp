// The PyTorch adapter of liblnlinear in C++: a torch::autograd::Function whose forward
// calls lnl_forward and whose backward calls lnl_backward_ex, registered as the op
// lnlinear_cpp::layernorm_linear. It is the eager fast path's node (python/lnlinear/
// _cpp.py loads it): the forward is one C++ call from Python, and the backward runs in
// the autograd engine's thread without Python, so it never waits for the GIL.
//
// It does what ops.py's forward_body/backward_body do for LayerNormLinearFunction, with
// the same saved tensors, pointers and workspaces, so both paths give bitwise the same
// results (tests/python/test_cpp_autograd.py). The op checks its tensor operands itself
// (operands_ok, below; Python's check_operands gives the message); eps, keep_ln_out and
// strategy are checked in Python before the call.
//
// liblnlinear is not linked: Python hands over the addresses of the functions of the
// library it loaded with ctypes (lnlinear_cpp::bind), so both paths call one library,
// the one LNLINEAR_LIBRARY names in tests. Narrow includes (no torch/torch.h) keep the
// compile time down; no Python.h, so the build needs no Python headers.

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "lnlinear.h"

// Named (not anonymous): the node's name, which tests and profilers show, is
// torch::autograd::CppNode<lnlinear_torch::LayerNormLinearFn>.
namespace lnlinear_torch {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// ---- the library's functions, as Python's ctypes loaded them ----

struct Lib {
    decltype(&lnl_forward) forward;
    decltype(&lnl_backward_ex) backward_ex;
    decltype(&lnl_forward_workspace_size) forward_workspace_size;
    decltype(&lnl_backward_workspace_size) backward_workspace_size;
    decltype(&lnl_last_error) last_error;
    decltype(&lnl_status_string) status_string;
    decltype(&lnl_backward_wants_y) backward_wants_y;
};

// Published once by bind() before any call (ops are registered at load, bound right
// after by the same import); a table replaced by a second bind is left alive because a
// call on another thread may still be reading it.
std::atomic<const Lib *> g_lib{nullptr};

const Lib &lib() {
    const Lib *l = g_lib.load(std::memory_order_acquire);
    TORCH_CHECK(l, "lnlinear_cpp: the library's functions were never bound (lnlinear_cpp::bind)");
    return *l;
}

void clear_answers(); // below: the per-problem answers of the previous table

void bind(std::vector<int64_t> addresses) {
    TORCH_CHECK_VALUE(addresses.size() == 7, "lnlinear_cpp::bind takes 7 addresses, got ",
                      addresses.size());
    for (int64_t a : addresses)
        TORCH_CHECK_VALUE(a != 0, "lnlinear_cpp::bind: a NULL address");
    auto *l = new Lib;
    auto fn = [&](int i, auto &slot) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
            static_cast<uintptr_t>(addresses[i]));
    };
    fn(0, l->forward);
    fn(1, l->backward_ex);
    fn(2, l->forward_workspace_size);
    fn(3, l->backward_workspace_size);
    fn(4, l->last_error);
    fn(5, l->status_string);
    fn(6, l->backward_wants_y);
    g_lib.store(l, std::memory_order_release);
    clear_answers();
}

// A failed status as the exception Python's _clib.check raises, with the same text:
// "<what> failed (<status name>): <lnl_last_error()>". Must run on the calling thread
// right after the failed call (the message is per thread). torch turns c10::ValueError
// into ValueError and c10::NotImplementedError into NotImplementedError; python/
// lnlinear/_cpp.py maps a forward's error to the package's own classes by its name.
[[noreturn]] void raise_status(lnl_status status, const char *what) {
    const Lib &l = lib();
    const char *msg = l.last_error();
    std::string text = std::string(what) + " failed (" + l.status_string(status) + ")";
    if (msg && *msg) text += std::string(": ") + msg;
    switch (status) {
    case LNL_STATUS_INVALID_ARGUMENT:
        TORCH_CHECK_VALUE(false, text);
    case LNL_STATUS_UNSUPPORTED:
        TORCH_CHECK_NOT_IMPLEMENTED(false, text);
    case LNL_STATUS_OUT_OF_MEMORY:
        TORCH_CHECK_WITH(OutOfMemoryError, false, text);
    default:
        TORCH_CHECK(false, text);
    }
}

// ---- the problem, the device and the stream ----

lnl_dtype lnl_dtype_of(at::ScalarType t) {
    switch (t) {
    case at::kFloat:
        return LNL_DTYPE_F32;
    case at::kDouble:
        return LNL_DTYPE_F64;
    case at::kBFloat16:
        return LNL_DTYPE_BF16;
    case at::kHalf:
        return LNL_DTYPE_F16;
    default:
        TORCH_CHECK_VALUE(false, "lnlinear_cpp: unsupported dtype ", t);
    }
}

// The lnl_problem of x [M, K] with N outputs and the linear in dtype gd, as ops.py's
// _call_for builds it: ln_float32 where gd is not x's dtype (the mix, ops.mixed_ok); the
// current stream of x's GPU (asked through c10's device-guard registry, so this file
// needs neither CUDA headers nor c10_cuda), or torch's intra-op thread count on the CPU
// so torch.set_num_threads governs both.
lnl_problem problem_of(const at::Tensor &x, int64_t N, at::ScalarType gd, double eps,
                       int64_t strategy) {
    lnl_problem p;
    std::memset(&p, 0, sizeof p);
    p.rows = x.size(0);
    p.in_features = x.size(1);
    p.out_features = N;
    p.eps = eps;
    p.dtype = lnl_dtype_of(gd);
    p.ln_float32 = gd != x.scalar_type();
    p.strategy = static_cast<lnl_strategy>(strategy);
    const c10::Device dev = x.device();
    if (dev.is_cuda()) {
        p.device = LNL_DEVICE_CUDA;
        p.stream = c10::impl::getDeviceGuardImpl(dev.type())->getStream(dev).native_handle();
    } else {
        TORCH_CHECK_VALUE(dev.is_cpu(), "lnlinear_cpp: x is on ", dev, "; only cpu and cuda");
        p.device = LNL_DEVICE_CPU;
        p.threads = at::get_num_threads();
    }
    return p;
}

// ---- workspaces ----

// Workspace sizes and lnl_backward_wants_y per problem, as ops.py's _calls keeps them:
// asking the library validates the whole problem each time. Cleared past 512 problems,
// and by bind (another table's functions may answer otherwise).
struct ProblemKey {
    lnl_problem p;
    bool operator==(const ProblemKey &o) const { return std::memcmp(&p, &o.p, sizeof p) == 0; }
};
struct ProblemHash {
    size_t operator()(const ProblemKey &k) const {
        size_t h = std::hash<int64_t>()(k.p.rows);
        for (int64_t v :
             {k.p.in_features, k.p.out_features, int64_t(k.p.dtype), int64_t(k.p.strategy),
              int64_t(k.p.threads), int64_t(reinterpret_cast<uintptr_t>(k.p.stream)),
              int64_t(k.p.ln_float32)})
            h = h * 1000003u ^ std::hash<int64_t>()(v);
        return h ^ std::hash<double>()(k.p.eps);
    }
};

enum Query { kForwardWorkspace, kBackwardWorkspace, kBackwardWantsY, kQueries };

std::mutex g_sizes_mutex;
std::unordered_map<ProblemKey, size_t, ProblemHash> g_sizes[kQueries];

void clear_answers() {
    std::lock_guard<std::mutex> g(g_sizes_mutex);
    for (auto &m : g_sizes) m.clear();
}

// The library's answer to one of the Query questions about p, cached.
size_t ask(const lnl_problem &p, Query which) {
    ProblemKey key;
    std::memset(&key.p, 0, sizeof key.p); // padding bytes compare equal
    key.p.rows = p.rows;
    key.p.in_features = p.in_features;
    key.p.out_features = p.out_features;
    key.p.eps = p.eps;
    key.p.dtype = p.dtype;
    key.p.device = p.device;
    key.p.strategy = p.strategy;
    key.p.threads = p.threads;
    key.p.stream = p.stream;
    key.p.ln_float32 = p.ln_float32;
    {
        std::lock_guard<std::mutex> g(g_sizes_mutex);
        auto it = g_sizes[which].find(key);
        if (it != g_sizes[which].end()) return it->second;
    }
    const Lib &l = lib();
    size_t n = which == kForwardWorkspace    ? l.forward_workspace_size(&p)
               : which == kBackwardWorkspace ? l.backward_workspace_size(&p)
                                             : size_t(l.backward_wants_y(&p) == 1);
    std::lock_guard<std::mutex> g(g_sizes_mutex);
    if (g_sizes[which].size() >= 512) g_sizes[which].clear();
    g_sizes[which].emplace(key, n);
    return n;
}

// Whether `stream` is being captured into a CUDA graph, asked of the CUDA driver torch
// has loaded (found with dlopen's RTLD_NOLOAD: nothing is loaded here, and no CUDA
// library is linked). When the driver cannot be asked, the answer is "capturing", so
// the caller takes the uncached way, which is always safe.
bool stream_capturing(void *stream) {
    using is_capturing_fn = int (*)(void *, int *); // cuStreamIsCapturing(CUstream, status*)
    static const is_capturing_fn fn = []() -> is_capturing_fn {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        return h ? reinterpret_cast<is_capturing_fn>(dlsym(h, "cuStreamIsCapturing")) : nullptr;
    }();
    int status = 0; // CU_STREAM_CAPTURE_STATUS_NONE
    if (!fn || fn(stream, &status) != 0) return true;
    return status != 0;
}

// Small CUDA workspaces kept per (device, stream) and reused, as ops.py's _workspace does
// (its comment says why that is safe and when it is not: big workspaces and graph
// capture allocate per call). Separate from Python's cache: a stream used by both paths
// holds two.
constexpr size_t kWsCacheMax = size_t(64) << 20;
std::mutex g_ws_mutex;
std::map<std::pair<int, uintptr_t>, at::Tensor> g_ws_cache;

// The cache's contents as flat (device, stream, data address) triples, for the tests
// that check which calls reuse a workspace and which must not (test_cuda_streams.py).
std::vector<int64_t> cached_workspaces() {
    std::lock_guard<std::mutex> g(g_ws_mutex);
    std::vector<int64_t> out;
    for (const auto &[key, ws] : g_ws_cache) {
        out.push_back(key.first);
        out.push_back(static_cast<int64_t>(key.second));
        out.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(ws.data_ptr())));
    }
    return out;
}

// CPU workspaces kept per calling thread, as ops.py's _cpu_ws (its comment gives the
// measurement): a fresh one is fresh pages, faulted in as they are first written.
constexpr size_t kCpuWsCacheMax = size_t(256) << 20;

at::Tensor workspace(const lnl_problem &p, int which, const c10::Device &dev, size_t *nbytes) {
    *nbytes = ask(p, which == 0 ? kForwardWorkspace : kBackwardWorkspace);
    if (*nbytes == 0) return at::Tensor();
    auto opts = at::TensorOptions().dtype(at::kByte).device(dev);
    const int64_t n = static_cast<int64_t>(*nbytes);
    if (dev.is_cpu() && *nbytes <= kCpuWsCacheMax) {
        thread_local at::Tensor cpu_ws; // one library call at a time per thread
        if (!cpu_ws.defined() || cpu_ws.numel() < n) cpu_ws = at::empty({n}, opts);
        return cpu_ws;
    }
    if (!dev.is_cuda() || *nbytes > kWsCacheMax || stream_capturing(p.stream))
        return at::empty({n}, opts);
    const std::pair<int, uintptr_t> key{dev.index(), reinterpret_cast<uintptr_t>(p.stream)};
    std::lock_guard<std::mutex> g(g_ws_mutex);
    at::Tensor &ws = g_ws_cache[key];
    if (!ws.defined() || ws.numel() < n) ws = at::empty({n}, opts);
    return ws; // a reference held for the call: a later replacement cannot free it early
}

void *ptr(const at::Tensor &t) {
    return t.defined() ? t.data_ptr() : nullptr;
}
at::Tensor contig(const std::optional<at::Tensor> &t) {
    return t.has_value() && t->defined() ? t->contiguous() : at::Tensor();
}
at::Tensor contig(const at::Tensor &t) {
    return t.defined() ? t.contiguous() : at::Tensor();
}

// mean/rstd in the accumulation type, as F.layer_norm returns them: float32 for float32,
// bf16 and f16 (CPU and CUDA alike), float64 for float64.
at::ScalarType acc_type(at::ScalarType t) {
    return t == at::kDouble ? at::kDouble : at::kFloat;
}

// ---- forward and backward bodies ----

struct ForwardOut {
    at::Tensor y, mean, rstd, ln_out;
};

// ops.forward_body(..., check=False, lean=True, stats=stats): mean/rstd only when stats,
// ln_out only when kept.
ForwardOut forward_body(const at::Tensor &x_in, const std::optional<at::Tensor> &ln_weight_in,
                        const std::optional<at::Tensor> &ln_bias_in,
                        const at::Tensor &linear_weight_in,
                        const std::optional<at::Tensor> &linear_bias_in, double eps,
                        bool keep_ln_out, int64_t strategy, bool stats) {
    TORCH_CHECK_VALUE(x_in.dim() == 2, "lnlinear_cpp: x must be [M, K], got ", x_in.sizes());
    at::Tensor x = x_in.contiguous(), lnw = contig(ln_weight_in), lnb = contig(ln_bias_in);
    at::Tensor w = linear_weight_in.contiguous(), b = contig(linear_bias_in);
    const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
    const c10::Device dev = x.device();
    const at::ScalarType gd = w.scalar_type(); // y's and ln_out's (x's but in a mixed call)
    ForwardOut o;
    o.y = at::empty({M, N}, x.options().dtype(gd));
    if (stats) {
        auto acc = x.options().dtype(acc_type(gd));
        o.mean = at::empty({M}, acc);
        o.rstd = at::empty({M}, acc);
    }
    if (keep_ln_out) o.ln_out = at::empty({M, K}, x.options().dtype(gd));
    if (M == 0) return o;
    // The library works on the current device: make x's current for the call.
    c10::OptionalDeviceGuard guard;
    if (dev.is_cuda()) guard.reset_device(dev);
    lnl_problem p = problem_of(x, N, gd, eps, strategy);
    size_t ws_bytes = 0;
    at::Tensor ws = workspace(p, 0, dev, &ws_bytes);
    lnl_status st =
        lib().forward(&p, x.data_ptr(), ptr(lnw), ptr(lnb), w.data_ptr(), ptr(b), o.y.data_ptr(),
                      ptr(o.mean), ptr(o.rstd), ptr(o.ln_out), ptr(ws), ws_bytes);
    if (st != LNL_STATUS_SUCCESS) raise_status(st, "lnl_forward");
    return o;
}

// backward(create_graph=True): gradients autograd can differentiate again, formed from
// ATen's own LayerNorm and linear recomputed on the saved inputs; the library's would be
// constants to autograd (python/lnlinear/double_backward.py says why, with the same ops).
// need[i]: x, ln_weight, ln_bias, linear_weight, linear_bias.
variable_list differentiable_gradients(const at::Tensor &dy, const at::Tensor &x,
                                       const at::Tensor &lnw, const at::Tensor &lnb,
                                       const at::Tensor &w, double eps, const bool need[5],
                                       bool create_graph) {
    auto opt = [](const at::Tensor &t) {
        return t.defined() ? std::optional<at::Tensor>(t) : std::optional<at::Tensor>();
    };
    // the recomputation runs in the saved dtypes, never autocast's
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const at::Tensor ln = at::layer_norm(x, {x.size(-1)}, opt(lnw), opt(lnb), eps);
    const at::Tensor y = at::linear(ln.to(w.scalar_type()), w);
    const at::Tensor inputs[4] = {x, lnw, lnb, w};
    variable_list wrt, got, out(8);
    for (int i = 0; i < 4; ++i)
        if (need[i]) wrt.push_back(inputs[i]);
    if (!wrt.empty())
        got = torch::autograd::grad({y}, wrt, {dy}, /*retain_graph=*/create_graph, create_graph,
                                    /*allow_unused=*/true);
    for (int i = 0, j = 0; i < 4; ++i)
        if (need[i]) {
            out[i] = got[j].defined() ? got[j] : at::zeros_like(inputs[i]);
            ++j;
        }
    if (need[4]) out[4] = dy.sum(0);
    return out;
}

class LayerNormLinearFn : public torch::autograd::Function<LayerNormLinearFn> {
  public:
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &x,
                              const std::optional<at::Tensor> &ln_weight,
                              const std::optional<at::Tensor> &ln_bias,
                              const at::Tensor &linear_weight,
                              const std::optional<at::Tensor> &linear_bias, double eps,
                              bool keep_ln_out, int64_t strategy) {
        ForwardOut o = forward_body(x, ln_weight, ln_bias, linear_weight, linear_bias, eps,
                                    keep_ln_out, strategy, /*stats=*/true);
        // y (and linear_bias) for the backward's dx epilogue, as ops._keeps_y decides: only
        // where lnl_backward_wants_y says the backward reads it and dx and dlinear_weight are
        // both wanted (edges: x 0, ln_weight and ln_bias where given, then linear_weight),
        // never beside a kept ln_out. y is the output itself, no copy: changing it in place
        // before the backward is autograd's version-counter error, as for any saved output.
        const int64_t w_edge = 1 + (ln_weight.has_value() && ln_weight->defined()) +
                               (ln_bias.has_value() && ln_bias->defined());
        const bool keep_y = !keep_ln_out && ctx->needs_input_grad(0) &&
                            ctx->needs_input_grad(w_edge) &&
                            ask(problem_of(x, linear_weight.size(0),
                                           linear_weight.scalar_type(), eps, strategy),
                                kBackwardWantsY) != 0;
        // What LayerNormLinearFunction saves: x, the parameters, mean, rstd, ln_out only
        // when kept, y and linear_bias only when keep_y (undefined tensors save as undefined).
        ctx->save_for_backward({x, ln_weight.value_or(at::Tensor()), ln_bias.value_or(at::Tensor()),
                                linear_weight, o.mean, o.rstd, o.ln_out,
                                keep_y ? o.y : at::Tensor(),
                                keep_y ? linear_bias.value_or(at::Tensor()) : at::Tensor()});
        ctx->saved_data["eps"] = eps;
        ctx->saved_data["strategy"] = strategy;
        ctx->saved_data["has_linear_bias"] = linear_bias.has_value() && linear_bias->defined();
        return o.y;
    }

    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &lnw = saved[1], &lnb = saved[2], &w = saved[3];
        const at::Tensor &mean = saved[4], &rstd = saved[5], &ln_out = saved[6];
        const at::Tensor &y = saved[7], &linear_bias = saved[8];
        const bool has_b = ctx->saved_data["has_linear_bias"].toBool();
        // needs_input_grad counts only the tensor inputs that were given (an absent
        // optional has no edge), in argument order.
        const bool present[5] = {true, lnw.defined(), lnb.defined(), true, has_b};
        bool need[5];
        bool any = false;
        for (size_t i = 0, edge = 0; i < 5; ++i) {
            need[i] = present[i] && ctx->needs_input_grad(edge);
            edge += present[i];
            any = any || need[i];
        }
        variable_list out(8); // one per forward argument; undefined = no gradient
        if (!any) return out;
        // grad mode is on in a backward only with create_graph; a grad_output with a
        // forward-mode tangent (level 0: a dual_level not nested in another) is
        // forward-over-reverse. Both take PyTorch's ops, which carry what the library drops.
        const bool create_graph = at::GradMode::is_enabled();
        if (create_graph || grads[0]._fw_grad(/*level=*/0).defined()) {
            at::AutoGradMode enable_grad(true); // the recomputation's graph, kept or not
            return differentiable_gradients(grads[0], x, lnw, lnb, w,
                                            ctx->saved_data["eps"].toDouble(), need, create_graph);
        }

        const at::Tensor dy = grads[0].contiguous();
        const at::Tensor xc = x.contiguous(), lnwc = contig(lnw), lnbc = contig(lnb);
        const at::Tensor wc = w.contiguous(), meanc = contig(mean), rstdc = contig(rstd);
        const at::Tensor ln_outc = contig(ln_out), yc = contig(y), lbc = contig(linear_bias);
        const int64_t M = xc.size(0), K = xc.size(1), N = wc.size(0);
        const int64_t shapes[5][2] = {{M, K}, {K, -1}, {K, -1}, {N, K}, {N, -1}};
        for (int i = 0; i < 5; ++i) {
            if (!need[i]) continue;
            std::vector<int64_t> shape{shapes[i][0]};
            if (shapes[i][1] >= 0) shape.push_back(shapes[i][1]);
            // each in its input's dtype: x's side, then the linear's (one dtype but in a
            // mixed call)
            const auto opts = i < 3 ? xc.options() : wc.options();
            // An empty batch: nothing flowed in, the parameter gradients are zero.
            out[i] = (M == 0 && i > 0) ? at::zeros(shape, opts) : at::empty(shape, opts);
        }
        if (M == 0) return out;
        const c10::Device dev = xc.device();
        c10::OptionalDeviceGuard guard;
        if (dev.is_cuda()) guard.reset_device(dev);
        lnl_problem p = problem_of(xc, N, wc.scalar_type(), ctx->saved_data["eps"].toDouble(),
                                   ctx->saved_data["strategy"].toInt());
        size_t ws_bytes = 0;
        at::Tensor ws = workspace(p, 1, dev, &ws_bytes);
        lnl_backward_args a;
        std::memset(&a, 0, sizeof a);
        a.dy = dy.data_ptr();
        a.x = xc.data_ptr();
        a.ln_weight = ptr(lnwc);
        a.ln_bias = ptr(lnbc);
        a.linear_weight = wc.data_ptr();
        a.mean = ptr(meanc);
        a.rstd = ptr(rstdc);
        a.ln_out = ptr(ln_outc);
        a.dx = ptr(out[0]);
        a.dln_weight = ptr(out[1]);
        a.dln_bias = ptr(out[2]);
        a.dlinear_weight = ptr(out[3]);
        a.dlinear_bias = ptr(out[4]);
        a.workspace = ptr(ws);
        a.workspace_bytes = ws_bytes;
        a.y = ptr(yc);
        a.linear_bias = ptr(lbc);
        lnl_status st = lib().backward_ex(&p, &a);
        if (st != LNL_STATUS_SUCCESS) raise_status(st, "lnl_backward_ex");
        return out;
    }
};

bool any_requires_grad(const at::Tensor &x, const std::optional<at::Tensor> &a,
                       const std::optional<at::Tensor> &b, const at::Tensor &w,
                       const std::optional<at::Tensor> &c) {
    auto rg = [](const std::optional<at::Tensor> &t) {
        return t.has_value() && t->defined() && t->requires_grad();
    };
    return x.requires_grad() || w.requires_grad() || rg(a) || rg(b) || rg(c);
}

// What ops.py's _operands_ok accepts, for x already [M, K]: the library trusts shapes.
// functional.py skips Python's check_operands on the way here (4.47 us on the H200's host,
// bench/cuda/host_breakdown.py, session 43; with the checks here instead, a training forward
// at 16,8,16 on a CPU took 10.1-10.2 us against 12.6-12.9, bench/python_overhead.py --paths);
// when this says no, Python's check_operands says why.
bool operands_ok(const at::Tensor &x, const std::optional<at::Tensor> &ln_weight,
                 const std::optional<at::Tensor> &ln_bias, const at::Tensor &w,
                 const std::optional<at::Tensor> &linear_bias) {
    if (!x.defined() || !w.defined() || x.dim() != 2 || w.dim() != 2) return false;
    const at::ScalarType t = x.scalar_type();
    const c10::Device dev = x.device();
    // ops.SUPPORTED_DTYPES: the CPU also takes bf16/f16 (16-bit storage, float32 arithmetic).
    const bool half = t == at::kBFloat16 || t == at::kHalf;
    const bool dtype_ok = dev.is_cpu()    ? t == at::kFloat || t == at::kDouble || half
                          : dev.is_cuda() ? t == at::kFloat || half
                                          : false;
    // ops.mixed_ok: a float32 x (and LayerNorm parameters) beside a bf16/f16 linear
    const at::ScalarType gt = w.scalar_type();
    const bool mixed_ok = t == at::kFloat && (gt == at::kBFloat16 || gt == at::kHalf);
    const int64_t K = x.size(1), N = w.size(0);
    if (!dtype_ok || K < 1 || N < 1 || w.size(1) != K || (gt != t && !mixed_ok) ||
        w.device() != dev)
        return false;
    auto vector_ok = [&](const std::optional<at::Tensor> &v, int64_t n, at::ScalarType vt) {
        return !v.has_value() || !v->defined() ||
               (v->dim() == 1 && v->size(0) == n && v->scalar_type() == vt && v->device() == dev);
    };
    return vector_ok(ln_weight, K, t) && vector_ok(ln_bias, K, t) && vector_ok(linear_bias, N, gt);
}

// y = LayerNormLinear(...): through the autograd Function when anything will be
// differentiated, else the library is asked for y alone (no node, nothing saved, no
// mean/rstd/ln_out), as functional.layernorm_linear does on the Python path.
at::Tensor layernorm_linear(const at::Tensor &x, const std::optional<at::Tensor> &ln_weight,
                            const std::optional<at::Tensor> &ln_bias,
                            const at::Tensor &linear_weight,
                            const std::optional<at::Tensor> &linear_bias, double eps,
                            bool keep_ln_out, int64_t strategy) {
    // python/lnlinear/_cpp.py recognizes this text (OperandsRejected)
    TORCH_CHECK_VALUE(operands_ok(x, ln_weight, ln_bias, linear_weight, linear_bias),
                      "lnlinear_cpp: operands rejected (lnlinear.ops.check_operands says why)");
    if (at::GradMode::is_enabled() &&
        any_requires_grad(x, ln_weight, ln_bias, linear_weight, linear_bias))
        return LayerNormLinearFn::apply(x, ln_weight, ln_bias, linear_weight, linear_bias, eps,
                                        keep_ln_out, strategy);
    return forward_body(x, ln_weight, ln_bias, linear_weight, linear_bias, eps, false, strategy,
                        /*stats=*/false)
        .y;
}

} // namespace lnlinear_torch

// A namespace of its own: torch.ops.lnlinear holds the Python custom ops that
// torch.compile, export and functorch trace; this op is for plain eager calls only.
TORCH_LIBRARY(lnlinear_cpp, m) {
    m.def("bind(int[] addresses) -> ()", &lnlinear_torch::bind);
    m.def("cached_workspaces() -> int[]", &lnlinear_torch::cached_workspaces);
    m.def("layernorm_linear(Tensor x, Tensor? ln_weight, Tensor? ln_bias, Tensor linear_weight, "
          "Tensor? linear_bias, float eps, bool keep_ln_out, int strategy) -> Tensor");
}

// CompositeImplicitAutograd: the kernel runs once, above autograd, and builds its own
// node (LayerNormLinearFn), so one dispatcher hop serves every device. Autograd plus
// CPU/CUDA kernels would cost a second hop (the redispatch below autograd) and make the
// op look traceable although it has no fake kernel: tracing systems must use
// lnlinear::forward instead, and Python sends them there (ops.eager_fast_path_ok).
TORCH_LIBRARY_IMPL(lnlinear_cpp, CompositeImplicitAutograd, m) {
    m.impl("layernorm_linear", &lnlinear_torch::layernorm_linear);
}
