"""fuse_: turn (LayerNorm, Linear) pairs of an existing model into LayerNormLinear."""

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from .module import LayerNormLinear, linear_weight_of

__all__ = ["fuse_", "FusionError"]


class FusionError(ValueError):
    """A pair cannot be fused without changing what the model computes."""


# Reading these from the LayerNorm's output stays valid after fusion (the tensor that
# then flows there, the LayerNorm's input, has the same shape, dtype and device).
_METADATA_METHODS = {"size", "dim", "__len__", "numel", "is_contiguous", "stride",
                     "is_floating_point", "get_device", "element_size", "nelement"}
_METADATA_PROPERTIES = {"shape", "dtype", "device", "ndim", "is_cuda", "layout",
                        "requires_grad", "is_leaf"}


def _is_metadata(func):
    name = getattr(func, "__name__", "")
    if name in _METADATA_METHODS:
        return True
    owner = getattr(func, "__self__", None)  # property getters arrive as descriptor.__get__
    return name == "__get__" and getattr(owner, "__name__", None) in _METADATA_PROPERTIES


def _contains(obj, target, depth=0):
    if obj is target:
        return True
    if depth > 6:
        return False
    if isinstance(obj, dict):
        return any(_contains(v, target, depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_contains(v, target, depth + 1) for v in obj)
    return False


def _locate(model, item, what):
    """(module, [(parent, attribute name, qualified name)]) for a module or a dotted name."""
    if isinstance(item, str):
        try:
            module = model.get_submodule(item)
        except AttributeError as e:
            raise ValueError(f"{what}: model has no submodule {item!r}") from e
    elif isinstance(item, nn.Module):
        module = item
    else:
        raise TypeError(f"{what} must be an nn.Module or a submodule name, got {type(item).__name__}")
    places = []
    for pname, parent in model.named_modules(remove_duplicate=False):
        # _modules, not named_children(): the latter hides a second name of one module.
        for cname, child in parent._modules.items():
            if child is module:
                places.append((parent, cname, f"{pname}.{cname}" if pname else cname))
    if not places:
        raise ValueError(f"{what} ({type(module).__name__}) is not a submodule of model")
    return module, places


def _check_fx(model, pairs):
    """Verdict from a torch.fx trace: None when the model cannot be traced."""
    leaves = {id(m) for p in pairs for m in (p[0], p[2])}

    class Tracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return id(m) in leaves or super().is_leaf_module(m, qualname)

    try:
        graph = Tracer().trace(model)
    except Exception:
        return None  # data-dependent control flow etc.: fall back to the other checks
    for ln, ln_places, lin, lin_places in pairs:
        ln_names = {q for _, _, q in ln_places}
        lin_names = {q for _, _, q in lin_places}
        for node in graph.nodes:
            if node.op != "call_module" or node.target not in ln_names:
                continue
            for user in node.users:
                ok = (user.op == "call_module" and user.target in lin_names
                      and user.args[:1] == (node,) and node not in user.args[1:]
                      and node not in user.kwargs.values())
                if not ok:
                    raise FusionError(
                        f"the output of {node.target} is also used by {user.format_node()}; "
                        f"fusing it into {sorted(lin_names)[0]} would change the model")
        for node in graph.nodes:
            if node.op == "call_module" and node.target in lin_names:
                src = node.args[0] if node.args else None
                if not (isinstance(src, torch.fx.Node) and src.op == "call_module"
                        and src.target in ln_names):
                    raise FusionError(f"{node.target} is called on something other than the "
                                      f"output of {sorted(ln_names)[0]}")
    return True


class _UseCounter(TorchFunctionMode):
    """Records torch calls that read a LayerNorm output outside its paired Linear."""

    def __init__(self, state):
        super().__init__()
        self.state = state

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        st = self.state
        if st["inside"] == 0 and st["outputs"] and not _is_metadata(func):
            for idx, t in st["outputs"].items():
                if _contains(args, t) or _contains(kwargs, t):
                    st["misuse"].setdefault(idx, getattr(func, "__name__", repr(func)))
        return func(*args, **kwargs)


def _check_run(model, pairs, example_inputs, example_kwargs):
    """Run the model once and watch every LayerNorm output of the pairs."""
    state = {"inside": 0, "outputs": {}, "misuse": {}, "bad_input": set(), "ln_calls": {},
             "lin_calls": {}}
    hooks = []
    for idx, (ln, _, lin, _) in enumerate(pairs):
        def ln_hook(mod, inp, out, idx=idx):
            state["outputs"][idx] = out
            state["ln_calls"][idx] = state["ln_calls"].get(idx, 0) + 1

        def lin_pre(mod, inp, idx=idx):
            state["inside"] += 1
            state["lin_calls"][idx] = state["lin_calls"].get(idx, 0) + 1
            if not (inp and inp[0] is state["outputs"].get(idx)):
                state["bad_input"].add(idx)
            elif any(_contains(a, inp[0]) for a in inp[1:]):
                state["misuse"].setdefault(idx, f"{type(mod).__name__} extra argument")

        def lin_post(mod, inp, out):
            state["inside"] -= 1

        hooks += [ln.register_forward_hook(ln_hook), lin.register_forward_pre_hook(lin_pre),
                  lin.register_forward_hook(lin_post)]
    try:
        with torch.no_grad(), _UseCounter(state):
            out = model(*example_inputs, **(example_kwargs or {}))
    finally:
        for h in hooks:
            h.remove()
    for idx, (ln, ln_places, lin, lin_places) in enumerate(pairs):
        ln_name, lin_name = ln_places[0][2], lin_places[0][2]
        if idx not in state["ln_calls"]:
            raise FusionError(f"{ln_name} was not called by the example forward")
        if idx in state["misuse"]:
            raise FusionError(f"the output of {ln_name} is also read by "
                              f"{state['misuse'][idx]} outside {lin_name}")
        if idx in state["bad_input"] or state["ln_calls"][idx] != state["lin_calls"].get(idx, 0):
            raise FusionError(f"{lin_name} is not called exactly once on each output of {ln_name}")
        if _contains(out, state["outputs"][idx]):
            raise FusionError(f"the output of {ln_name} is returned by the model")


def _check_untied(model, pairs):
    """Fusing copies parameters; one tied to another module (GPT-2's lm_head and wte)
    would silently come apart, so such a pair is refused."""
    owners = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        owners.setdefault(id(p), []).append(name)
    for ln, ln_places, lin, lin_places in pairs:
        prefixes = tuple(q + "." for _, _, q in ln_places + lin_places)
        for p in list(ln.parameters()) + list(lin.parameters()):
            others = [n for n in owners.get(id(p), []) if not n.startswith(prefixes)]
            if others:
                raise FusionError(f"a parameter of {lin_places[0][2]} or {ln_places[0][2]} is "
                                  f"tied to {others[0]}; fusing would untie it")


def fuse_(model, pairs, *, example_inputs=None, example_kwargs=None, recompute=True):
    """Replace each (layer_norm, linear) pair of ``model`` in place: the LayerNorm becomes
    nn.Identity and the Linear a LayerNormLinear holding copies of both modules'
    parameters. Returns ``model``.

    pairs: iterable of (layer_norm, linear), each an nn.Module inside model or its dotted
    name (e.g. "transformer.h.0.ln_1"). linear: nn.Linear, or Hugging Face's Conv1D.

    The rewrite is only correct when the LayerNorm's output is read by the paired Linear
    alone (and the Linear reads nothing else as its input). fuse_ verifies this where it
    can, and raises FusionError (a ValueError) for a pair that breaks it:
      - it tries a torch.fx trace of the model (the pairs kept as leaf modules);
      - with example_inputs (a tuple, plus optional example_kwargs), it runs the model
        once under torch.no_grad and watches every use of each LayerNorm output.
    Models that fx cannot trace (most Hugging Face models) are only checked when
    example_inputs is given; without it the caller guarantees the property above.
    Any code path not taken by the example forward is likewise the caller's to vouch
    for, as is a LayerNorm output kept in a Python attribute rather than read by torch.
    A pair whose parameters are tied to another module's is refused (copies would untie).

    The new parameters replace the old ones: create optimizers after fuse_.
    """
    resolved, seen = [], set()
    for i, pair in enumerate(pairs):
        try:
            ln_item, lin_item = pair
        except (TypeError, ValueError) as e:
            raise TypeError(f"pairs[{i}] must be a (layer_norm, linear) pair") from e
        ln, ln_places = _locate(model, ln_item, f"pairs[{i}][0]")
        lin, lin_places = _locate(model, lin_item, f"pairs[{i}][1]")
        if not isinstance(ln, nn.LayerNorm):
            raise TypeError(f"pairs[{i}][0] must be an nn.LayerNorm, got {type(ln).__name__}")
        linear_weight_of(lin)  # raises TypeError for anything not Linear-like
        for m, places in ((ln, ln_places), (lin, lin_places)):
            if id(m) in seen:
                raise FusionError(f"{places[0][2]} appears in more than one pair")
            seen.add(id(m))
            if len(places) > 1:
                raise FusionError(f"{places[0][2]} is shared (also registered as "
                                  f"{places[1][2]}); fusing it would change the other use")
        resolved.append((ln, ln_places, lin, lin_places))
    if not resolved:
        return model
    _check_untied(model, resolved)

    # Build every replacement before touching the model, so a failure leaves it intact
    # (and a shape mismatch is reported as such, before any tracing).
    fused = [LayerNormLinear.from_modules(ln, lin, recompute=recompute)
             for ln, _, lin, _ in resolved]
    _check_fx(model, resolved)
    if example_inputs is not None:
        if not isinstance(example_inputs, tuple):
            example_inputs = (example_inputs,)
        _check_run(model, resolved, example_inputs, example_kwargs)
    for (ln, ln_places, lin, lin_places), new in zip(resolved, fused):
        new.train(lin.training)
        for parent, name, _ in ln_places:
            setattr(parent, name, nn.Identity())
        for parent, name, _ in lin_places:
            setattr(parent, name, new)
    return model
