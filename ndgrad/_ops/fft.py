"""The discrete Fourier transforms as torch builds them: three primitives, ``_fft_c2c``,
``_fft_r2c`` and ``_fft_c2r`` (grad_fn ``FftC2CBackward0``, ``FftR2CBackward0``,
``FftC2RBackward0``), on NumPy's pocketfft. ``ndgrad.fft`` composes every public transform
from them plus conj, slicing and padding, in the order torch does, so graphs match torch's.

Parameters (``params``) of every primitive start with ``dims``, the transformed dims as
*negative* indices, and ``norm``, torch's normalization enum: 0 = none, 1 = by 1/sqrt(n),
2 = by 1/n, where n is the product of the signal sizes (the output's for c2r). Negative dims
make the rules independent of leading batch dims, so each VJP broadcasts over one
(``batch_transparent``).

- ``c2c``: ``(dims, norm, forward)``, complex to complex; ``forward`` picks the sign of the
  exponent (e^{-i...} forward).
- ``r2c``: ``(dims, norm, onesided, n)``, real to complex, always forward; ``onesided``
  keeps ``n // 2 + 1`` entries of the last dim, whose input length ``n`` the VJP needs.
- ``c2r``: ``(dims, norm, last_dim_size)``, a one-sided Hermitian spectrum to real, always
  the inverse direction; the last dim of the output has ``last_dim_size`` entries and the
  imaginary parts of the self-conjugate entries (index 0, and n/2 for even n) are ignored.

All three are linear, so their forward-mode rule is the op on the tangent (``linear=True``).
Backward rules (torch's conjugate-Wirtinger convention):

- c2c: the adjoint is the transform in the other direction with the same enum.
- r2c: the adjoint is ``real(c2c_inverse(zero-padded g))``. With ``w = 1`` on the
  self-conjugate entries and ``1/2`` elsewhere, that equals ``c2r(w * g)`` (c2r adds each
  non-self-conjugate entry twice, once as itself and once as its mirror): a half-size
  transform with no padding.
- c2r: ``r2c(g)`` with the entries whose mirror falls outside the one-sided range
  (indices 1 .. n - (n//2 + 1)) doubled, as the Hermitian completion counts them twice.
"""

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .complex_ops import real
from .registry import primitive

__all__ = ["C2C", "C2R", "R2C", "c2c", "c2r", "r2c"]

NONE, BY_ROOT_N, BY_N = 0, 1, 2

# NumPy's ``norm`` word for (torch enum, direction): numpy scales the forward transform by
# "forward"/"ortho" and the inverse by "backward"/"ortho".
_NP_NORM_FORWARD = ("backward", "ortho", "forward")
_NP_NORM_INVERSE = ("forward", "ortho", "backward")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64),
               np.dtype(np.complex128): np.dtype(np.complex128)}


def _np_norm(norm, forward, dtype):
    """NumPy's ``norm`` word for a transform, and whether the result must then be multiplied
    by the signal size. Single-precision pocketfft runs several times slower unscaled (NumPy
    2.x): an unnormalized float32/complex64 transform is computed scaled by 1/n and
    multiplied back (exact for powers of two, within an ulp otherwise)."""
    word = (_NP_NORM_FORWARD if forward else _NP_NORM_INVERSE)[norm]
    if norm == NONE and dtype.itemsize <= 8 and dtype != np.float64:
        return ("forward" if forward else "backward"), True
    return word, False


def _rescaled(out, rescale, sizes):
    if rescale:
        out *= out.real.dtype.type(np.prod(sizes, dtype=np.float64))
    return out


def _c2c_fwd(x, p):
    dims, norm, forward = p
    dt = _COMPLEX_OF[x.dtype]
    if not dims:
        return x.astype(dt)
    word, rescale = _np_norm(norm, forward, x.dtype)
    if forward:
        out = np.fft.fftn(x, axes=dims, norm=word)
    else:
        out = np.fft.ifftn(x, axes=dims, norm=word)
    return _rescaled(out.astype(dt, copy=False), rescale, [x.shape[d] for d in dims])


def _r2c_fwd(x, p):
    dims, norm, onesided, _ = p
    dt = _COMPLEX_OF[x.dtype]
    word, rescale = _np_norm(norm, True, x.dtype)
    if onesided:
        out = np.fft.rfftn(x, axes=dims, norm=word)
    else:
        out = np.fft.fftn(x, axes=dims, norm=word)
    return _rescaled(out.astype(dt, copy=False), rescale, [x.shape[d] for d in dims])


def _c2r_fwd(x, p):
    dims, norm, last_dim_size = p
    sizes = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
    word, rescale = _np_norm(norm, False, x.dtype)
    out = np.fft.irfftn(x, s=sizes, axes=dims, norm=word)
    return _rescaled(out.astype(x.real.dtype, copy=False), rescale, sizes)


C2C = primitive("_fft_c2c", _c2c_fwd, "FftC2CBackward0", linear=True)
R2C = primitive("_fft_r2c", _r2c_fwd, "FftR2CBackward0", linear=True)
C2R = primitive("_fft_c2r", _c2r_fwd, "FftC2RBackward0", linear=True)
for _op in (C2C, R2C, C2R):
    _op.batch_transparent = True


def _along(values, dim, dtype):
    """A constant tensor holding `values` along (negative) dim `dim`, broadcastable."""
    arr = np.asarray(values, dtype=dtype).reshape((-1,) + (1,) * (-dim - 1))
    return Tensor(arr)


@C2C.def_vjp
def _(ctx, g):
    dims, norm, forward = ctx._params
    return (C2C.call(g, params=(dims, norm, not forward)),)


@R2C.def_vjp
def _(ctx, g):
    dims, norm, onesided, n = ctx._params
    if not onesided:
        return (real(C2C.call(g, params=(dims, norm, False))),)
    m = g._data.shape[dims[-1]]
    w = np.full(m, 0.5)
    w[0] = 1.0
    if n % 2 == 0 and m == n // 2 + 1:
        w[-1] = 1.0
    half = g * _along(w, dims[-1], g._data.real.dtype)
    return (C2R.call(half, params=(dims, norm, n)),)


@C2R.def_vjp
def _(ctx, g):
    dims, norm, n = ctx._params
    gx = R2C.call(g, params=(dims, norm, True, n))
    m = gx._data.shape[dims[-1]]
    double = n - m
    if double > 0:
        scale = np.ones(m)
        scale[1:1 + double] = 2.0
        gx = gx * _along(scale, dims[-1], g._data.dtype)
    return (gx,)


# --------------------------------------------------------------------------- calls
def c2c(x, dims, norm, forward):
    return C2C.call(x, params=(_negative(dims, x), norm, bool(forward)))


def r2c(x, dims, norm, onesided):
    dims = _negative(dims, x)
    return R2C.call(x, params=(dims, norm, bool(onesided), x._data.shape[dims[-1]]))


def c2r(x, dims, norm, last_dim_size):
    return C2R.call(x, params=(_negative(dims, x), norm, int(last_dim_size)))


def _negative(dims, x):
    nd = x._data.ndim
    return tuple(d - nd if d >= 0 else d for d in dims)


def complex_dtype_of(dt):
    """The complex ndgrad dtype of the same precision as real/complex ndgrad dtype `dt`."""
    return _dtype._FROM_NP[_COMPLEX_OF[dt.np]] if hasattr(dt, "np") else None
