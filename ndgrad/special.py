"""ndgrad.special: torch.special's names for the special functions ndgrad implements.

Each is the same op as its top-level or nn.functional counterpart (same grad_fn, same
numbers). i0/i0e/i1/i1e, zeta, gammainc/gammaincc and the Bessel functions (J, Y, the modified
I and K, the spherical j0) and Airy's Ai come from ``_ops/bessel.py``; erfcx, log_ndtr and
ndtri from ``_ops/normal_cdf.py``; the orthogonal polynomials from
``_ops/special_polynomials.py``. As in torch, the Bessel functions other than i0/i0e/i1/i1e,
Airy's Ai and the polynomials have no derivative: their results never require grad.
"""

from . import _ops  # noqa: F401  (the ops below are defined by the op modules)
from ._ops import special_polynomials as _poly
from ._ops.bessel import special_airy_ai as airy_ai
from ._ops.bessel import special_bessel_j0 as bessel_j0
from ._ops.bessel import special_bessel_j1 as bessel_j1
from ._ops.bessel import special_bessel_y0 as bessel_y0
from ._ops.bessel import special_bessel_y1 as bessel_y1
from . import _creation
from ._ops import arithmetic as _arithmetic
from ._ops import comparison as _comparison
from ._ops import pointwise as _pointwise
from ._ops import reduction as _reduction
from ._ops.bessel import special_gammainc as gammainc
from ._ops.bessel import special_gammaincc as gammaincc
from ._ops.bessel import special_i0 as i0
from ._ops.bessel import special_i0e as i0e
from ._ops.bessel import special_i1 as i1
from ._ops.bessel import special_i1e as i1e
from ._ops.bessel import special_modified_bessel_i0 as modified_bessel_i0
from ._ops.bessel import special_modified_bessel_i1 as modified_bessel_i1
from ._ops.bessel import special_modified_bessel_k0 as modified_bessel_k0
from ._ops.bessel import special_modified_bessel_k1 as modified_bessel_k1
from ._ops.bessel import special_scaled_modified_bessel_k0 as scaled_modified_bessel_k0
from ._ops.bessel import special_scaled_modified_bessel_k1 as scaled_modified_bessel_k1
from ._ops.bessel import special_spherical_bessel_j0 as spherical_bessel_j0
from ._ops.bessel import special_zeta as zeta
from ._ops.normal_cdf import special_erfcx as erfcx
from ._ops.normal_cdf import special_log_ndtr as log_ndtr
from ._ops.normal_cdf import special_ndtri as ndtri
from ._tensor import Tensor
from .nn import functional as _functional

chebyshev_polynomial_t = _poly.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _poly.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _poly.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _poly.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _poly.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _poly.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _poly.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _poly.special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = _poly.special_hermite_polynomial_h
hermite_polynomial_he = _poly.special_hermite_polynomial_he
laguerre_polynomial_l = _poly.special_laguerre_polynomial_l
legendre_polynomial_p = _poly.special_legendre_polynomial_p

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "digamma", "psi", "polygamma",
           "gammaln", "multigammaln", "xlogy", "xlog1py", "log1p", "expm1", "exp2", "sinc",
           "round", "logsumexp", "softmax", "log_softmax", "ndtr", "log_ndtr", "entr",
           "i0", "i0e", "i1", "i1e", "zeta", "gammainc", "gammaincc", "erfcx", "ndtri",
           "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
           "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
           "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]


def erf(input):
    return _pointwise.erf(input)


def erfc(input):
    return _pointwise.erfc(input)


def erfinv(input):
    return _pointwise.erfinv(input)


def expit(input):
    return _pointwise.sigmoid(input)


def logit(input, eps=None):
    return _pointwise.logit(input, eps)


def digamma(input):
    return _pointwise.digamma(input)


psi = digamma


def polygamma(n, input):
    return _pointwise.polygamma(n, input)


def gammaln(input):
    return _pointwise.lgamma(input)


def multigammaln(input, p):
    return _pointwise.mvlgamma(input, p)


def xlogy(input, other):
    return _arithmetic.xlogy(input, other)


def xlog1py(input, other):
    """input * log1p(other), 0 where input is 0 (as xlogy)."""
    x = input if isinstance(input, Tensor) else _creation.tensor(input)
    return _comparison.where(x == 0, _creation.zeros_like(x * _pointwise.log1p(other)),
                             x * _pointwise.log1p(other))


def log1p(input):
    return _pointwise.log1p(input)


def expm1(input):
    return _pointwise.expm1(input)


def exp2(input):
    return _pointwise.exp2(input)


def sinc(input):
    return _pointwise.sinc(input)


def round(input, *, decimals=0):
    return _pointwise.round(input, decimals=decimals)


def logsumexp(input, dim, keepdim=False):
    return _reduction.logsumexp(input, dim, keepdim)


def softmax(input, dim, *, dtype=None):
    return _functional.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _functional.log_softmax(input, dim, dtype=dtype)


def ndtr(input):
    """The standard normal CDF: (1 + erf(x / sqrt(2))) / 2."""
    return (1 + _pointwise.erf(input * 0.7071067811865476)) * 0.5


def entr(input):
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    x = input
    safe = _comparison.where(x > 0, x, _creation.ones_like(x))
    val = _comparison.where(x > 0, -x * _pointwise.log(safe), _creation.zeros_like(x))
    return _comparison.where(x < 0, _creation.full_like(x, float("-inf")), val)
