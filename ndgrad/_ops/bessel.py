"""Modified Bessel functions of the first kind (i0, i1 and their exponentially scaled forms
i0e, i1e), the Hurwitz zeta function and the regularized incomplete gamma functions
(igamma = P(a, x), igammac = Q(a, x)), with torch's semantics, gradients and node names.

Numerics (float64, NumPy only; float32/float16 results are the float64 values rounded):

- I0, I1: the positive-term power series ``sum (x^2/4)^k / (k! (k+nu)!)`` for |x| <= 20 and
  the Hankel asymptotic series of ``I_nu(x) e^{-x} sqrt(2 pi x)`` above (its smallest term is
  below 1e-18 there). Like torch, the unscaled functions are inf where ``exp(|x|)`` overflows
  in the working precision (float32 for float32/float16 inputs) and NaN at +-inf.
- zeta(x, q): direct summation of ``(q + k)^-x`` (at least nine terms, until ``q + k > 9``),
  then the Euler-Maclaurin tail with Bernoulli numbers up to B_24; each element stops as soon
  as a term is below 1.1e-16 of the sum. torch's domain rules: inf at x = 1 and at
  non-positive integer q, NaN for x < 1 or for negative non-integer q with non-integer x.
- P and Q: the series of P for x < a + 1, Lentz's continued fraction of Q above; for a < 1 and
  x <= 1.5, Q from its own series ``-expm1(a log x - lgamma(1+a)) - ...`` so that Q keeps its
  relative accuracy when it is tiny. The prefactor ``x^a e^-x / Gamma(a+1)`` is formed
  from ``a (t - log1p t)`` with t = (x - a) / a and Stirling's remainder for a >= 10, so
  large a near x keeps full accuracy. Iterations grow like sqrt(a) near the transition, so
  for a >= 1e5 and |x/a - 1| <= 0.3 Temme's uniform expansion (erfc plus three terms) is used.

Measured against torch 2.13 (tests/test_bessel.py): about 1e-14 relative in float64 and
within a few float32 ulps.
"""

import math

import numpy as np

from .._tensor import Tensor
from . import comparison as CMP
from . import pointwise as PW
from .pointwise import _erfc64, _int_kernel_error, _lgamma64, lgamma
from .inplace import apply_inplace
from .registry import binary, no_forward_ad, unary

__all__ = ["i0", "special_i0e", "special_i1", "special_i1e", "special_zeta", "igamma",
           "igammac"]

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_EPS = 1.1102230246251565e-16  # 2^-53: the stopping threshold of the sums
_SERIES_MAX = 20.0  # |x| above which the Bessel asymptotic series is used
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_EULER_GAMMA = 0.5772156649015329
# A safety cap on series / continued-fraction terms: about 10 sqrt(a) are needed, and a is
# below the Temme threshold (1e5) wherever they are used near the transition.
_MAX_TERMS = 100000

# Bernoulli numbers B_2 .. B_24 and the Euler-Maclaurin divisors (2j)! / B_2j.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM_DIV = tuple(math.factorial(2 * j + 2) / b for j, b in enumerate(_BERNOULLI))


# =========================================================================== Bessel kernels
def _bessel_series(x, nu):
    """sum_k (x^2/4)^k / (k! (k+nu)!) times (x/2)^nu, for 0 <= x <= 20 (positive terms)."""
    y = 0.25 * x * x
    term = np.ones_like(x) if nu == 0 else 0.5 * x
    total = term.copy()
    for k in range(1, 90):
        term = term * y / (k * (k + nu))
        total = total + term
        if k % 8 == 0 and not np.any(term > 1e-17 * total):
            break
    return total


