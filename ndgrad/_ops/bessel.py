"""Modified Bessel functions of the first kind (i0, i1 and their exponentially scaled forms
i0e, i1e), the Hurwitz zeta function and the regularized incomplete gamma functions
(igamma = P(a, x), igammac = Q(a, x)), with torch's semantics, gradients and node names; and
torch.special's Bessel functions that torch does not differentiate (their results never
require grad): J0, J1, Y0, Y1, modified_bessel_i0/i1/k0/k1, the scaled K0/K1, the spherical
j0 and Airy's Ai.

Numerics (float64, NumPy only; float32/float16 results are the float64 values rounded):

- I0, I1: the positive-term power series ``sum (x^2/4)^k / (k! (k+nu)!)`` for |x| <= 20 and
  the Hankel asymptotic series of ``I_nu(x) e^{-x} sqrt(2 pi x)`` above (its smallest term is
  below 1e-18 there). Like torch, the unscaled functions are inf where ``exp(|x|)`` overflows
  in the working precision (float32 for float32/float16 inputs) and NaN at +-inf.
- J0, J1 for 1 <= |x| <= 25: the Fourier coefficients of ``exp(i x sin t)`` (Jacobi-Anger,
  one FFT of 256 samples gives every J_k to about 1e-16 absolute); the power series below 1;
  Hankel's P/Q series above 25, with the phase taken from NumPy's exactly reduced sin/cos of
  x. Y0, Y1 from the same J_k by Neumann's series. K0, K1: the logarithmic series for x <= 1,
  the trapezoid rule on ``int exp(-x cosh t) cosh(nu t) dt`` (exponentially accurate) up to
  25, the Hankel series above. Ai: Taylor steps of ``Ai'' = x Ai`` on [-9, 1], K_1/3 above,
  the asymptotic series below. Measured against mpmath to about 1e-14 (J, Y, Ai absolute
  near their zeros); torch's own J/Y kernels are only about 1e-7 accurate for 5 < x < 12 and
  its Ai about 1e-5 near x = -2.1 (docs/decisions.md).
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

from .._tensor import Tensor, _from_array
from . import comparison as CMP
from . import pointwise as PW
from .arguments import _int_kernel_error
from .pointwise import _erfc64, _lgamma64, lgamma
from .inplace import apply_inplace
from .registry import binary, no_forward_ad, unary
from .._graph_core import current_graph_task
from .special_polynomials import _float_out
from .. import _dtype

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


# =========================================================================== J, Y, K kernels
_HANKEL_FROM = 25.0  # |x| above which J, Y and K come from their asymptotic (Hankel) series
_FFT_POINTS = 256  # samples of exp(i x sin t): J_k (k <= 81) aliased by J_175(25) < 1e-80
_NEUMANN_TERMS = 40  # J_2k / k terms of Y0's Neumann series (J_80(25) < 1e-30)
_CHUNK = 4096  # elements per FFT batch (bounds the (n, 256) complex work array)


def _bessel_j_orders(x, orders=2 * _NEUMANN_TERMS + 2, points=_FFT_POINTS):
    """Columns J_0(x) .. J_{orders-1}(x) for |x| <= 25: the Fourier coefficients of
    exp(i x sin t) (Jacobi-Anger), with about 1e-16 absolute error (J0 and J1 alone need only
    64 samples: their aliases J_63(25), J_64(25) are below 1e-18)."""
    t = np.arange(points) * (2.0 * math.pi / points)
    sin_t = np.sin(t)
    out = np.empty((x.size, orders))
    for s in range(0, x.size, _CHUNK):
        f = np.exp(1j * x[s:s + _CHUNK, None] * sin_t)
        out[s:s + _CHUNK] = (np.fft.fft(f, axis=1)[:, :orders] / points).real
    return out


def _bessel_j_series(x, nu):
    """J_nu(x) (nu = 0, 1) by its power series, for |x| < 1 (full relative accuracy at 0)."""
    y = -0.25 * x * x
    term = np.ones_like(x) if nu == 0 else 0.5 * x
    total = term.copy()
    for k in range(1, 20):
        term = term * y / (k * (k + nu))
        total = total + term
    return total


def _hankel_pq(x, nu):
    """Hankel's P and Q series of order nu at x >= 25, cut where terms fall below 1e-17:
    J = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y = sqrt(2/(pi x)) (P sin chi + Q cos chi)."""
    mu = 4.0 * nu * nu
    p = np.ones_like(x)
    q = np.zeros_like(x)
    term = np.ones_like(x)
    inv8x = 0.125 / x
    for k in range(1, 40):
        term = term * ((mu - (2 * k - 1) ** 2) / k) * inv8x
        if k % 2:
            q = q + (term if k % 4 == 1 else -term)
        else:
            p = p + (term if k % 4 == 0 else -term)
        if not np.any(np.abs(term) > 1e-17):
            break
    return p, q


def _hankel_jy(x, nu):
    """(J_nu(x), Y_nu(x)) for x >= 25; chi = x - (2 nu + 1) pi / 4 is applied through the
    exactly reduced sin x and cos x, not by subtracting from x."""
    p, q = _hankel_pq(x, nu)
    s, c = np.sin(x), np.cos(x)
    r = 1.0 / math.sqrt(2.0)
    cos_chi, sin_chi = ((c + s) * r, (s - c) * r) if nu == 0 else ((s - c) * r, -(s + c) * r)
    amp = np.sqrt(2.0 / (math.pi * x))
    return amp * (p * cos_chi - q * sin_chi), amp * (p * sin_chi + q * cos_chi)


def _bessel_j64(x, nu):
    """J_0 (even) or J_1 (odd), NaN at +-inf (as torch)."""
    ax = np.abs(x)
    out = np.full_like(ax, np.nan)
    small = ax < 1.0
    out[small] = _bessel_j_series(ax[small], nu)
    mid = (ax >= 1.0) & (ax <= _HANKEL_FROM)
    out[mid] = _bessel_j_orders(ax[mid], orders=2, points=64)[:, nu]
    big = (ax > _HANKEL_FROM) & np.isfinite(ax)
    out[big] = _hankel_jy(ax[big], nu)[0]
    return out if nu == 0 else _odd(out, x)


def _neumann_y(x, nu):
    """Y_0 or Y_1 for 0 < x <= 25 from the J_k by the Neumann series
    Y0 = (2/pi) ((log(x/2) + gamma) J0 - 2 sum_k (-1)^k J_2k / k) and its derivative
    Y1 = -Y0' = (2/pi) ((log(x/2) + gamma) J1 - J0/x + sum_k (-1)^k (J_2k-1 - J_2k+1) / k)."""
    j = _bessel_j_orders(x)
    small = x < 1.0
    j[small, 0] = _bessel_j_series(x[small], 0)
    j[small, 1] = _bessel_j_series(x[small], 1)
    k = np.arange(1, _NEUMANN_TERMS + 1)
    sign = np.where(k % 2 == 0, 1.0, -1.0) / k
    lg = np.log(0.5 * x) + _EULER_GAMMA
    if nu == 0:
        return (2.0 / math.pi) * (lg * j[:, 0] - 2.0 * (j[:, 2::2] @ sign))
    odd = j[:, 1:-1:2] - j[:, 3::2]
    return (2.0 / math.pi) * (lg * j[:, 1] - j[:, 0] / x + odd @ sign)


