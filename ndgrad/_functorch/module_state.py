"""Modules as functions of their state: ``functional_call`` (run a module with other tensors
in place of its parameters and buffers), ``stack_module_state`` (the stacked state of an
ensemble of same-shaped modules, for ``vmap`` over ``functional_call``) and
``replace_all_batch_norm_modules_`` (batch norms without running statistics, for ``vmap``).

Invariant: ``functional_call`` puts the module's own tensors back on any exit.
"""

from .._tensor import Tensor
from .._ops.joins import stack

__all__ = ["functional_call", "replace_all_batch_norm_modules_", "stack_module_state"]


def _owner(module, name):
    """The submodule holding the dotted `name`'s last component, and that component."""
    *path, last = name.split(".")
    m = module
    for p in path:
        m = m._modules.get(p) if p in m._modules else None
        if m is None:
            raise AttributeError(f"{type(module).__name__} has no attribute `{p}`")
    return m, last


def _tied_names(module):
    """Names sharing one tensor object: name -> every name of that tensor."""
    groups = {}
    for kind in ("_parameters", "_buffers"):
        for prefix, m in module.named_modules(remove_duplicate=False):
            for n, t in getattr(m, kind).items():
                if t is not None:
                    groups.setdefault(id(t), []).append((prefix + "." if prefix else "") + n)
    return {n: names for names in groups.values() if len(names) > 1 for n in names}


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call `module` with the tensors of `parameter_and_buffer_dicts` (a dict or a tuple of
    dicts, by dotted name) standing in for its parameters and buffers (torch.func).

    Example::

        >>> import ndgrad as torch
        >>> lin = torch.nn.Linear(2, 1)
        >>> w = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
        >>> torch.func.functional_call(lin, w, (torch.tensor([1.0, 2.0]),))
        tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        merged, repeated = {}, []
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in merged and k not in repeated:
                    repeated.append(k)
                merged[k] = v
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if tie_weights:
        tied = _tied_names(module)
        for name in list(merged):
            for other in tied.get(name, ()):
                if other in merged and merged[other] is not merged[name]:
                    raise ValueError(f"functional_call got multiple values for keys "
                                     f"{sorted([name, other])}, which are tied. Consider using "
                                     "tie_weights=False")
                merged.setdefault(other, merged[name])
    if strict:
        own = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        own |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(own - set(merged))
        unexpected = sorted(set(merged) - own)
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                            + ".")
            if missing:
                msgs.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("Error(s) in reparametrizing for "
                               f"{type(module).__name__}:\n\t" + "\n\t".join(msgs))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}
    saved = []
    try:
        for name, value in merged.items():
            m, last = _owner(module, name)
            for kind in ("_parameters", "_buffers"):
                store = getattr(m, kind)
                if last in store:
                    saved.append((store, last, store[last]))
                    store[last] = value
                    break
            else:
                saved.append((m.__dict__, last, m.__dict__.get(last, _MISSING)))
                m.__dict__[last] = value
        return module(*args, **kwargs)
    finally:
        for store, last, old in reversed(saved):
            if old is _MISSING:
                store.pop(last, None)
            else:
                store[last] = old


_MISSING = object()


def stack_module_state(models):
    """``(params, buffers)``: per name, the tensors of every model in `models` stacked along a
    new leading dim (parameters as new leaves requiring grad), for ``vmap`` over
    ``functional_call`` (torch.func)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    t0 = type(models[0])
    if not all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(items):
        out = {}
        for name, _ in items(models[0]):
            ts = [dict(items(m))[name] for m in models]
            s = stack([t.detach() for t in ts], 0)
            if all(isinstance(t, Tensor) and t.requires_grad for t in ts):
                s.requires_grad_(True)
            out[name] = s
        return out
    return (stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers()))


def _is_batch_norm(module):
    # nn sits above this floor: torch's isinstance(m, nn.modules.batchnorm._BatchNorm) is a
    # test of the class hierarchy by name (instance norms derive from _NormBase, not from it).
    return any(c.__name__ == "_BatchNorm" for c in type(module).__mro__)


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in `root` (itself included) stop tracking running statistics, in
    place: ``running_mean``, ``running_var`` and ``num_batches_tracked`` become None and
    ``track_running_stats`` False, so that ``vmap`` over the module works (torch.func).
    Returns `root`."""
    for m in (root,) + tuple(root.modules()):
        if _is_batch_norm(m) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
