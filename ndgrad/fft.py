"""``ndgrad.fft``: torch.fft's discrete Fourier transforms, differentiable in both modes.

Every transform is composed, in torch's order, of the three primitives of ``_ops/fft.py``
(``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``), ``conj``, and the slicing and zero padding that
``n``/``s`` ask for, so values, dtypes, ``grad_fn`` chains and gradients are torch's:

>>> x = ndgrad.randn(8, requires_grad=True)
>>> ndgrad.fft.rfft(x).grad_fn
<FftR2CBackward0 ...>

Argument handling follows torch: integer and bool inputs become the default float dtype
(then complex64/complex128 where a complex input is needed), ``norm`` is one of
"backward" (None), "forward" and "ortho", and ``n``/``s`` trim or zero-pad the input.
"""

import numpy as np

from . import _dtype
from ._ops import fft as _P
from ._ops.complex_ops import conj as _conj
from ._ops.complex_ops import conj_physical as _conj_physical
from ._ops.shape import roll as _roll
from ._tensor import Tensor
from .nn import functional as _F

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_TORCH_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


# --------------------------------------------------------------------------- arguments
def _type_name(v):
    return "NoneType" if v is None else type(v).__name__


def _check_args(fname, input, ints=(), ints_or_lists=(), norm=None):
    """torch's argument-parser errors for a wrong Python type (before any other check)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"fft_{fname}(): argument 'norm' must be str, not {_type_name(norm)}")
    for name, v in ints:
        if v is not None and not _is_int(v):
            raise TypeError(f"fft_{fname}(): argument '{name}' must be int, not "
                            f"{_type_name(v)}")
    for name, v in ints_or_lists:
        if v is None or _is_int(v):
            continue
        if not isinstance(v, (tuple, list)) or not all(_is_int(e) for e in v):
            raise TypeError(f"fft_{fname}(): argument '{name}' must be tuple of ints, not "
                            f"{_type_name(v)}")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _dtype_name(x):
    return _TORCH_NAMES.get(x._data.dtype.name, x._data.dtype.name)


def _wrap_dim(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def _norm_mode(norm, forward):
    """torch's normalization enum for `norm` applied to a transform in `forward` direction."""
    if norm is None or norm == "backward":
        return _P.NONE if forward else _P.BY_N
    if norm == "forward":
        return _P.BY_N if forward else _P.NONE
    if norm == "ortho":
        return _P.BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _promote(x, require_complex=False):
    """Integer/bool inputs to the default float dtype; to complex when required (a copy
    recorded as ToCopyBackward0, as torch's ``.to``)."""
    dt = x._data.dtype
    if dt.kind == "c":
        return x
    if dt.kind != "f":
        target = _dtype.get_default_dtype()
    else:
        target = _dtype._FROM_NP[dt]
    if target.np == np.float16:
        raise RuntimeError("Unsupported dtype Half")
    if require_complex:
        target = _P.complex_dtype_of(target)
    return x if target.np == dt else x.to(target)


def _resize(x, dims, sizes):
    """Trim (a slice per dim) then zero-pad (one constant pad) `x` to `sizes` along `dims`,
    as torch's ``resize_fft_input``; -1 keeps a dim's size."""
    shape = x._data.shape
    pads = [0] * (2 * len(shape))
    must_pad = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if shape[d] < n:
            must_pad = True
            pads[2 * (len(shape) - 1 - d) + 1] = n - shape[d]
        elif shape[d] > n:
            x = x.narrow(d, 0, n)
    return _F.pad(x, tuple(pads)) if must_pad else x