def _bessel_y64(x, nu):
    """Y_0 or Y_1: -inf at 0, NaN below 0 and at inf (as torch)."""
    out = np.full_like(x, np.nan)
    out[x == 0] = -np.inf
    mid = (x > 0) & (x <= _HANKEL_FROM)
    out[mid] = _neumann_y(x[mid], nu)
    big = (x > _HANKEL_FROM) & np.isfinite(x)
    out[big] = _hankel_jy(x[big], nu)[1]
    return out


def _k_series(x, nu):
    """K_nu(x) for 0 < x <= 1 by the logarithmic series:
    K0 = -log(x/2) I0 + sum psi(k+1) (x^2/4)^k / k!^2,
    K1 = 1/x + log(x/2) I1 - (x/4) sum (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!)."""
    y = 0.25 * x * x
    lg = np.log(0.5 * x)
    term = np.ones_like(x)
    psi1 = -_EULER_GAMMA  # psi(k + 1)
    total = term * (psi1 if nu == 0 else psi1 + psi1 + 1.0)
    for k in range(1, 30):
        term = term * y / (k * (k + nu))
        psi1 += 1.0 / k
        total = total + term * (psi1 if nu == 0 else psi1 + psi1 + 1.0 / (k + 1))
    if nu == 0:
        return -lg * _bessel_series(x, 0) + total
    return 1.0 / x + lg * _bessel_series(x, 1) - 0.25 * x * total