def _bessel_asymptotic(x, nu):
    """I_nu(x) e^{-x} for x > 20: the Hankel series, cut at its smallest term (< 1e-18)."""
    mu = 4.0 * nu * nu
    c = np.ones_like(x)
    total = c.copy()
    inv8x = 0.125 / x
    for k in range(1, 60):
        c = c * (((2 * k - 1) ** 2 - mu) / k) * inv8x
        total = total + c
        if not np.any(np.abs(c) > 1e-18 * np.abs(total)):
            break
    with np.errstate(divide="ignore"):
        return _INV_SQRT_2PI / np.sqrt(x) * total


def _bessel_scaled(ax, nu):
    """I_nu(ax) e^{-ax} for ax >= 0 (NaN passes through)."""
    out = np.empty_like(ax)
    small = ax <= _SERIES_MAX
    xs = ax[small]
    out[small] = _bessel_series(xs, nu) * np.exp(-xs)
    big = ~small & ~np.isnan(ax)
    out[big] = _bessel_asymptotic(ax[big], nu)
    out[np.isnan(ax)] = np.nan
    return out


def _bessel_unscaled(x, nu, work):
    """I_nu(x): inf where exp(|x|) overflows in `work` precision, NaN at +-inf (as torch)."""
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax <= _SERIES_MAX
    out[small] = _bessel_series(ax[small], nu)
    big = ~small & ~np.isnan(ax)
    xb = ax[big]
    half = np.exp(0.5 * xb)  # e^x as two halves: no overflow before the true value's
    out[big] = (_bessel_asymptotic(xb, nu) * half) * half
    out[np.isnan(ax)] = np.nan
    out = np.where(np.isinf(np.exp(ax.astype(work))), np.inf, out)
    out = np.where(np.isinf(ax), np.nan, out)
    return out if nu == 0 else _odd(out, x)


def _odd(value, x):
    """An odd function's value at x from its value at |x| (+0 at -0, as torch)."""
    return np.where(x < 0, -value, value)


def _unary_kernel(name, fn):
    """A float kernel computed in float64 (complex inputs: torch's NotImplementedError)."""
    def kernel(x):
        if x.dtype.kind == "c":
            raise _int_kernel_error(name, x.dtype)
        work = _F64 if x.dtype == _F64 else _F32
        with np.errstate(all="ignore"):
            out = fn(x.astype(_F64, copy=False), work)
        return out.astype(x.dtype, copy=False)
    return kernel


def _i0_64(x, work):
    return _bessel_unscaled(x, 0, work)


def _i1_64(x, work):
    return _bessel_unscaled(x, 1, work)


def _i0e_64(x, work):
    return _bessel_scaled(np.abs(x), 0)


def _i1e_64(x, work):
    return _odd(_bessel_scaled(np.abs(x), 1), x)


# =========================================================================== zeta kernel
def _zeta_em(x, q):
    """Hurwitz zeta for the elements past torch's domain rules: direct sum, then
    Euler-Maclaurin; each element stops once a term is below _EPS of its sum (NaN ratios
    never stop it, as in the reference algorithm)."""
    s = np.power(q, -x)
    out = np.empty_like(s)
    idx = np.arange(s.size)
    a = q.copy()
    b = np.zeros_like(s)
    i = 0
    # Direct summation over the elements still running (they all did the same i steps).
    while idx.size:
        run = (i < 9) | (a <= 9.0)
        if not run.all():
            stop = ~run
            _zeta_tail(x[stop], a[stop], b[stop], s[stop], out, idx[stop])
            idx, x, a, b, s = idx[run], x[run], a[run], b[run], s[run]
            if not idx.size:
                break
        i += 1
        a = a + 1.0
        b = np.power(a, -x)
        s = s + b
        conv = np.abs(b / s) < _EPS
        if conv.any():
            out[idx[conv]] = s[conv]
            keep = ~conv
            idx, x, a, b, s = idx[keep], x[keep], a[keep], b[keep], s[keep]
    return out


