"""The conventions every op family's public functions share, below all of them: dim
arguments (``wrap_dim``), the ``out=`` keyword (``_out``, ``write_out``), NumPy's
``axis``/``keepdims`` spellings (``_numpy_aliases``), torch.return_types named tuples
(``return_type``), and torch's errors for a dtype without a kernel or a non-tensor argument.

Invariant: this module imports no op module (only the tensor floor), so any family can use it
whatever its place among the others.
"""

import functools
from collections import namedtuple

import numpy as np

from .. import _dtype
from .._tensor import Tensor

from .. import return_types as _return_types_module

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
def _out(result, out):
    """Support for the ``out=`` keyword: copy the result into `out` and return it."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError("out= must be a Tensor")
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
    # torch.return_types.<name> names the class (isinstance checks); the first one made wins
    if not hasattr(_return_types_module, name):
        setattr(_return_types_module, name, cls)
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
