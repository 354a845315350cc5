"""The classical orthogonal polynomials of torch.special, evaluated at x for degree n:
Chebyshev T, U, V, W and their shifted forms (argument 2x - 1), physicists' and
probabilists' Hermite (H, He), Laguerre L and Legendre P.

torch defines no derivative for any of them: the results never require grad and carry no
tangent. Semantics are torch's kernels': n is truncated to an integer (NaN, infinite or
out-of-range n act as a negative n), a negative n gives 0; x at the ends of the interval
(|x| = 1, or x in {0, 1} for the shifted forms) gives the closed-form values; Chebyshev
polynomials of high degree inside the interval use the trigonometric forms
(``cos(n acos x)``, ...); otherwise the three-term recurrence, stopped once it turns NaN.
Hermite degrees above 512 (float64) or 128 (float32) are NaN, as torch's.

Invariant: every value is computed in the result's dtype, with torch's order of operations,
so float32 results round as torch's float32 kernels do.
"""

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _from_array
from . import pointwise as PW
from .arguments import _int_kernel_error
from .registry import _promote2, _scalar_promote

__all__ = []


# =========================================================================== recurrences
def _run(active, p, q, x, k0, step):
    """Advance the recurrence ``(p, q) -> (q, step(k, p, q))`` from k = k0 on the elements
    whose `active(k, q)` holds; returns q (the last value computed, the start value if none)."""
    k = k0
    idx = np.arange(q.size)
    out = q.copy()
    while idx.size:
        run = active(k, q, idx)
        if not run.all():
            idx, p, q, x = idx[run], p[run], q[run], x[run]
            if not idx.size:
                break
        r = step(k, p, q, x)
        p, q = q, r
        out[idx] = q
        k += 1
    return out


def _three_term(x, n, first, step, nan_stop=True, start=2):
    """The recurrence value for degree n >= 1 (first = degree-1 value, degree 0 is 1)."""
    p = np.ones_like(x)
    q = first.astype(x.dtype, copy=False)

    def active(k, q_, idx):
        keep = k <= n[idx]
        return keep & ~np.isnan(q_) if nan_stop else keep
    return _run(active, p, q, x, start, step)


def _select(x, n, cases, default):
    """np.select over (mask, value-callable) pairs computed only where the mask holds."""
    out = np.empty(x.shape, x.dtype)
    todo = np.ones(x.shape, dtype=bool)
    for mask, fn in cases:
        m = todo & mask
        if m.any():
            out[m] = fn(x[m], n[m])
        todo &= ~mask
    if todo.any():
        out[todo] = default(x[todo], n[todo])
    return out


def _one(dt):
    return dt.type(1.0)


# --------------------------------------------------------------------------- Chebyshev
def _cheb_kernel(kind, shifted):
    """torch's kernel for Chebyshev `kind` ('t', 'u', 'v', 'w'), shifted or not."""
    trig_from = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
                 ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}[kind, shifted]

    def arg(x):
        return x + x - _one(x.dtype) if shifted else x

    def first(x):
        y = arg(x)
        one = _one(x.dtype)
        return {"t": y, "u": y + y, "v": y + y - one, "w": y + y + one}[kind]

    def trig(x, n):
        y = arg(x)
        t = np.arccos(y)
        one = _one(x.dtype)
        half = x.dtype.type(0.5)
        nf = n.astype(x.dtype)
        if kind == "t":
            return np.cos(nf * t)
        if kind == "u":
            s = np.sin(t)
            ok = s != 0
            return np.where(ok, np.sin((nf + one) * t) / np.where(ok, s, one),
                            (nf + one) * np.cos((nf + one) * t) / y)
        odd_sign = np.where(n % 2 == 0, one, -one)
        if kind == "v":
            ok = np.sin(t / x.dtype.type(2.0)) != one
            return np.where(ok, np.cos((nf + half) * t) / np.cos(t / x.dtype.type(2.0)),
                            odd_sign * (nf + nf + one))
        ok = np.cos(t / x.dtype.type(2.0)) != one
        end = odd_sign if shifted else np.where(x > 0, nf + nf + one, odd_sign)
        return np.where(ok, np.sin((nf + half) * t) / np.sin(t / x.dtype.type(2.0)), end)

    def at_ends(x, n):
        """Values at the interval's ends: x = +-1 (or 1 and 0 when shifted)."""
        one = _one(x.dtype)
        nf = n.astype(x.dtype)
        top = x > 0  # x = 1 (both forms)
        sign = np.where(n % 2 == 0, one, -one)
        if kind == "t":
            return np.where(top, one, sign)
        if kind == "u":
            return np.where(top, nf + one, sign * (nf + one))
        if kind == "v":
            return np.where(top, one, sign * (nf + nf + one))
        return np.where(top, nf + nf + one, sign)

    def rec(x, n):
        """The recurrence 2y q - p (y = the argument) from the degree-1 value."""
        def step(k, p, q, y):
            return (y + y) * q - p
        return _three_term(arg(x), n, first(x), step)

    def kernel(x, n):
        one = _one(x.dtype)
        end = ((x == one) | (x == 0)) if shifted else (np.abs(x) == one)
        inside = np.abs(arg(x)) < one
        return _select(x, n, [
            (n < 0, lambda xx, nn: np.zeros_like(xx)),
            (end, at_ends),
            ((n > trig_from) & inside, trig),
            (n == 0, lambda xx, nn: np.ones_like(xx)),
            (n == 1, lambda xx, nn: first(xx)),
        ], rec)
    return kernel


