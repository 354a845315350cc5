"""``nn.utils.stateless.functional_call``: run a module with some of its parameters and buffers
replaced by given tensors, for the duration of one call.

Invariant: the module's own tensors are put back afterwards, also when the call raises; tied
tensors (one tensor under several names) are replaced together unless ``tie_weights=False``.
"""

import contextlib
import warnings

from ..._tensor import Tensor
from ..parameter import Parameter

__all__ = ["functional_call"]

_MISSING = object()


def _named_tensors(module):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module, tensors):
    """Add the tied names of every given tensor (error if tied names got different values)."""
    names_of = {}
    for name, tensor in _named_tensors(module).items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = {n for n in tensors if n in tied}
    for name in given:
        names = tied[name]
        if len(names & given) > 1 and len({id(tensors[n]) for n in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(tensors)
    for name in given:
        for other in tied[name]:
            untied[other] = tensors[name]
    return untied


def _swap(module, dotted, value):
    """Put ``value`` at ``dotted`` (a tensor, or _MISSING to delete); return what was there."""
    *path, name = dotted.split(".")
    for part in path:
        module = getattr(module, part)
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if value is _MISSING:
        if orig is not _MISSING:
            if name in module._parameters:
                del module._parameters[name]
            elif name in module._buffers:
                del module._buffers[name]
            else:
                delattr(module, name)
    elif name in module._parameters and not isinstance(value, Parameter):
        module._parameters[name] = value
    elif name in module._buffers:
        module._buffers[name] = value
    else:
        setattr(module, name, value)
    return orig


@contextlib.contextmanager
def _reparametrize_module(module, tensors, tie_weights=False, strict=False):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        valid = set(_named_tensors(module))
        missing, unexpected = sorted(valid - set(tensors)), sorted(set(tensors) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(msgs))
    originals = {}
    try:
        for name, value in tensors.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"{value} is not an instance of torch.Tensor")
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, orig in reversed(list(originals.items())):
            _swap(module, name, orig)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` (dotted names) in place of
    the module's own tensors (deprecated in torch for ``torch.func.functional_call``)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)
