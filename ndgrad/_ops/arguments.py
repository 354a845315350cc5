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


# ----------------------------------------------------------------------------- deprecated overloads
# torch's deprecated scalar-first overloads (still accepted, with one warning per process):
# ``add(x, alpha, other)``, ``x.add_(alpha, other)``, ``addcmul(x, value, t1, t2)``,
# ``addmm(beta, x, alpha, m1, m2)``, ``x.addmm_(beta, alpha, m1, m2)``, ``addmm(beta, x, m1,
# m2)``... Each op passes its extra positional arguments here and gets the current form back.
_SCALAR_FIRST = {  # op: (the scalars, in the order given; the operands' names)
    "add": (("alpha",), ("other",)), "sub": (("alpha",), ("other",)),
    "addcmul": (("value",), ("tensor1", "tensor2")),
    "addcdiv": (("value",), ("tensor1", "tensor2")),
    "addmm": (("beta", "alpha"), ("mat1", "mat2")), "addmv": (("beta", "alpha"), ("mat", "vec")),
    "addr": (("beta", "alpha"), ("vec1", "vec2")),
    "addbmm": (("beta", "alpha"), ("batch1", "batch2")),
    "baddbmm": (("beta", "alpha"), ("batch1", "batch2")),
}
_deprecation_warned = [False]


def _number(value, name, fname):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise TypeError(f"{fname}(): argument '{name}' must be Number, not Tensor")
        return value._data.item()
    if not isinstance(value, (int, float, complex, bool, np.number)):
        raise TypeError(f"{fname}(): argument '{name}' must be Number, not "
                        f"{type(value).__name__}")
    return value


def _overload_warning(fname, scalars, operands, function):
    from .._legacy import is_warn_always_enabled
    if _deprecation_warned[0] and not is_warn_always_enabled():
        return
    _deprecation_warned[0] = True
    import warnings
    ops = [f"Tensor {o}" for o in operands]
    nums = [f"Number {n}" for n in scalars]
    tail = ", *, Tensor out = None" if function else ""
    # a function of the beta/alpha family starts with beta (add, addcmul... are bound as
    # methods too: they are worded as the method)
    old = ([nums[0], "Tensor input"] + nums[1:] if function else nums) + ops
    kws = ", ".join(f"Number {n} = 1" for n in _SCALAR_FIRST[fname.rstrip("_")][0])
    new = (["Tensor input"] if function else []) + ops
    warnings.warn(f"This overload of {fname} is deprecated:\n\t{fname}({', '.join(old)}{tail})"
                  "\nConsider using one of the following signatures instead:\n"
                  f"\t{fname}({', '.join(new)}, *, {kws}{tail})", UserWarning, stacklevel=4)


def scalar_first(fname, args, given):
    """The current form ``(operands, scalars)`` of a deprecated scalar-first call of `fname`
    (``add``, ``addmm_``...) with positional `args` (self first for a method; a function call
    of the beta/alpha family starts with beta). `given` holds the scalar keywords passed too
    (not their defaults): torch matches no overload when one is given twice."""
    names, operands = _SCALAR_FIRST[fname.rstrip("_")]
    function = not isinstance(args[0], Tensor)
    if function:
        if len(names) == 1 or len(args) < 2:
            raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        args = (args[1], args[0]) + tuple(args[2:])
    n_scalars = len(args) - 1 - len(operands)
    if not 1 <= n_scalars <= len(names) or given:
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"{len(args)} positional arguments")
    scalars = names if n_scalars == len(names) else names[:1]
    values = {n: _number(v, n, fname) for n, v in zip(scalars, args[1:1 + n_scalars])}
    _overload_warning(fname, scalars, operands, function)
    return (args[0],) + tuple(args[1 + n_scalars:]), values


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