# --------------------------------------------------------------------------- the others
def _hermite_kernel(physicists):
    def rec(x, n):
        if physicists:  # H_{j+1} = 2x H_j - 2j H_{j-1}, k = 2j runs 2, 4, ... < 2n
            def step(k, p, q, xx):
                return (xx + xx) * q - (2 * (k - 1)) * p
        else:  # He_{k+1} = x He_k - k He_{k-1}
            def step(k, p, q, xx):
                return xx * q - (k - 1) * p
        first = x + x if physicists else x
        return _three_term(x, n, first, step, nan_stop=False)

    def kernel(x, n):
        limit = 512 if x.dtype == np.float64 else 128
        return _select(x, n, [
            (n < 0, lambda xx, nn: np.zeros_like(xx)),
            (n == 0, lambda xx, nn: np.ones_like(xx)),
            (n == 1, lambda xx, nn: xx + xx if physicists else xx.copy()),
            (n > limit, lambda xx, nn: np.full_like(xx, np.nan)),
        ], rec)
    return kernel


def _laguerre_kernel(x, n):
    one = _one(x.dtype)

    def rec(xx, nn):
        def step(k, p, q, x_):
            j = k - 1  # torch's counter runs 1 .. n-1
            return (((j + j) + (one - x_)) * q - j * p) / (j + 1)
        return _three_term(xx, nn, one - xx, step)
    return _select(x, n, [
        (n < 0, lambda xx, nn: np.zeros_like(xx)),
        (np.abs(x) == 0, lambda xx, nn: np.ones_like(xx)),
        (n == 0, lambda xx, nn: np.ones_like(xx)),
        (n == 1, lambda xx, nn: one - xx),
    ], rec)


def _legendre_kernel(x, n):
    one = _one(x.dtype)

    def rec(xx, nn):
        def step(k, p, q, x_):
            j = k - 1
            return ((j + j + 1) * x_ * q - j * p) / (j + 1)
        return _three_term(xx, nn, xx, step)
    return _select(x, n, [
        (n < 0, lambda xx, nn: np.zeros_like(xx)),
        (np.abs(x) == one, lambda xx, nn: np.where(xx > 0, one, np.where(
            nn % 2 == 0, one, -one)).astype(xx.dtype)),
        (n == 0, lambda xx, nn: np.ones_like(xx)),
        (n == 1, lambda xx, nn: xx.copy()),
    ], rec)


# =========================================================================== public functions
_SIGNATURES = ("{}() received an invalid combination of arguments - got ({}, {}), but "
               "expected one of:\n"
               " * (Tensor x, Tensor n, *, Tensor out = None)\n"
               " * (Number x, Tensor n, *, Tensor out = None)\n"
               " * (Tensor x, Number n, *, Tensor out = None)\n")
