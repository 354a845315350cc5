"""The conventions every op family's public functions share, below all of them: dim
arguments (``wrap_dim``), the ``out=`` keyword (``_out``, ``write_out``), NumPy's
``axis``/``keepdims`` spellings (``_numpy_aliases``), torch.return_types named tuples
(``return_type``), and torch's errors for a dtype without a kernel or a non-tensor argument.

Invariant: this module imports no op module (only the tensor floor), so any family can use it
whatever its place among the others.
"""

import functools
import sys
from collections import namedtuple

import numpy as np

from .. import _dtype
from .. import _state
from .._tensor import Tensor

__all__ = ["wrap_dim", "write_out", "return_type"]


# ----------------------------------------------------------------------------- dims
def wrap_dim(dim, ndim):
    """A non-negative dim index, or IndexError in torch's words."""
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


# ----------------------------------------------------------------------------- out=
def _out_function_name():
    """The public function an ``out=`` call went through (for torch's ``mul(): ...``)."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name in ("_out", "write_out", "wrapper", "<listcomp>"):
        if f.f_code.co_name == "wrapper" and callable(f.f_locals.get("fn")):
            return f.f_locals["fn"].__name__
        f = f.f_back
    return f.f_code.co_name if f is not None else "function"


def _check_out(result, out):
    """torch's refusals of an ``out=`` write, made before anything is written: out= kernels
    have no derivative (reverse or forward mode), and an inference tensor is written only
    inside inference mode."""
    tls = _state.tls
    if tls.grad_enabled and (result._rg or out._rg or
                             (out._base is not None and out._base._rg)):
        raise RuntimeError(f"{_out_function_name()}(): functions with out=... arguments don't "
                           "support automatic differentiation, but one of the arguments "
                           "requires grad.")
    rex, oex = result._extra, out._extra
    if (rex is not None and rex.get("fw_grad")) or (oex is not None and oex.get("fw_grad")):
        raise NotImplementedError(f"Trying to use forward AD with {_out_function_name()}_out "
                                  "that does not support it because it is an out= function")
    if oex is not None and oex.get("inference") and not tls.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _before_out_write(out):
    """An ``out=`` write is an in-place write for allow_mutation_on_saved_tensors: a saved
    tensor whose memory `out` holds is cloned before it changes."""
    from ..autograd import _saved_hooks
    for ctx in _saved_hooks._allow_mutation_active:
        ctx.before(_OutWrite, (out,), None)


class _OutWrite:
    """What allow_mutation_on_saved_tensors' observer sees as the op of an out= write."""

    op = "out="


def _out(result, out):
    """Support for the ``out=`` keyword: copy the result into `out` and return it."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError("out= must be a Tensor")
    if result._rg or out._rg or out._extra is not None or result._extra is not None or \
            out._base is not None:
        _check_out(result, out)
    if _state.special:
        _before_out_write(out)
    if out._data.shape != result._data.shape:
        out._data = np.empty(result._data.shape, out._data.dtype)
    np.copyto(out._data, result._data, casting="unsafe")
    out._vc[0] += 1
    return out


def write_out(res, out):
    """Copy `res` (a tensor or a tuple of them) into the ``out=`` tensor(s) and return them."""
    if isinstance(res, tuple):
        written = [_out(r, o) for r, o in zip(res, out)]
        return type(res)(*written) if hasattr(res, "_fields") else tuple(written)
    return _out(res, out)


def _numpy_aliases(fn):
    """Accept NumPy's ``axis``/``keepdims`` for ``dim``/``keepdim`` (as torch's parser does) and
    ``out=`` (the result, or each result of a (values, indices) pair, is copied into it)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not kwargs:
            return fn(*args)
        if "axis" in kwargs:
            kwargs["dim"] = kwargs.pop("axis")
        if "keepdims" in kwargs:
            kwargs["keepdim"] = kwargs.pop("keepdims")
        out = kwargs.pop("out", None)
        res = fn(*args, **kwargs)
        if out is None:
            return res
        return write_out(res, out)
    return wrapper


# ----------------------------------------------------------------------------- return types
def return_type(name, fields=("values", "indices")):
    """A named tuple printing like torch's ``torch.return_types.<name>(...)``."""
    cls = namedtuple(name, fields)
    cls.__module__ = "torch.return_types"

    def __repr__(self):
        inner = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{inner})"
    cls.__repr__ = __repr__
    cls.__str__ = __repr__
    return cls


# ----------------------------------------------------------------------------- errors
def _dtype_of(np_dtype):
    return _dtype.from_np(np_dtype)


def _no_kernel(kernel_name, dt):
    return NotImplementedError(f'"{kernel_name}" not implemented for '
                               f"'{_dtype.from_np(dt)._legacy[:-6]}'")


def _int_kernel_error(name, dt):
    return NotImplementedError(f'"{name}" not implemented for '
                               f"'{_dtype.from_np(dt)._legacy[:-6]}'")


def _tensor_only(fname, other, pos=2, argname="other"):
    if not isinstance(other, Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, "
                        f"not {type(other).__name__}")
