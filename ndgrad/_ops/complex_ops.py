"""Complex numbers: the views between complex and real storage (view_as_real, view_as_complex,
and real/imag as torch builds them: a select of view_as_real, so they share memory and their
grad_fn is SelectBackward0), conj / conj_physical, angle, polar and complex.

Gradients follow torch's convention (conjugate Wirtinger): for a real loss L of complex z the
gradient is dL/dRe(z) + i dL/dIm(z); a real input of a complex-valued op receives the real
part of the incoming gradient.
"""

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .pointwise import CONJ, _conj, sgn
from .comparison import where
from .registry import as_tensor_arg, primitive, unary
from .linalg_common import _broadcast_shapes
from .arguments import _out as _eout

__all__ = [
    "angle",
    "complex",
    "conj",
    "conj_physical",
    "imag",
    "is_conj",
    "polar",
    "real",
    "resolve_conj",
    "resolve_neg",
    "view_as_complex",
    "view_as_real",
]

_TO_COMPLEX = {np.dtype(np.float16): np.dtype(np.complex64),  # NumPy has no complex32
               np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _tname(x):
    return _TYPE_NAMES.get(x._data.dtype.name, x._data.dtype.name)


# --------------------------------------------------------------------------- real views
def _var_fwd(x, p):
    r = x.real  # a view of x's memory with the real dtype and x's strides
    return np.lib.stride_tricks.as_strided(r, shape=x.shape + (2,),
                                           strides=x.strides + (r.itemsize,))


def _vac_fwd(x, p):
    return x.view(_TO_COMPLEX[x.dtype])[..., 0]


VIEW_AS_REAL = primitive("view_as_real", _var_fwd, "ViewAsRealBackward0", view=True,
                         linear=True)
VIEW_AS_COMPLEX = primitive("view_as_complex", _vac_fwd, "ViewAsComplexBackward0", view=True,
                            linear=True)


@VIEW_AS_REAL.def_vjp
def _(ctx, g):
    # complex(re, im) rather than a view: g may have any strides (expanded, transposed).
    return (COMPLEX.call(g.select(-1, 0), g.select(-1, 1)),)


@VIEW_AS_COMPLEX.def_vjp
def _(ctx, g):
    return (view_as_real(g),)


def view_as_real(input):
    """A real view (..., 2) of a complex tensor: real and imaginary parts in the last dim.

    >>> ndgrad.view_as_real(ndgrad.tensor([1+2j, 3-1j]))
    tensor([[ 1.,  2.],
            [ 3., -1.]])
    """
    x = as_tensor_arg(input)
    if x._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return VIEW_AS_REAL.call(x)


def view_as_complex(input):
    """A complex view of a real tensor whose last dim (size 2, stride 1) holds (re, im)."""
    x = as_tensor_arg(input)
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {_tname(x)}")
    if d.dtype == np.float16:
        raise RuntimeError("view_as_complex: ComplexHalf is not supported by ndgrad (NumPy has "
                           "no complex32)")
    if d.ndim == 0 or d.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = d.itemsize
    if d.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    for s in d.strides[:-1]:
        if (s // item) % 2:
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                               "dimension")
    if x.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return VIEW_AS_COMPLEX.call(x)


def real(input):
    """The real part: `input` itself for real tensors, else a view (as torch, a select of
    ``view_as_real``)."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind != "c":
        return x
    return view_as_real(x).select(-1, 0)


def imag(input):
    """The imaginary part of a complex tensor, as a view."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(x).select(-1, 1)


# --------------------------------------------------------------------------- conj
def conj(input):
    """Complex conjugate (the input itself for real tensors)."""
    x = as_tensor_arg(input)
    return CONJ.call(x) if x._data.dtype.kind == "c" else x


CONJ_PHYSICAL = unary("conj_physical", np.conjugate, linear=True)
CONJ_PHYSICAL.def_vjp(lambda ctx, g: (_conj(g),))


def conj_physical(input):
    x = as_tensor_arg(input)
    return CONJ_PHYSICAL.call(x) if x._data.dtype.kind == "c" else x.clone()


def resolve_conj(input):
    """Conjugation is never lazy in ndgrad: returns the input."""
    return input


def resolve_neg(input):
    return input


def is_conj(input):
    return False


# --------------------------------------------------------------------------- angle
def _angle_fwd(x):
    r = np.angle(x)
    if x.dtype.kind != "c":
        r = np.where(np.isnan(x), x, r).astype(x.dtype)
    return r


ANGLE = unary("angle", _angle_fwd, save=((0, None),), float_only=True)


@ANGLE.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    if x._data.dtype.kind != "c":
        return (g * 0,)
    # d angle = Im(dz / z): the gradient is g * i z / |z|^2 (0 at z = 0, as torch).
    mag2 = (x * _conj(x)).real
    return (where(mag2 == 0, 0.0, g * _times_i(x) / where(mag2 == 0, 1.0, mag2)),)


def _times_i(z):
    """i * z for a complex tensor (as a tensor product, so double backward works)."""
    return z * Tensor(np.asarray(1j, dtype=z._data.dtype))


def angle(input):
    """Argument of complex numbers (pi for negative reals, 0 otherwise)."""
    return ANGLE.call(input)


# --------------------------------------------------------------------------- polar / complex
def _check_real_pair(a, b):
    a, b = as_tensor_arg(a), as_tensor_arg(b)
    ka, kb = a._data.dtype, b._data.dtype
    if ka.kind != "f" or kb.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_tname(a)} and {_tname(b)}")
    if ka != kb:
        raise RuntimeError(f"Expected object of scalar type {_tname(a)} but got scalar type "
                           f"{_tname(b)} for second argument")
    return a, b