_NUMBER = (int, float, bool)


def _degrees(n):
    """n truncated toward zero as int64; NaN, infinite and out-of-range degrees become -1."""
    n = np.asarray(n)
    if n.dtype.kind in "iub":
        return n.astype(np.int64)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(n) & (np.abs(n) < 9.2e18)
        return np.where(ok, np.trunc(np.where(ok, n, 0)), -1).astype(np.int64)


def _float_out(result, out):
    """``out=`` for torch.special's float-only functions: torch refuses to write a floating
    result into an integer or bool tensor."""
    if out is not None and isinstance(out, Tensor) and out._data.dtype.kind in "biu":
        raise RuntimeError(f"result type {_dtype.from_np(result._data.dtype)._legacy[:-6]} "
                           f"can't be cast to the desired output type "
                           f"{_dtype.from_np(out._data.dtype)._legacy[:-6]}")
    return PW._out(result, out)


def _polynomial(fname, kernel_name, kernel):
    def fn(x, n, *, out=None):
        tx, tn = isinstance(x, Tensor), isinstance(n, Tensor)
        if not ((tx and (tn or isinstance(n, _NUMBER))) or (tn and isinstance(x, _NUMBER))):
            raise TypeError(_SIGNATURES.format(fname, type(x).__name__, type(n).__name__))
        if tx and tn:
            dt = _promote2(x, n)
        elif tx:
            dt = _scalar_promote(x._data.dtype, n)
        else:
            dt = _scalar_promote(n._data.dtype, x)
        if dt.kind in "biu":
            dt = _dtype.get_default_dtype().np
        if dt.kind == "c" or dt.itemsize == 2:
            raise _int_kernel_error(kernel_name, dt)
        xa = np.asarray(x._data if tx else x).astype(dt)
        na = _degrees(n._data if tn else n)
        xa, na = np.broadcast_arrays(xa, na)
        with np.errstate(all="ignore"):
            res = kernel(np.ascontiguousarray(xa).reshape(-1),
                         np.ascontiguousarray(na).reshape(-1)).reshape(xa.shape)
        return _float_out(_from_array(np.asarray(res, dt)), out)
    fn.__name__ = fname
    return fn


special_chebyshev_polynomial_t = _polynomial(
    "special_chebyshev_polynomial_t", "chebyshev_polynomial_t_cpu", _cheb_kernel("t", False))
special_chebyshev_polynomial_u = _polynomial(
    "special_chebyshev_polynomial_u", "chebyshev_polynomial_u_cpu", _cheb_kernel("u", False))
special_chebyshev_polynomial_v = _polynomial(
    "special_chebyshev_polynomial_v", "chebyshev_polynomial_v_cpu", _cheb_kernel("v", False))
special_chebyshev_polynomial_w = _polynomial(
    "special_chebyshev_polynomial_w", "chebyshev_polynomial_w_cpu", _cheb_kernel("w", False))
special_shifted_chebyshev_polynomial_t = _polynomial(
    "special_shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_t_cpu",
    _cheb_kernel("t", True))
special_shifted_chebyshev_polynomial_u = _polynomial(
    "special_shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_u_cpu",
    _cheb_kernel("u", True))
special_shifted_chebyshev_polynomial_v = _polynomial(
    "special_shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_v_cpu",
    _cheb_kernel("v", True))
special_shifted_chebyshev_polynomial_w = _polynomial(
    "special_shifted_chebyshev_polynomial_w", "shifted_chebyshev_polynomial_w_cpu",
    _cheb_kernel("w", True))
special_hermite_polynomial_h = _polynomial(
    "special_hermite_polynomial_h", "hermite_polynomial_h_cpu", _hermite_kernel(True))
special_hermite_polynomial_he = _polynomial(
    "special_hermite_polynomial_he", "hermite_polynomial_he_cpu", _hermite_kernel(False))
special_laguerre_polynomial_l = _polynomial(
    "special_laguerre_polynomial_l", "laguerre_polynomial_l_cpu", _laguerre_kernel)
special_legendre_polynomial_p = _polynomial(
    "special_legendre_polynomial_p", "legendre_polynomial_p_cpu", _legendre_kernel)