_K_NODES = 60  # trapezoid nodes of the K integral (60 h covers x (cosh t - 1) >= 60)


def _k_scaled_trapezoid(x, nu):
    """e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt for 1 < x <= 25 by the
    trapezoid rule, exponentially accurate for this analytic integrand; the step
    min(1/5, 0.6/sqrt x) keeps its error near 1e-17 across the range."""
    h = np.minimum(0.2, 0.6 / np.sqrt(x))
    t = h[:, None] * np.arange(_K_NODES)
    sh = np.sinh(0.5 * t)
    f = np.exp(-2.0 * x[:, None] * sh * sh)  # cosh t - 1 = 2 sinh(t/2)^2, no cancellation
    if nu:
        f = f * np.cosh(nu * t)
    return h * (f.sum(axis=1) - 0.5 * f[:, 0])


def _k_scaled_hankel(x, nu):
    """e^x K_nu(x) for x > 25: sqrt(pi/(2x)) sum_k a_k(nu) / x^k (terms below 1e-17)."""
    mu = 4.0 * nu * nu
    total = np.ones_like(x)
    term = np.ones_like(x)
    inv8x = 0.125 / x
    for k in range(1, 40):
        term = term * ((mu - (2 * k - 1) ** 2) / k) * inv8x
        total = total + term
        if not np.any(np.abs(term) > 1e-17):
            break
    return np.sqrt(math.pi / (2.0 * x)) * total


def _bessel_k64(x, nu, scaled):
    """K_nu(x) or e^x K_nu(x): inf at 0, NaN below 0, 0 (unscaled) or 0 at inf (as torch)."""
    out = np.full_like(x, np.nan)
    out[x == 0] = np.inf
    out[x == np.inf] = 0.0
    small = (x > 0) & (x <= 1.0)
    xs = x[small]
    out[small] = _k_series(xs, nu) * (np.exp(xs) if scaled else 1.0)
    mid = (x > 1.0) & (x <= _HANKEL_FROM)
    big = (x > _HANKEL_FROM) & (x < np.inf)
    for m, fn in ((mid, _k_scaled_trapezoid), (big, _k_scaled_hankel)):
        xm = x[m]
        out[m] = fn(xm, nu) if scaled else fn(xm, nu) * np.exp(-xm)
    return out


def _spherical_j0_64(x):
    """sin(x) / x: 1 at 0, 0 at +-inf (as torch)."""
    with np.errstate(all="ignore"):
        out = np.sin(x) / x
    out[x == 0] = 1.0
    out[np.isinf(x)] = 0.0
    return out


# --------------------------------------------------------------------------- Airy Ai
_AI0 = 0.35502805388781723926  # Ai(0) = 1 / (3^(2/3) Gamma(2/3))
_AIP0 = -0.25881940379280679840  # Ai'(0) = -1 / (3^(1/3) Gamma(1/3))
_AIRY_TAYLOR_MIN = -9.0  # Taylor steps on [-9, 1]; the asymptotic series below -9 (zeta > 18)
_AIRY_STEPS = 24