def _zeta_tail(x, w, b, s, out, idx):
    """The Euler-Maclaurin remainder at w = q + N (b = w^-x, already in s)."""
    s = s + b * w / (x - 1.0) - 0.5 * b
    done = np.zeros(s.shape, dtype=bool)
    fact = np.ones_like(s)
    k = 0.0
    for div in _EM_DIV:
        fact = fact * (x + k)
        b = b / w
        t = fact * b / div
        s = np.where(done, s, s + t)
        done |= np.abs(t / s) < _EPS
        k += 1.0
        fact = fact * (x + k)
        b = b / w
        k += 1.0
    out[idx] = s


def _zeta64(x, q):
    x, q = np.broadcast_arrays(np.asarray(x, _F64), np.asarray(q, _F64))
    out = np.full(x.shape, np.nan)
    flat_x = x.reshape(-1)
    flat_q = q.reshape(-1)
    res = out.reshape(-1)
    one = flat_x == 1.0
    res[one] = np.inf
    open_ = ~one & ~(flat_x < 1.0)
    nonpos = open_ & (flat_q <= 0)
    int_q = nonpos & (flat_q == np.floor(flat_q))
    res[int_q] = np.inf
    bad = nonpos & ~int_q & (flat_x != np.floor(flat_x))
    run = open_ & ~int_q & ~bad
    if run.any():
        res[run] = _zeta_em(flat_x[run].copy(), flat_q[run].copy())
    return res.reshape(x.shape)


def _zeta_kernel(x, q):
    xa, qa = np.asarray(x), np.asarray(q)
    dt = np.result_type(xa.dtype if isinstance(x, np.ndarray) else qa.dtype,
                        qa.dtype if isinstance(q, np.ndarray) else xa.dtype)
    if dt.kind == "c" or dt == np.float16:
        raise _int_kernel_error("zeta_cpu", dt)
    with np.errstate(all="ignore"):
        out = _zeta64(xa, qa)
    return out.astype(dt, copy=False)


# =========================================================================== igamma kernels
def _zeta_consts(n):
    """zeta(2), ..., zeta(n) in float64 (by the kernel above)."""
    s = np.arange(2, n + 1, dtype=_F64)
    with np.errstate(all="ignore"):
        return _zeta64(s, np.ones_like(s))


_ZETA_K = _zeta_consts(70)  # for the series of lgamma(1 + a)


def _lgamma1p(a):
    """lgamma(1 + a) for 0 <= a < 1, accurate relative to its (small) value near a = 0:
    ``-gamma a + sum_k (-1)^k zeta(k) a^k / k`` for a <= 1/2."""
    out = np.empty_like(a)
    small = a <= 0.5
    s = a[small]
    acc = np.zeros_like(s)
    for k in range(len(_ZETA_K) + 1, 1, -1):  # Horner from the highest power
        acc = (acc + (-1.0) ** k * _ZETA_K[k - 2] / k) * s
    out[small] = (acc - _EULER_GAMMA) * s
    out[~small] = _lgamma64(1.0 + a[~small])
    return out