def _shape_and_dims(x, s, dim):
    """torch's ``canonicalize_fft_shape_and_dim_args``: wrapped dims and signal sizes."""
    nd = x._data.ndim
    sizes = x._data.shape
    if _is_int(s):
        s = (s,)
    if _is_int(dim):
        dim = (dim,)
    dims = None
    if dim is not None:
        dims = [_wrap_dim(int(d), nd) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{nd} dimensions.")
        if dims is None:
            dims = list(range(nd - len(s), nd))
        shape = [sizes[d] if int(n) == -1 else int(n) for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(range(nd))
        shape = list(sizes)
    else:
        shape = [sizes[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _c2r_shape_and_dims(fname, x, s, dim):
    """As `_shape_and_dims`, plus the output length of the last dim (the Hermitian one); the
    returned input size of that dim is ``last_dim_size // 2 + 1``."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    if s is None or (int(s if _is_int(s) else s[-1]) == -1):
        last = 2 * (x._data.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _check_points(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _write_out(result, out, fname, complex_out):
    """torch's ``out=`` for a transform: `result` copied into `out` (resized), returned."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"fft_{fname}(): argument 'out' must be Tensor, not {_type_name(out)}")
    kind = out._data.dtype.kind
    if complex_out and kind != "c":
        raise RuntimeError(f"{fname} expects a complex output tensor, but got {_dtype_name(out)}")
    if not complex_out and kind != "f":
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got "
                           f"{_dtype_name(out)}")
    node = result._grad_fn
    prim = _OUT_PRIMITIVES.get(type(node).__name__) if node is not None else None
    if prim is not None:
        raise RuntimeError(f"{prim}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    from ._ops.arguments import deliver_out  # the resize (with torch's warning) and the write
    return deliver_out(f"fft_{fname}", result, out)


_OUT_PRIMITIVES = {"FftC2CBackward0": "_fft_c2c", "FftR2CBackward0": "_fft_r2c",
                   "FftC2RBackward0": "_fft_c2r"}


# --------------------------------------------------------------------------- 1-D
def _c2c_1d(x, n, dim, norm, forward):
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d] if n is None else n
    _check_points(n)
    x = _resize(x, [d], [n])
    return _P.c2c(x, (d,), _norm_mode(norm, forward), forward)


def _r2c_1d(x, n, dim, norm, forward, onesided):
    x = _promote(x)
    d = _wrap_dim(dim, x._data.ndim)
    n = x._data.shape[d] if n is None else n
    _check_points(n)
    x = _resize(x, [d], [n])
    out = _P.r2c(x, (d,), _norm_mode(norm, forward), onesided)
    return out if forward else _conj(out)


def _c2r_1d(x, n, dim, norm, forward):
    x = _promote(x, require_complex=True)
    d = _wrap_dim(dim, x._data.ndim)
    last = 2 * (x._data.shape[d] - 1) if n is None else n
    _check_points(last)
    if n is not None:
        x = _resize(x, [d], [last // 2 + 1])
    mode = _norm_mode(norm, forward)
    if forward:
        x = _conj(x)
    return _P.c2r(x, (d,), mode, last)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform of `input` along `dim` (torch.fft.fft).

    >>> ndgrad.fft.fft(ndgrad.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    _check_args("fft", input, (("n", n), ("dim", dim)), norm=norm)
    if input._data.dtype.kind == "c":
        return _write_out(_c2c_1d(input, n, dim, norm, True), out, "fft", True)
    return _write_out(_r2c_1d(input, n, dim, norm, True, False), out, "fft", True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform of `input` along `dim`."""
    _check_args("ifft", input, (("n", n), ("dim", dim)), norm=norm)
    if input._data.dtype.kind == "c":
        return _write_out(_c2c_1d(input, n, dim, norm, False), out, "ifft", True)
    return _write_out(_r2c_1d(input, n, dim, norm, False, False), out, "ifft", True)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D transform of a real signal: the ``n // 2 + 1`` non-redundant frequencies."""
    _check_args("rfft", input, (("n", n), ("dim", dim)), norm=norm)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"rfft expects a real input tensor, but got {_dtype_name(input)}")
    return _write_out(_r2c_1d(input, n, dim, norm, True, True), out, "rfft", True)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of `rfft`: a real signal of length `n` (default ``2 * (size - 1)``)."""
    _check_args("irfft", input, (("n", n), ("dim", dim)), norm=norm)
    return _write_out(_c2r_1d(input, n, dim, norm, False), out, "irfft", False)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its one-sided half: real."""
    _check_args("hfft", input, (("n", n), ("dim", dim)), norm=norm)
    return _write_out(_c2r_1d(input, n, dim, norm, True), out, "hfft", False)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of `hfft`: the one-sided inverse transform of a real signal."""
    _check_args("ihfft", input, (("n", n), ("dim", dim)), norm=norm)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"ihfft expects a real input tensor, but got {_dtype_name(input)}")
    return _write_out(_r2c_1d(input, n, dim, norm, False, True), out, "ihfft", True)


# --------------------------------------------------------------------------- n-D
def _c2c_nd(fname, input, s, dim, norm, forward):
    _check_args(fname, input, ints_or_lists=(("s", s), ("dim", dim)), norm=norm)
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, require_complex=True)
    x = _resize(x, dims, shape)
    return _P.c2c(x, dims, _norm_mode(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D discrete Fourier transform over `dim` (all dims by default)."""
    return _write_out(_c2c_nd("fftn", input, s, dim, norm, True), out, "fftn", True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse discrete Fourier transform over `dim` (all dims by default)."""
    return _write_out(_c2c_nd("ifftn", input, s, dim, norm, False), out, "fftn", True)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D discrete Fourier transform (over the last two dims by default)."""
    return _write_out(_c2c_nd("fft2", input, s, dim, norm, True), out, "fftn", True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse discrete Fourier transform (over the last two dims by default)."""
    return _write_out(_c2c_nd("ifft2", input, s, dim, norm, False), out, "fftn", True)


def _rfftn(fname, input, s, dim, norm):
    _check_args(fname, input, ints_or_lists=(("s", s), ("dim", dim)), norm=norm)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{_dtype_name(input)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _P.r2c(x, dims, _norm_mode(norm, True), True)


def _irfftn(fname, input, s, dim, norm):
    _check_args(fname, input, ints_or_lists=(("s", s), ("dim", dim)), norm=norm)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _P.c2r(x, dims, _norm_mode(norm, False), last)


def _hfftn(fname, input, s, dim, norm):
    _check_args(fname, input, ints_or_lists=(("s", s), ("dim", dim)), norm=norm)
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _P.c2c(x, dims[:-1], mode, True)
    return _P.c2r(_conj(x), dims[-1:], mode, last)


def _ihfftn(fname, input, s, dim, norm):
    _check_args(fname, input, ints_or_lists=(("s", s), ("dim", dim)), norm=norm)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    if input._data.dtype.kind == "c":  # torch's check inside _fft_r2c
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{_dtype_name(input)}")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    out = _P.r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _conj(out)
    return _P.c2c(_conj_physical(out), dims[:-1], mode, False)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D transform of a real signal, one-sided in the last transformed dim."""
    return _write_out(_rfftn("rfftn", input, s, dim, norm), out, "rfftn", True)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of `rfftn`: a real signal (last dim ``2 * (size - 1)`` by default)."""
    return _write_out(_irfftn("irfftn", input, s, dim, norm), out, "irfftn", False)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D transform of a real signal (`rfftn` over the last two dims by default)."""
    return _write_out(_rfftn("rfft2", input, s, dim, norm), out, "rfftn", True)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of `rfft2` (`irfftn` over the last two dims by default)."""
    return _write_out(_irfftn("irfft2", input, s, dim, norm), out, "irfftn", False)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D transform of a Hermitian-symmetric signal given by its one-sided half."""
    return _write_out(_hfftn("hfftn", input, s, dim, norm), out, "hfftn", False)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of `hfftn`: one-sided in the last transformed dim."""
    return _write_out(_ihfftn("ihfftn", input, s, dim, norm), out, "ihfftn", True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """`hfftn` over the last two dims by default."""
    return _write_out(_hfftn("hfft2", input, s, dim, norm), out, "hfftn", False)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """`ihfftn` over the last two dims by default."""
    return _write_out(_ihfftn("ihfft2", input, s, dim, norm), out, "ihfftn", True)


# --------------------------------------------------------------------------- helpers
def _freq_dtype(fname, n, dtype):
    if not _is_int(n):
        raise TypeError(f"fft_{fname}(): argument 'n' (position 1) must be int, not "
                        f"{_type_name(n)}")
    dt = _dtype.get_default_dtype() if dtype is None else dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{_TORCH_NAMES[dt.np.name]}'")
    return dt


def _freqs(k, n, d, dt, requires_grad):
    # torch computes arange in the dtype, then multiplies by the double 1 / (n d), rounded
    # to the dtype.
    scale = 1.0 / (n * d) if n * d else float("inf")  # n = 0: rfftfreq gives [nan]
    with np.errstate(invalid="ignore"):
        arr = k.astype(dt.np) * dt.np.type(scale)
    t = Tensor(arr.astype(dt.np, copy=False))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_n(n):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of `fft` for a signal of length `n` and sample spacing `d`:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    >>> ndgrad.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    dt = _freq_dtype("fftfreq", n, dtype)
    _check_n(n)
    k = np.arange(n, dtype=np.int64)
    k[(n + 1) // 2:] -= n
    return _freqs(k, n, d, dt, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of `rfft`: ``[0, 1, ..., n // 2] / (d * n)``."""
    dt = _freq_dtype("rfftfreq", n, dtype)
    m = (n // 2 if n >= 0 else -(-n // 2)) + 1  # C's truncating division, as torch
    _check_n(m)
    return _freqs(np.arange(m, dtype=np.int64), n, d, dt, requires_grad)


def _shift(input, dim, inverse):
    _check_args(f"{'i' if inverse else ''}fftshift", input, ints_or_lists=(("dim", dim),))
    nd = input._data.ndim
    if dim is None:
        dims = list(range(nd))
    else:
        dims = [_wrap_dim(int(d), nd) for d in ((dim,) if _is_int(dim) else dim)]
    if not dims:
        raise RuntimeError("`shifts` required")
    sizes = input._data.shape
    shifts = [(sizes[d] + 1) // 2 if inverse else sizes[d] // 2 for d in dims]
    return _roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre of `dim` (all dims by default): a roll by
    ``size // 2``."""
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    """The inverse of `fftshift`: a roll by ``(size + 1) // 2``."""
    return _shift(input, dim, True)