def _airy_taylor(x):
    """Ai(x) for -9 <= x <= 1 by integrating Ai'' = x Ai from 0 in 24 equal Taylor steps (30
    terms each, |step| <= 3/8): both Airy solutions oscillate with the same amplitude on the
    negative axis, so the steps' rounding errors add up without growing."""
    h = x / _AIRY_STEPS
    y = np.full_like(x, _AI0)
    dy = np.full_like(x, _AIP0)
    x0 = np.zeros_like(x)
    for _ in range(_AIRY_STEPS):
        # coefficients c_n of y(x0 + s) = sum c_n s^n: c_{n+2} = (x0 c_n + c_{n-1}) / ((n+2)(n+1))
        c_prev, c, c_next = np.zeros_like(x), y, dy
        val, der = y + dy * h, dy.copy()
        hp = h.copy()  # h^(n+1): the power in the derivative of c_{n+2} s^(n+2)
        for n in range(30):
            c_new = (x0 * c + c_prev) / ((n + 2) * (n + 1))
            c_prev, c, c_next = c, c_next, c_new
            der = der + (n + 2) * c_new * hp
            hp = hp * h
            val = val + c_new * hp
        y, dy = val, der
        x0 = x0 + h
    return y


def _airy_u(k_max):
    """The coefficients u_k = (6k-1)(6k-3)(6k-5) u_{k-1} / (216 k (2k-1)) of Airy's
    asymptotic series."""
    u = [1.0]
    for k in range(1, k_max):
        u.append(u[-1] * (6 * k - 1) * (6 * k - 3) * (6 * k - 5) / (216.0 * k * (2 * k - 1)))
    return u


_AIRY_U = _airy_u(40)


def _airy_negative_asymptotic(a):
    """Ai(-a) for a > 9: pi^-1/2 a^-1/4 (cos(zeta - pi/4) P + sin(zeta - pi/4) Q),
    P = sum (-1)^k u_2k zeta^-2k, Q = sum (-1)^k u_2k+1 zeta^-(2k+1), zeta = 2/3 a^3/2."""
    zeta = (2.0 / 3.0) * a * np.sqrt(a)
    p = np.zeros_like(a)
    q = np.zeros_like(a)
    inv = 1.0 / zeta
    power = np.ones_like(a)
    for k, u in enumerate(_AIRY_U):
        term = u * power
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
        power = power * inv
        if not np.any(term > 1e-17):
            break
    s, c = np.sin(zeta), np.cos(zeta)
    r = 1.0 / math.sqrt(2.0)
    cos_m, sin_m = (c + s) * r, (s - c) * r  # cos and sin of zeta - pi/4
    return (cos_m * p + sin_m * q) / (math.sqrt(math.pi) * np.sqrt(np.sqrt(a)))


def _airy_ai64(x):
    """Ai(x): Taylor steps on [-9, 1], (1/pi) sqrt(x/3) K_1/3(2/3 x^3/2) above (K by the
    trapezoid or Hankel series, as K0/K1), the asymptotic series below; 0 past x = 200 where
    it underflows, NaN at +-inf (as torch)."""
    out = np.full_like(x, np.nan)
    mid = (x >= _AIRY_TAYLOR_MIN) & (x <= 1.0)
    out[mid] = _airy_taylor(x[mid])
    neg = (x < _AIRY_TAYLOR_MIN) & np.isfinite(x)
    out[neg] = _airy_negative_asymptotic(-x[neg])
    pos = (x > 1.0) & (x <= 200.0)
    xp = x[pos]
    zeta = (2.0 / 3.0) * xp * np.sqrt(xp)
    scaled = np.empty_like(xp)
    small = zeta <= _HANKEL_FROM
    scaled[small] = _k_scaled_trapezoid(zeta[small], 1.0 / 3.0)
    scaled[~small] = _k_scaled_hankel(zeta[~small], 1.0 / 3.0)
    out[pos] = np.sqrt(xp / 3.0) / math.pi * scaled * np.exp(-zeta)
    out[(x > 200.0) & np.isfinite(x)] = 0.0
    return out


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