def _t_minus_log1p(t, ratio):
    """t - log(1 + t) for t = ratio - 1: the series for |t| <= 1/2 (no cancellation), else
    from `ratio` itself (1 + t would lose the digits of a ratio near 0)."""
    out = np.empty_like(t)
    small = np.abs(t) <= 0.5
    s = t[small]
    acc = np.zeros_like(s)
    for k in range(64, 1, -1):
        acc = (acc + (-1.0) ** k / k) * s
    out[small] = acc * s
    big = ~small
    out[big] = t[big] - np.log(ratio[big])
    return out


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a + 1)) for a > 0, x > 0."""
    out = np.empty_like(a)
    small = a < 10.0
    As, xs = a[small], x[small]
    out[small] = As * np.log(xs) - xs - _lgamma1p_any(As)
    big = ~small
    ab, xb = a[big], x[big]
    inv = 1.0 / ab
    inv2 = inv * inv
    # Stirling's remainder mu(a) = lgamma(a) - (a - 1/2) log a + a - log(2 pi)/2.
    mu = inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (
        1.0 / 1680 - inv2 * (1.0 / 1188 - inv2 * (691.0 / 360360 - inv2 / 156))))))
    out[big] = -ab * _t_minus_log1p((xb - ab) / ab, xb / ab) - mu - _HALF_LOG_2PI - 0.5 * np.log(ab)
    return out


def _lgamma1p_any(a):
    out = np.empty_like(a)
    low = a < 1.0
    out[low] = _lgamma1p(a[low])
    out[~low] = _lgamma64(a[~low] + 1.0)
    return out


def _p_series(a, x, logpre):
    """P(a, x) = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)) (positive terms)."""
    out = np.empty_like(a)
    idx = np.arange(a.size)
    term = np.ones_like(a)
    total = np.ones_like(a)
    n = 0
    while idx.size:
        n += 1
        term = term * x / (a + n)
        total = total + term
        conv = ~(term > _EPS * total) | (n > _MAX_TERMS)
        if conv.any():
            out[idx[conv]] = total[conv]
            keep = ~conv
            idx, a, x, term, total = idx[keep], a[keep], x[keep], term[keep], total[keep]
    return out * np.exp(logpre)


def _q_cf(a, x):
    """Q(a, x) / (x^a e^-x / Gamma(a)): the continued fraction of Gamma(a, x) by the modified
    Lentz method, for x >= a + 1."""
    tiny = 1e-300
    out = np.empty_like(a)
    idx = np.arange(a.size)
    bn = x + 1.0 - a
    c = np.full_like(a, 1.0 / tiny)
    d = 1.0 / bn
    h = d.copy()
    n = 0
    while idx.size:
        n += 1
        an = -n * (n - a)
        bn = bn + 2.0
        d = an * d + bn
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = bn + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        conv = ~(np.abs(delta - 1.0) > _EPS) | (n > _MAX_TERMS)
        if conv.any():
            out[idx[conv]] = h[conv]
            keep = ~conv
            idx, a, bn, c, d, h = idx[keep], a[keep], bn[keep], c[keep], d[keep], h[keep]
    return out


def _q_small_a(a, x):
    """Q(a, x) for a < 1, x <= 1.5: 1 - x^a/Gamma(a+1) (1 + a sum_{n>=1} (-x)^n/(n!(a+n)))."""
    y = a * np.log(x) - _lgamma1p(a)
    term = np.ones_like(a)
    total = np.zeros_like(a)
    for n in range(1, 60):
        term = term * (-x) / n
        total = total + term / (a + n)
        if n % 8 == 0 and not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return -np.expm1(y) - np.exp(y) * a * total


# Taylor coefficients in eta of Temme's c0(eta) = 1/(lambda-1) - 1/eta and
# c1(eta) = 1/eta^3 - 1/(lambda-1)^3 - 1/(lambda-1)^2 - 1/(12(lambda-1)), lambda = x/a,
# computed with mpmath by Cauchy integrals (radius 1/2) of the exact functions; c2(0) = 25/6048.
_TEMME_C0 = (-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -1.787551440329218107e-4,
             3.9192631785224377817e-5, -2.1854485106799921615e-6, -1.8540622107151599607e-6,
             8.296711340953086005e-7, -1.7665952736826079304e-7, 6.7078535434014985804e-9,
             1.0261809784240308043e-8, -4.3820360184533531866e-9)
_TEMME_C1 = (-1 / 540, -1 / 288, 1 / 378, -9.9022633744855967078e-4, 1 / 4860,
             -4.0187757201646090535e-7, -1.8098550334489977837e-5, 7.6491609160811100846e-6,
             -1.6120900894563446004e-6, 4.6471278028074343423e-9, 1.3786334469157209593e-7,
             -5.752545603517704964e-8, 1.1951628599778147324e-8, -1.7543241719747647624e-11)
_TEMME_C2 = 25 / 6048
_TEMME_MIN_A = 1e5  # Temme's expansion for a >= this and |x/a - 1| <= 0.3 (|eta| <= 0.32)


def _poly(coefs, z):
    acc = np.zeros_like(z)
    for c in reversed(coefs):
        acc = acc * z + c
    return acc


def _temme(a, x, upper):
    """Temme's uniform expansion: Q = erfc(eta sqrt(a/2)) / 2 + R, P = erfc(-eta sqrt(a/2))
    / 2 - R, R = exp(-a eta^2 / 2) / sqrt(2 pi a) (c0 + c1/a + c2/a^2). The next term is
    below 1e-13 relative for a >= 1e5."""
    t = (x - a) / a
    eta = np.sign(t) * np.sqrt(2.0 * _t_minus_log1p(t, x / a))
    inv = 1.0 / a
    series = _poly(_TEMME_C0, eta) + inv * (_poly(_TEMME_C1, eta) + inv * _TEMME_C2)
    r = np.exp(-0.5 * a * eta * eta) * _INV_SQRT_2PI / np.sqrt(a) * series
    z = eta * np.sqrt(0.5 * a)
    return 0.5 * _erfc64(z) + r if upper else 0.5 * _erfc64(-z) - r


def _igamma_pair(a, x, upper):
    """P(a, x) (upper=False) or Q(a, x) (upper=True) with torch's special values."""
    a, x = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(x, _F64))
    shape = a.shape
    a = a.reshape(-1)
    x = x.reshape(-1)
    res = np.full(a.shape, np.nan)
    undecided = np.ones(a.shape, dtype=bool)

    def settle(mask, value):
        m = undecided & mask
        res[m] = value
        undecided[m] = False

    lo, hi = (0.0, 1.0) if not upper else (1.0, 0.0)  # values of P's 0 and 1
    settle((x < 0) | (a < 0), np.nan)
    settle((a == 0) & (x > 0), hi)
    settle(a == 0, np.nan)
    settle(x == 0, lo)
    settle(np.isinf(a) & np.isinf(x), np.nan)
    settle(np.isinf(a), lo)
    settle(np.isinf(x), hi)
    settle(np.isnan(a) | np.isnan(x), np.nan)
    m = undecided
    if m.any():
        res[m] = _igamma_core(a[m], x[m], upper)
    return res.reshape(shape)