def _reduce(out, a, b):
    node = out._grad_fn
    if node is not None and (a._data.shape != out._data.shape or
                             b._data.shape != out._data.shape):
        node._meta = ((a._data.shape, a._data.dtype), (b._data.shape, b._data.dtype))
    return out


def _complex_fwd(re, im, p):
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, _TO_COMPLEX[re.dtype])
    out.real = re
    out.imag = im
    return out


COMPLEX = primitive("complex", _complex_fwd, "ComplexBackward0")


@COMPLEX.def_vjp
def _(ctx, g):
    n = ctx._next
    return (real(g) if n[0] else None), (imag(g) if n[1] else None)


def complex(real, imag, *, out=None):
    """A complex tensor from real and imaginary parts (same floating dtype, broadcast).

    >>> ndgrad.complex(ndgrad.tensor([1.]), ndgrad.tensor([2.]))
    tensor([1.+2.j])
    """
    a, b = _check_real_pair(real, imag)
    _broadcast_check(a, b)
    return _out(_reduce(COMPLEX.call(a, b), a, b), out)


def _polar_fwd(r, theta, p):
    return _complex_fwd(r * np.cos(theta), r * np.sin(theta), p)


POLAR = primitive("polar", _polar_fwd, "PolarBackward0", save=(("out", None),))


@POLAR.def_vjp
def _(ctx, g):
    (out,) = ctx.saved
    n = ctx._next
    gc = _conj(g)
    return (real(gc * sgn(out)) if n[0] else None), (real(gc * _times_i(out)) if n[1] else None)


def polar(abs, angle, *, out=None):
    """``abs * (cos(angle) + i sin(angle))``.

    >>> ndgrad.polar(ndgrad.tensor([2.]), ndgrad.tensor([0.]))
    tensor([2.+0.j])
    """
    a, b = _check_real_pair(abs, angle)
    _broadcast_check(a, b)
    return _out(_reduce(POLAR.call(a, b), a, b), out)


def _broadcast_check(a, b):
    _broadcast_shapes(a._data.shape, b._data.shape)


def _out(result, out):
    if out is None:
        return result
    return _eout(result, out)


def _bind():
    for name, fn in {
        "angle": angle, "conj_physical": conj_physical, "resolve_conj": resolve_conj,
        "resolve_neg": resolve_neg, "is_conj": is_conj,
        "is_neg": lambda self: False,
    }.items():
        setattr(Tensor, name, fn)


_bind()
_ = _dtype