# torch.special's Bessel functions without derivatives: torch records no graph for them (the
# result never requires grad and carries no tangent), so they run outside the registry.
def _no_grad_kernel(kernel_name, fn):
    def run(x):
        """fn on x's values in float64, as the result dtype (integers: the default float)."""
        d = x._data
        if d.dtype.kind in "biu":
            dt = _dtype.get_default_dtype().np
        else:
            dt = d.dtype
        if dt.kind == "c" or dt.itemsize == 2:
            raise _int_kernel_error(kernel_name, dt)
        work = _F64 if dt == _F64 else _F32
        with np.errstate(all="ignore"):
            out = fn(d.astype(_F64).reshape(-1), work).reshape(d.shape)
        return _from_array(np.asarray(out.astype(dt), dt))
    return run


def _no_grad_function(fname, argname, kernel_name, fn, doc):
    run = _no_grad_kernel(kernel_name, fn)

    def call(value, out):
        _tensor_arg(fname, value, argname)
        return _float_out(run(value), out)
    if argname == "x":
        def function(x, *, out=None):
            return call(x, out)
    else:
        def function(input, *, out=None):
            return call(input, out)
    function.__name__ = fname
    function.__doc__ = doc
    return function


special_bessel_j0 = _no_grad_function(
    "special_bessel_j0", "input", "bessel_j0_cpu", lambda x, w: _bessel_j64(x, 0),
    "The Bessel function of the first kind of order 0.")
special_bessel_j1 = _no_grad_function(
    "special_bessel_j1", "input", "bessel_j1_cpu", lambda x, w: _bessel_j64(x, 1),
    "The Bessel function of the first kind of order 1.")
special_bessel_y0 = _no_grad_function(
    "special_bessel_y0", "input", "bessel_y0_cpu", lambda x, w: _bessel_y64(x, 0),
    "The Bessel function of the second kind of order 0 (NaN for x < 0).")
special_bessel_y1 = _no_grad_function(
    "special_bessel_y1", "input", "bessel_y1_cpu", lambda x, w: _bessel_y64(x, 1),
    "The Bessel function of the second kind of order 1 (NaN for x < 0).")
special_modified_bessel_i0 = _no_grad_function(
    "special_modified_bessel_i0", "input", "modified_bessel_i0_cpu", _i0_64,
    "The modified Bessel function of the first kind of order 0 (no gradient, unlike i0).")
special_modified_bessel_i1 = _no_grad_function(
    "special_modified_bessel_i1", "input", "modified_bessel_i1_cpu", _i1_64,
    "The modified Bessel function of the first kind of order 1 (no gradient, unlike i1).")
special_modified_bessel_k0 = _no_grad_function(
    "special_modified_bessel_k0", "input", "modified_bessel_k0_cpu",
    lambda x, w: _bessel_k64(x, 0, False),
    "The modified Bessel function of the second kind of order 0 (NaN for x < 0).")
special_modified_bessel_k1 = _no_grad_function(
    "special_modified_bessel_k1", "input", "modified_bessel_k1_cpu",
    lambda x, w: _bessel_k64(x, 1, False),
    "The modified Bessel function of the second kind of order 1 (NaN for x < 0).")
special_scaled_modified_bessel_k0 = _no_grad_function(
    "special_scaled_modified_bessel_k0", "x", "scaled_modified_bessel_k0_cpu",
    lambda x, w: _bessel_k64(x, 0, True), "``exp(x) * modified_bessel_k0(x)``.")
special_scaled_modified_bessel_k1 = _no_grad_function(
    "special_scaled_modified_bessel_k1", "x", "scaled_modified_bessel_k1_cpu",
    lambda x, w: _bessel_k64(x, 1, True), "``exp(x) * modified_bessel_k1(x)``.")
special_spherical_bessel_j0 = _no_grad_function(
    "special_spherical_bessel_j0", "x", "spherical_bessel_j0_cpu",
    lambda x, w: _spherical_j0_64(x), "The spherical Bessel function of order 0, sin(x)/x.")
special_airy_ai = _no_grad_function(
    "special_airy_ai", "x", "airy_ai_cpu", lambda x, w: _airy_ai64(x),
    "The Airy function Ai, the solution of y'' = x y decaying as x -> inf.")


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
