"""The standard normal distribution's special functions of torch.special: ``erfcx`` (the
scaled complementary error function ``exp(x^2) erfc(x)``), ``log_ndtr`` (the log of the normal
CDF) and ``ndtri`` (its inverse), with torch's gradients and node names
(``SpecialErfcxBackward0``, ``SpecialLogNdtrBackward0``, ``SpecialNdtriBackward0``).

Numerics (float64, NumPy only; float32 results are the float64 values rounded):

- erfcx: ``exp(x^2) erfc(x)`` for x < 2 (x^2 < 4 loses nothing; inf where exp overflows, as
  torch), the continued fraction ``1 / (sqrt(pi) (x + (1/2)/(x + 1/(x + ...))))`` above, which
  never forms the underflowing ``erfc``.
- log_ndtr: ``log(erfcx(-x/sqrt 2) / 2) - x^2/2`` for x < -1 (no underflow in the far tail),
  ``log1p(-erfc(x/sqrt 2) / 2)`` above.
- ndtri: ``sqrt 2 erfinv(2p - 1)`` for 1/4 <= p <= 3/4 (2p - 1 is exact there); below, a
  rational first guess, then Newton steps on log_ndtr (above, the same at 1 - p, exact), whose slope ``sqrt(2/pi) / erfcx(-x/sqrt 2)`` stays
  finite in the tail: relative accuracy near 1e-16 down to the smallest subnormal p.

Invariant: no kernel here forms a value that underflows or overflows before the result does.
"""

import math

import numpy as np

from . import pointwise as PW
from .arguments import _int_kernel_error
from .pointwise import _erfc64, _erfinv64
from .registry import unary
from .special_polynomials import _float_out
from .._tensor import Tensor

__all__ = []

_F64 = np.dtype(np.float64)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_SQRT2 = math.sqrt(2.0)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI


def _kernel(name, fn):
    """A float kernel computed in float64: torch has no Half, BFloat16 or complex kernel."""
    def kernel(x):
        if x.dtype.kind == "c" or x.dtype.itemsize == 2:
            raise _int_kernel_error(name, x.dtype)
        with np.errstate(all="ignore"):
            out = fn(x.astype(_F64, copy=False))
        return out.astype(x.dtype, copy=False)
    return kernel


def _erfcx_cf(x):
    """erfcx(x) for x >= 2 by the continued fraction of erfc without its exp(-x^2)."""
    t = np.zeros_like(x)
    for k in range(60, 0, -1):
        t = (k / 2.0) / (x + t)
    return 1.0 / (_SQRT_PI * (x + t))


def _erfcx64(x):
    out = np.empty_like(x)
    low = x < 2.0
    xl = x[low]
    out[low] = np.exp(xl * xl) * _erfc64(xl)
    high = x >= 2.0
    out[high] = _erfcx_cf(x[high])
    out[np.isnan(x)] = np.nan
    return out


def _log_ndtr64(x):
    out = np.empty_like(x)
    tail = x < -1.0
    xt = x[tail]
    out[tail] = np.log(_erfcx64(-xt * _INV_SQRT2) * 0.5) - 0.5 * xt * xt
    rest = ~tail
    out[rest] = np.log1p(-0.5 * _erfc64(x[rest] * _INV_SQRT2))
    return out


def _ndtri_lower(q):
    """x with Phi(x) = q for 0 < q <= 1/2."""
    t = np.sqrt(-2.0 * np.log(q))
    # Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4): the Newton steps' starting point.
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
          (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    logq = np.log(q)
    for _ in range(6):  # quadratic convergence: the last steps change nothing
        slope = _SQRT_2_OVER_PI / _erfcx64(-x * _INV_SQRT2)  # d log Phi / dx
        x = x - (_log_ndtr64(x) - logq) / slope
    return x


def _ndtri64(p):
    out = np.full_like(p, np.nan)
    out[p == 0.0] = -np.inf
    out[p == 1.0] = np.inf
    central = (p >= 0.25) & (p <= 0.75)  # 2p - 1 is exact there
    out[central] = _SQRT2 * _erfinv64(2.0 * p[central] - 1.0)
    lower = (p > 0.0) & (p < 0.25)
    out[lower] = _ndtri_lower(p[lower])
    upper = (p > 0.75) & (p < 1.0)
    out[upper] = -_ndtri_lower(1.0 - p[upper])  # 1 - p is exact for p in [1/2, 1]
    return out


ERFCX = unary("special_erfcx", _kernel("erfcx_cpu", _erfcx64), "SpecialErfcxBackward0",
              save=((0, None), ("out", None)), float_only=True, elementwise=True)
LOG_NDTR = unary("special_log_ndtr", _kernel("log_ndtr_cpu", _log_ndtr64),
                 "SpecialLogNdtrBackward0", save=((0, None), ("out", None)), float_only=True,
                 elementwise=True)
NDTRI = unary("special_ndtri", _kernel("ndtri_cpu", _ndtri64), "SpecialNdtriBackward0",
              save=(("out", None),), float_only=True, elementwise=True)


@ERFCX.def_vjp
def _(ctx, g):
    x, res = ctx.saved
    return (g * (2.0 * x * res - _TWO_OVER_SQRT_PI),)


@LOG_NDTR.def_vjp
def _(ctx, g):
    x, res = ctx.saved
    # phi(x) / Phi(x) = exp(-(log Phi + x^2/2)) / sqrt(2 pi), torch's formula
    return (g / _SQRT_2PI * PW.exp(-(res + x * x / 2)),)


@NDTRI.def_vjp
def _(ctx, g):
    (res,) = ctx.saved
    return (g * _SQRT_2PI * PW.exp(res * res / 2),)


def _tensor_arg(fname, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(value).__name__}")


def special_erfcx(input, *, out=None):
    """``exp(input^2) * erfc(input)``, finite where erfc underflows."""
    _tensor_arg("special_erfcx", input)
    return _float_out(ERFCX.call(input), out)


def special_log_ndtr(input, *, out=None):
    """The log of the standard normal CDF, accurate in the far lower tail."""
    _tensor_arg("special_log_ndtr", input)
    return _float_out(LOG_NDTR.call(input), out)


def special_ndtri(input, *, out=None):
    """The inverse of the standard normal CDF (-inf at 0, inf at 1, NaN outside [0, 1])."""
    _tensor_arg("special_ndtri", input)
    return _float_out(NDTRI.call(input), out)