def _igamma_core(a, x, upper):
    """P or Q for finite a > 0, x > 0."""
    out = np.full_like(a, np.nan)
    temme = (a >= _TEMME_MIN_A) & (np.abs(x - a) <= 0.3 * a)
    if temme.any():
        out[temme] = _temme(a[temme], x[temme], upper)
        rest = ~temme
        out[rest] = _igamma_core(a[rest], x[rest], upper)
        return out
    logpre = _log_prefactor(a, x)
    ser = x < a + 1.0
    small_q = (a < 1.0) & (x <= 1.5)
    if upper:
        sq = small_q
        out[sq] = _q_small_a(a[sq], x[sq])
        cf = ~sq & ~ser
        out[cf] = _q_cf(a[cf], x[cf]) * (a[cf] * np.exp(logpre[cf]))
        ps = ~sq & ser
        out[ps] = 1.0 - _p_series(a[ps], x[ps], logpre[ps])
    else:
        out[ser] = _p_series(a[ser], x[ser], logpre[ser])
        cf = ~ser
        out[cf] = 1.0 - _q_cf(a[cf], x[cf]) * (a[cf] * np.exp(logpre[cf]))
    return out


def _igamma_kernel(name, upper):
    """The binary kernel: torch has no integer, bool or complex igamma (NotImplementedError
    on the promoted dtype); floats are computed in float64 and rounded back."""
    def kernel(a, x):
        aa, xa = np.asarray(a), np.asarray(x)
        dt = np.result_type(aa, xa)
        if dt.kind != "f":
            raise _int_kernel_error(name, dt)
        with np.errstate(all="ignore"):
            out = _igamma_pair(aa, xa, upper)
        return out.astype(dt, copy=False)
    return kernel


