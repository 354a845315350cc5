"""``torch._vmap_internals``: the legacy ``_vmap`` / ``vmap`` that libraries still import.

Both are ndgrad's vmap (``ndgrad.func.vmap``) with the legacy signature: positional arguments
only, outputs that are Tensors or tuples of Tensors, and for ``_vmap`` the flag
``allow_none_pass_through`` that lets an output be None (what ``autograd.grad`` gives for an
unused input inside a batched vector-Jacobian product) and returns it as None. ``vmap`` warns
that it is deprecated, as torch does.
"""

import functools
import warnings

from ._functorch.transforms import vmap as _functorch_vmap
from ._tensor import Tensor

__all__ = ["vmap"]


def _name(func):
    return getattr(func, "__name__", repr(func))


def _as_tuple(outputs):
    return outputs if isinstance(outputs, tuple) else (outputs,)


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    if not isinstance(out_dims, tuple) or not all(isinstance(d, int) for d in out_dims):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be "
                         "an int or a tuple of int representing where in the outputs the "
                         "vmapped dimension should appear.")


def _check_outputs(outputs, func, allow_none):
    for i, out in enumerate(_as_tuple(outputs)):
        if isinstance(out, Tensor) or (allow_none and out is None):
            continue
        if isinstance(outputs, tuple):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(out)} for return {i}.")
        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, "
                         f"got type {type(outputs)} as the return.")


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through=False):
    """Legacy vmap: ``func`` batched over dimension `in_dims` of its positional arguments.

    The outputs are batched at dimension 0 by ndgrad's vmap, then moved to `out_dims`; None
    outputs (allowed with `allow_none_pass_through`) are left out of the transform and put back.
    """

    @functools.wraps(func)
    def wrapped(*args):
        _check_out_dims(out_dims, func)
        shape_of_result = {}

        def tensors_only(*inner_args):
            outputs = func(*inner_args)
            _check_outputs(outputs, func, allow_none_pass_through)
            shape_of_result["tuple"] = isinstance(outputs, tuple)
            shape_of_result["none_at"] = [i for i, o in enumerate(_as_tuple(outputs))
                                          if o is None]
            return tuple(o for o in _as_tuple(outputs) if o is not None)

        kept = _functorch_vmap(tensors_only, in_dims=in_dims, out_dims=0)(*args)
        outputs = list(kept)
        for i in shape_of_result["none_at"]:
            outputs.insert(i, None)
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
        if len(dims) != len(outputs):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             f"have one dim per output (got {len(outputs)} outputs) of "
                             f"{_name(func)}.")
        outputs = [o if o is None or d == 0 else o.movedim(0, d)
                   for o, d in zip(outputs, dims)]
        return tuple(outputs) if shape_of_result["tuple"] else outputs[0]

    return wrapped


def vmap(func, in_dims=0, out_dims=0):
    """Deprecated in torch (use ``torch.vmap``); the legacy vmap without None outputs."""
    warnings.warn("Please use `torch.vmap` instead of `torch._vmap_internals.vmap`. ",
                  FutureWarning, stacklevel=2)
    return _vmap(func, in_dims, out_dims)
