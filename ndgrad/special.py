"""ndgrad.special: torch.special's names for the special functions ndgrad implements.

Each is the same op as its top-level or nn.functional counterpart (same grad_fn, same
numbers). i0/i0e/i1/i1e, zeta and gammainc/gammaincc come from ``_ops/bessel.py``; the
other Bessel functions and the Airy functions are not implemented.
"""

from . import _ops  # noqa: F401  (the ops below are defined by the op modules)
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
from ._ops.bessel import special_zeta as zeta
from ._tensor import Tensor
from .nn import functional as _functional

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "digamma", "psi", "polygamma",
           "gammaln", "multigammaln", "xlogy", "xlog1py", "log1p", "expm1", "exp2", "sinc",
           "round", "logsumexp", "softmax", "log_softmax", "ndtr", "log_ndtr", "entr",
           "i0", "i0e", "i1", "i1e", "zeta", "gammainc", "gammaincc"]


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


def log_ndtr(input):
    return _pointwise.log(ndtr(input))


def entr(input):
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    x = input
    safe = _comparison.where(x > 0, x, _creation.ones_like(x))
    val = _comparison.where(x > 0, -x * _pointwise.log(safe), _creation.zeros_like(x))
    return _comparison.where(x < 0, _creation.full_like(x, float("-inf")), val)