# =========================================================================== ops and rules
I0 = unary("i0", _unary_kernel("i0_vml_cpu", _i0_64), "I0Backward0", save=((0, None),),
           float_only=True)
I0E = unary("special_i0e", _unary_kernel("i0e_cpu", _i0e_64), "SpecialI0EBackward0",
            save=((0, None), ("out", None)), float_only=True)
I1 = unary("special_i1", _unary_kernel("i1_cpu", _i1_64), "SpecialI1Backward0",
           save=((0, None), ("out", None)), float_only=True)
I1E = unary("special_i1e", _unary_kernel("i1e_cpu", _i1e_64), "SpecialI1EBackward0",
            save=((0, None), ("out", None)), float_only=True)


@I0.def_vjp
def _(ctx, g):
    return (g * I1.call(ctx.saved[0]),)


@I0E.def_vjp
def _(ctx, g):
    x, res = ctx.saved
    return (g * (I1E.call(x) - PW.sgn(x) * res),)


def _tiny_safe(x):
    """(|x| > eps, x with the tiny values replaced by eps): torch's guard in i1/i1e's
    backward, where the 1/x term would give NaN at 0 (the limit there is 1/2)."""
    eps = float(np.finfo(x._data.dtype).eps)
    big = PW.abs(x) > eps
    return big, CMP.where(big, x, eps)


@I1.def_vjp
def _(ctx, g):
    x, res = ctx.saved
    big, safe = _tiny_safe(x)
    return (g * CMP.where(big, I0.call(safe) - res * PW.reciprocal(safe), 0.5),)


@I1E.def_vjp
def _(ctx, g):
    x, res = ctx.saved
    big, safe = _tiny_safe(x)
    slope = I0E.call(safe) - res * (PW.sgn(safe) + PW.reciprocal(safe))
    return (g * CMP.where(big, slope, 0.5),)


# zeta: SpecialZetaBackward0 (two tensors), 1 (scalar x), 2 (scalar q). torch differentiates
# q only (d/dq zeta(x, q) = -x zeta(x + 1, q)); x's derivative raises.
ZETA = binary("special_zeta", _zeta_kernel, "SpecialZetaBackward0", save=((0, 1), (1, 1)),
              promote="float")
ZETA_SELF_SCALAR = binary("special_zeta_self_scalar", _zeta_kernel, "SpecialZetaBackward1",
                          save=((0, 1), (1, 1)), promote="float")
ZETA_OTHER_SCALAR = binary("special_zeta_other_scalar", _zeta_kernel, "SpecialZetaBackward2",
                           promote="float")


def _wanted(ctx, i):
    """Whether the running backward needs input i's gradient (torch raises for a missing
    derivative only then: autograd.grad with respect to other inputs works)."""
    edge = ctx._next[i] if i < len(ctx._next) else None
    if edge is None:
        return False
    from .._graph_core import current_graph_task
    task = current_graph_task()
    if task is None or task.needed is None:
        return True
    return task.needed.get(edge[0], True)


def _zeta_vjp(ctx, g):
    n = ctx._next
    if _wanted(ctx, 0):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    if len(n) < 2 or not n[1]:
        return None, None
    x, q = ctx.saved
    return None, g * (-x * special_zeta(x + 1.0, q))


IGAMMA = binary("igamma", _igamma_kernel("igamma_cpu", False), "IgammaBackward0",
                save=((0, 1), (1, 1)))
IGAMMAC = binary("igammac", _igamma_kernel("igammac_cpu", True), "IgammacBackward0",
                 save=((0, 1), (1, 1)))


def _igamma_vjp(name, sign):
    def vjp(ctx, g):
        n = ctx._next
        if _wanted(ctx, 0):
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        if not n[1]:
            return None, None
        a, x = ctx.saved
        # the density x^(a-1) e^-x / Gamma(a), by torch's formula
        density = PW.exp((a - 1) * PW.log(x) - x - lgamma(a))
        return None, (g * density if sign > 0 else -g * density)
    return vjp


