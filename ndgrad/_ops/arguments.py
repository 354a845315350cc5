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
# torch's ``out=`` semantics, for every function that takes it (the functions defined with an
# ``out`` parameter call ``_out`` / ``write_out``; the others are wrapped by out_arguments.py):
#   - out is a tensor (a tuple of them for an op of several results), else TypeError;
#   - under grad mode, a result that requires grad (an input requires grad and the op is
#     differentiable) or an out that requires grad is refused, before anything is written;
#   - the result's dtype must cast to out's (torch's canCast: no complex to real, no floating
#     to integral, nothing but bool to bool); the ops in EXACT_OUT_DTYPE, and every op of
#     several results, want out's dtype to be the result's;
#   - an out of another shape is resized, with torch's deprecation warning unless it was
#     empty; the values are written (one version bump) and out itself is returned.
# Filled by out_arguments.py (measured on torch 2.13): the ops whose out must have the result's
# dtype exactly, the ops that resize out silently, that write out even when an input requires
# grad, and that return None.
EXACT_OUT_DTYPE = SILENT_RESIZE = GRAD_ALLOWED = RETURNS_NONE = frozenset()
DTYPE_RULES = {}
_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).")
_HELPERS = frozenset({"_out", "write_out", "_eout", "wrapper", "deliver_out", "with_out"})


def _caller_name():
    """The public function an ``out=`` error is about (the first frame outside the helpers;
    only looked up to word an error)."""
    import sys
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name in _HELPERS:
        f = f.f_back
    return f.f_code.co_name if f is not None else "op"


def _can_cast(src, dst):
    if src.kind == "c" and dst.kind != "c":
        return False
    if src.kind == "f" and dst.kind in "biu":
        return False
    return not (dst.kind == "b" and src.kind != "b")


def _c_type(np_dtype):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "float16": "c10::Half", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(np_dtype.name, np_dtype.name)


def _check_out_dtype(name, r, o, exact):
    rd, od = r._data.dtype, o._data.dtype
    rule = DTYPE_RULES.get(name)
    if rule == "bool" and od.kind != "b":
        raise RuntimeError(f"{name} does not support non-boolean outputs.")
    if rd == od or rule == "any":
        return
    if rule == "no_int_nan" and od.kind in "iub":
        raise NotImplementedError(f'"nansum_cpu" not implemented for '
                                  f"'{_dtype_of(od)._legacy[:-6]}'")
    if rule == "type_error" and not _can_cast(rd, od):
        raise TypeError(f"{name}(): input types can't be cast to the desired output type "
                        f"{_dtype_of(od)._legacy[:-6]}")
    if exact and rule != "cast":
        raise RuntimeError(f"Expected out tensor to have dtype {_c_type(rd)}, but got "
                           f"{_c_type(od)} instead")
    if not _can_cast(rd, od):
        raise RuntimeError(f"result type {_dtype_of(rd)._legacy[:-6]} can't be cast to the "
                           f"desired output type {_dtype_of(od)._legacy[:-6]}")


def _warn_resize(name, old, new):
    import warnings
    if name == "arange":  # arange words it its own way (range's out is not resized)
        n = int(np.prod(old))
        text = (f"The number of elements in the out tensor of shape {list(old)} is {n} which "
                f"does not match the computed number of elements {int(np.prod(new))}. Note "
                "that this may occur as a result of rounding error. The out tensor will be "
                f"resized to a tensor of shape ({', '.join(map(str, new))},).")
    else:
        text = _RESIZE_WARNING.format(list(old), list(new))
    warnings.warn(text, UserWarning, stacklevel=4)


def deliver_out(name, res, out):
    """Write `res` (a tensor or a tuple of them) into `out` with torch's semantics (above)
    and return out; `name` is the op's name for the errors (None: the calling function's)."""
    from .. import _state
    many = isinstance(res, (tuple, list))
    results = tuple(res) if many else (res,)
    outs = tuple(out) if many and isinstance(out, (tuple, list)) else (out,)
    if many and (not isinstance(out, (tuple, list)) or len(outs) != len(results)):
        name = name or _caller_name()
        raise TypeError(f"{name}(): argument 'out' must be tuple of {len(results)} Tensors, "
                        f"not {type(out).__name__}")
    if many and name == "nonzero":  # nonzero(as_tuple=True) takes no out
        raise TypeError("nonzero(): argument 'out' must be Tensor, not tuple")
    for o in outs:
        if not isinstance(o, Tensor):
            name = name or _caller_name()
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
    name = name or _caller_name()
    if _state.tls.grad_enabled and name not in GRAD_ALLOWED and \
            any(t.requires_grad or (t._base is not None and t._base._rg)
                for t in results + outs):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    for r, o in zip(results, outs):
        if r._extra is not None or o._extra is not None:
            _check_out(name, r, o)
    exact = many or name in EXACT_OUT_DTYPE
    for r, o in zip(results, outs):
        _check_out_dtype(name, r, o, exact)
    if _state.special:
        for o in outs:
            _before_out_write(o)
    for r, o in zip(results, outs):
        if o._data.shape != r._data.shape:
            if o._data.size and name not in SILENT_RESIZE:
                _warn_resize(name, o._data.shape, r._data.shape)
            o._data = np.empty(r._data.shape, o._data.dtype)
        np.copyto(o._data, r._data, casting="unsafe")
        o._vc[0] += 1
    if name in RETURNS_NONE:
        return None
    if not many:
        return out
    if isinstance(out, tuple) and type(out) is type(res):
        return out
    return type(res)(*outs) if hasattr(res, "_fields") else tuple(outs)


def _check_out(name, result, out):
    """torch's refusals of an ``out=`` write besides the grad-mode one, made before anything
    is written: out= kernels have no forward-mode derivative, and an inference tensor is
    written only inside inference mode."""
    tls = _state.tls
    rex, oex = result._extra, out._extra
    if (rex is not None and rex.get("fw_grad")) or (oex is not None and oex.get("fw_grad")):
        raise NotImplementedError(f"Trying to use forward AD with {name}_out "
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
    """Support for the ``out=`` keyword: `result` written into `out` (see above)."""
    if out is None:
        return result
    return deliver_out(None, result, out)


def write_out(res, out):
    """Copy `res` (a tensor or a tuple of them) into the ``out=`` tensor(s) and return them."""
    if out is None:
        return res
    return deliver_out(None, res, out)


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
        return deliver_out(fn.__name__, res, out)
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
    if _deprecation_warned[0]:
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