for _op in (ZETA, ZETA_SELF_SCALAR, ZETA_OTHER_SCALAR):
    _op.def_vjp(_zeta_vjp)
    _op.def_jvp(no_forward_ad("special_zeta"))
IGAMMA.def_vjp(_igamma_vjp("igamma", 1))
IGAMMAC.def_vjp(_igamma_vjp("igammac", -1))
IGAMMA.def_jvp(no_forward_ad("igamma"))
IGAMMAC.def_jvp(no_forward_ad("igammac"))


# =========================================================================== public functions
def _tensor_arg(fname, value, argname="input", pos=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, "
                        f"not {type(value).__name__}")


def i0(input, *, out=None):
    """The modified Bessel function of the first kind of order 0 (``torch.i0``)."""
    _tensor_arg("i0", input)
    return PW._out(I0.call(input), out)


def special_i0(input, *, out=None):
    _tensor_arg("special_i0", input)
    return PW._out(I0.call(input), out)


def special_i0e(input, *, out=None):
    """``i0(x) * exp(-|x|)``, finite for every finite x."""
    _tensor_arg("special_i0e", input)
    return PW._out(I0E.call(input), out)


def special_i1(input, *, out=None):
    """The modified Bessel function of the first kind of order 1 (odd in x)."""
    _tensor_arg("special_i1", input)
    return PW._out(I1.call(input), out)


def special_i1e(input, *, out=None):
    """``i1(x) * exp(-|x|)``."""
    _tensor_arg("special_i1e", input)
    return PW._out(I1E.call(input), out)


_ZETA_SIGNATURES = ("special_zeta() received an invalid combination of arguments - got "
                    "({}, {}), but expected one of:\n"
                    " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                    " * (Number self, Tensor other, *, Tensor out = None)\n"
                    " * (Tensor input, Number other, *, Tensor out = None)\n")


def special_zeta(input, other, *, out=None):
    """The Hurwitz zeta function ``sum_k (other + k)^-input``."""
    ti, to = isinstance(input, Tensor), isinstance(other, Tensor)
    if ti and to:
        op = ZETA
    elif to and isinstance(input, (int, float)):
        op = ZETA_SELF_SCALAR
    elif ti and isinstance(other, (int, float)):
        op = ZETA_OTHER_SCALAR
    else:
        raise TypeError(_ZETA_SIGNATURES.format(type(input).__name__, type(other).__name__))
    return PW._out(op.call(input, other), out)


def _igamma_fn(op, fname):
    def fn(input, other, *, out=None):
        _tensor_arg(fname, input)
        _tensor_arg(fname, other, "other", 2)
        return PW._out(op.call(input, other), out)
    return fn


igamma = _igamma_fn(IGAMMA, "igamma")
igamma.__doc__ = "The regularized lower incomplete gamma function P(input, other)."
igammac = _igamma_fn(IGAMMAC, "igammac")
igammac.__doc__ = "The regularized upper incomplete gamma function Q(input, other) = 1 - P."
special_gammainc = _igamma_fn(IGAMMA, "special_gammainc")
special_gammaincc = _igamma_fn(IGAMMAC, "special_gammaincc")


# Tensor methods (bound in methods.py): i0, igamma, igammac and their in-place forms.
def _method_i0(self):
    return I0.call(self)


def _method_i0_(self):
    return apply_inplace(I0, self)


def _method_igamma(self, other):
    _tensor_arg("igamma", other, "other", 1)
    return IGAMMA.call(self, other)


def _method_igamma_(self, other):
    _tensor_arg("igamma_", other, "other", 1)
    return apply_inplace(IGAMMA, self, other)


def _method_igammac(self, other):
    _tensor_arg("igammac", other, "other", 1)
    return IGAMMAC.call(self, other)


def _method_igammac_(self, other):
    _tensor_arg("igammac_", other, "other", 1)
    return apply_inplace(IGAMMAC, self, other)
