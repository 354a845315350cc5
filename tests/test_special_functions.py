"""torch.special's erfcx, log_ndtr, ndtri (``_ops/normal_cdf.py``), Bessel J/Y/K, the
spherical j0 and Airy Ai (``_ops/bessel.py``) and the orthogonal polynomials
(``_ops/special_polynomials.py``) against torch 2.13: values on wide grids and at the special
points, dtypes, errors (class and message), gradients, grad_fn names, double backward and
forward AD; and against mpmath (installed with torch, through sympy) where torch's own kernel
is less accurate than ours.
"""

import math

import mpmath
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfa

import ndgrad
import ndgrad.autograd.forward_ad as nfa

inf, nan = math.inf, math.nan
mpmath.mp.dps = 40


def _both(name, x, dtype=np.float64, *args):
    ours = getattr(ndgrad.special, name)(ndgrad.tensor(np.asarray(x, dtype)), *args)
    theirs = getattr(torch.special, name)(torch.tensor(np.asarray(x, dtype)), *args)
    return ours.numpy(), theirs.numpy()


def _close(a, b, rtol, atol=0.0):
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b))
    np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b))
    fin = np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=rtol, atol=atol)


def _mp(fn, xs):
    return np.array([float(fn(mpmath.mpf(float(v)))) for v in xs])


# =========================================================================== normal CDF family
WIDE = np.concatenate([np.linspace(-40.0, 40.0, 1601), np.logspace(-300, 300, 121),
                       -np.logspace(-300, 300, 121),
                       [0.0, -0.0, 1.0, 2.0, 1.9999, 2.0001, -1.0, -1.0001, -26.6, -26.7,
                        26.5, 1e308, -1e308, inf, -inf, nan]])
P_GRID = np.concatenate([np.linspace(0.0, 1.0, 1001), np.logspace(-323, -1, 200),
                         1.0 - np.logspace(-16, -1, 60),
                         [0.25, 0.2499999, 0.75, 0.7500001, 5e-324, -0.1, 1.1, inf, -inf, nan]])


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr"])
def test_erfcx_log_ndtr_values_float64(name):
    ours, theirs = _both(name, WIDE)
    _close(ours, theirs, rtol=5e-13, atol=1e-300)  # (subnormals: one ulp)


def test_ndtri_values_float64():
    ours, theirs = _both("ndtri", P_GRID)
    _close(ours, theirs, rtol=2e-15 * 8, atol=0.0)


@pytest.mark.parametrize("name,grid", [("erfcx", WIDE), ("log_ndtr", WIDE),
                                       ("ndtri", P_GRID)])
def test_normal_cdf_values_float32(name, grid):
    ours, theirs = _both(name, grid, np.float32)
    # torch's float32 log_ndtr is computed in float32: about 1e-5 off in the upper tail
    _close(ours, theirs, rtol=2e-5 if name == "log_ndtr" else 4e-6, atol=1e-37)


def test_normal_cdf_against_mpmath():
    xs = np.array([-30.0, -8.0, -1.5, -0.3, 0.0, 0.7, 1.99, 2.01, 5.0, 25.0, 1e3, 1e10])
    erfcx = ndgrad.special.erfcx(ndgrad.tensor(xs)).numpy()
    np.testing.assert_allclose(erfcx, _mp(lambda v: mpmath.exp(v * v) * mpmath.erfc(v), xs),
                               rtol=3e-15)
    mpmath.mp.dps = 400  # log(1 - tiny) for large x
    try:
        ref = _mp(lambda v: mpmath.log(mpmath.ncdf(v)), xs[:-2])
    finally:
        mpmath.mp.dps = 40
    lnd = ndgrad.special.log_ndtr(ndgrad.tensor(xs[:-2])).numpy()
    np.testing.assert_allclose(lnd, ref, rtol=2e-13)  # erfc(x) ~ exp(-x^2): x^2's rounding
    ps = np.array([1e-300, 1e-20, 0.01, 0.2, 0.3, 0.5 + 1e-9, 0.9, 0.999999])
    ref = _mp(lambda p: mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1) if p > 1e-10 else
              mpmath.findroot(lambda x: mpmath.log(mpmath.ncdf(x)) - mpmath.log(p), -9), ps)
    np.testing.assert_allclose(ndgrad.special.ndtri(ndgrad.tensor(ps)).numpy(), ref,
                               rtol=2e-15)


@pytest.mark.parametrize("name,node,lo,hi", [
    ("erfcx", "SpecialErfcxBackward0", -3.0, 6.0),
    ("log_ndtr", "SpecialLogNdtrBackward0", -30.0, 6.0),
    ("ndtri", "SpecialNdtriBackward0", 1e-6, 1.0 - 1e-6)])
def test_normal_cdf_gradients_and_node_names(name, node, lo, hi):
    x = np.concatenate([np.linspace(lo, hi, 41), [lo, hi]])
    res = {}
    for lib in (ndgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.special, name)(t)
        assert type(y.grad_fn).__name__ == node
        (g,) = lib.autograd.grad(y, t, lib.linspace(0.5, 1.5, x.size, dtype=lib.float64),
                                 create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), t)
        res[lib.__name__] = (g.detach().numpy(), gg.numpy())
    np.testing.assert_allclose(res["ndgrad"][0], res["torch"][0], rtol=1e-12)
    np.testing.assert_allclose(res["ndgrad"][1], res["torch"][1], rtol=1e-10, atol=1e-12)
    t = ndgrad.tensor(x[1:-1:4], requires_grad=True)
    assert ndgrad.autograd.gradcheck(getattr(ndgrad.special, name), (t,))
    assert ndgrad.autograd.gradgradcheck(getattr(ndgrad.special, name), (t,))


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri"])
def test_normal_cdf_forward_ad(name):
    x = np.array([0.1, 0.3, 0.6, 0.95])
    tan = np.array([1.0, -2.0, 0.5, 3.0])
    out = []
    for lib, fa in ((ndgrad, nfa), (torch, tfa)):
        with fa.dual_level():
            y = getattr(lib.special, name)(fa.make_dual(lib.tensor(x), lib.tensor(tan)))
            out.append(fa.unpack_dual(y).tangent.numpy().copy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri"])
def test_normal_cdf_dtypes_and_errors(name):
    for lib in (ndgrad, torch):
        f = getattr(lib.special, name)
        y = f(lib.tensor([0, 1]))
        assert str(y.dtype).endswith("float32")
        assert str(f(lib.tensor([True])).dtype).endswith("float32")
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5], dtype=L.float16)))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5 + 1j])))
    _same_error(name, lambda L: getattr(L.special, name)(0.5))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5]),
                                                        out=L.empty(1, dtype=L.int64)),
                message=False)


def _same_error(name, fn, message=True):
    errs = []
    for lib in (ndgrad, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]), (name, errs)
    if message:
        assert str(errs[0]) == str(errs[1])


# =========================================================================== Bessel, Airy
BESSEL_GRID = np.concatenate([np.linspace(-40.0, 40.0, 1601), np.logspace(-300, 4, 200),
                              -np.logspace(-300, 4, 100),
                              [0.0, -0.0, 0.999, 1.0, 1.001, 24.999, 25.0, 25.001, 700.0,
                               709.0, 711.0, 1e5, inf, -inf, nan]])
BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
          "airy_ai"]
MP_REF = {
    "bessel_j0": lambda v: mpmath.besselj(0, v), "bessel_j1": lambda v: mpmath.besselj(1, v),
    "bessel_y0": lambda v: mpmath.bessely(0, v), "bessel_y1": lambda v: mpmath.bessely(1, v),
    "modified_bessel_k0": lambda v: mpmath.besselk(0, v),
    "modified_bessel_k1": lambda v: mpmath.besselk(1, v),
    "scaled_modified_bessel_k0": lambda v: mpmath.besselk(0, v) * mpmath.exp(v),
    "scaled_modified_bessel_k1": lambda v: mpmath.besselk(1, v) * mpmath.exp(v),
    "airy_ai": mpmath.airyai,
}
# torch's kernels for J/Y lose accuracy between 5 and 12 (up to 1e-6) and its Ai near -2.1
# (6e-6): there torch is compared with a matching tolerance and we with mpmath.
TORCH_ATOL = {"bessel_j0": 1e-6, "bessel_j1": 1e-6, "bessel_y0": 1e-6, "bessel_y1": 1e-6,
              "airy_ai": 1e-5}


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_values_float64_against_torch(name):
    x = BESSEL_GRID
    if name == "airy_ai":
        x = x[np.abs(x) <= 1e3]  # the phase of Ai(-x) beyond is below float64 resolution
    ours, theirs = _both(name, x)
    if name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
        fin = np.isfinite(theirs)
        amp = np.sqrt(2.0 / (np.pi * np.maximum(np.abs(x[fin]), 1.0)))
        assert np.all(np.abs(ours[fin] - theirs[fin]) <= 1e-12 + TORCH_ATOL[name] * amp * 3)
        # where torch is accurate (beyond 1e3 its x - pi/4 carries x * 2^-53 of phase error)
        good = (np.abs(x) <= 2) | ((np.abs(x) >= 25) & (np.abs(x) <= 1e3))
        _close(ours[good], theirs[good], rtol=1e-12, atol=5e-15)
        _close(ours, theirs, rtol=1.0, atol=1.0)  # the NaN/inf pattern everywhere
    elif name == "airy_ai":
        _close(ours, theirs, rtol=1e-4, atol=TORCH_ATOL[name])
        good = (x >= 0) & (x <= 100)
        _close(ours[good], theirs[good], rtol=1e-12, atol=1e-300)
    else:
        _close(ours, theirs, rtol=3e-15 * 8, atol=1e-300)


@pytest.mark.parametrize("name", sorted(MP_REF))
def test_bessel_values_against_mpmath(name):
    xs = np.concatenate([np.linspace(0.05, 40.0, 120), [1e-8, 0.9999, 1.0001, 5.0, 7.1, 60.0,
                                                        300.0]])
    if name == "airy_ai":
        xs = np.concatenate([xs, -xs, [-8.99, -9.01, -20.0, -100.0]])
    ours = getattr(ndgrad.special, name)(ndgrad.tensor(xs)).numpy()
    ref = _mp(MP_REF[name], xs)
    if name.startswith(("bessel", "airy")):
        # oscillating: relative to the envelope (absolute near the zeros)
        env = np.maximum(np.abs(ref), np.minimum(1.0, np.abs(xs)) ** 0 *
                         np.sqrt(2.0 / (np.pi * np.maximum(np.abs(xs), 1.0))) * 0.5)
        env = np.where(xs > 0, np.maximum(np.abs(ref), 1e-300), env) if name == "airy_ai" \
            else env
        # the phase zeta = 2/3 |x|^3/2 of Ai(x < 0) carries zeta * 2^-53 of rounding
        phase = np.maximum(1.0, (2.0 / 3.0) * np.abs(xs) ** 1.5) if name == "airy_ai" else 1.0
        assert np.max(np.abs(ours - ref) / env / phase) < 2e-14
    else:
        np.testing.assert_allclose(ours, ref, rtol=5e-15)


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_values_float32(name):
    x = BESSEL_GRID[np.abs(BESSEL_GRID) <= 1e3]
    x = x[~(np.abs(x) < 1e-37)]  # (float32 subnormals: torch's K1 is NaN there, ours inf)
    ours, theirs = _both(name, x, np.float32)
    atol = 1e-5 if name == "airy_ai" else 2e-6 if name in TORCH_ATOL else 1e-37
    _close(ours, theirs, rtol=2e-5, atol=atol)


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_no_gradient_no_tangent(name):
    x = ndgrad.tensor([0.5, 2.0], requires_grad=True)
    y = getattr(ndgrad.special, name)(x)
    assert not y.requires_grad and y.grad_fn is None
    tx = torch.tensor([0.5, 2.0], requires_grad=True)
    assert not getattr(torch.special, name)(tx).requires_grad  # as torch
    with nfa.dual_level():
        d = nfa.make_dual(ndgrad.tensor([0.5, 2.0]), ndgrad.ones(2))
        assert nfa.unpack_dual(getattr(ndgrad.special, name)(d)).tangent is None
    with tfa.dual_level():
        d = tfa.make_dual(torch.tensor([0.5, 2.0]), torch.ones(2))
        assert tfa.unpack_dual(getattr(torch.special, name)(d)).tangent is None


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_dtypes_and_errors(name):
    for lib in (ndgrad, torch):
        f = getattr(lib.special, name)
        assert str(f(lib.tensor([1, 2])).dtype).endswith("float32")
        assert str(f(lib.tensor(1.5, dtype=lib.float64)).dtype).endswith("float64")
        assert f(lib.tensor(1.5)).shape == ()
    a, b = (getattr(L.special, name)(L.tensor([1, 3])).numpy() for L in (ndgrad, torch))
    np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5], dtype=L.float16)))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5 + 1j])))
    _same_error(name, lambda L: getattr(L.special, name)(0.5))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5]),
                                                        out=L.empty(1, dtype=L.int64)))
    out = ndgrad.empty(2, dtype=ndgrad.float64)
    res = getattr(ndgrad.special, name)(ndgrad.tensor([0.5, 1.5], dtype=ndgrad.float64),
                                        out=out)
    assert res is out
    np.testing.assert_allclose(out.numpy(), getattr(torch.special, name)(
        torch.tensor([0.5, 1.5], dtype=torch.float64)).numpy(), rtol=1e-6, atol=1e-6)


# =========================================================================== polynomials
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
PX = np.concatenate([np.linspace(-3, 3, 61), [-1.0, 1.0, 0.0, -0.0, 0.5, 1e-8, 10.0, -10.0,
                                              100.0, inf, -inf]])
PN = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 20, 50, 100, 600, 2.7, -0.5,
               nan, inf, -inf, 1e30])


def _poly_both(name, x, n, dtype=np.float64):
    outs = []
    for lib in (ndgrad, torch):
        xa = lib.tensor(x.astype(dtype)) if isinstance(x, np.ndarray) else x
        na = lib.tensor(n.astype(dtype)) if isinstance(n, np.ndarray) else n
        outs.append(getattr(lib.special, name)(xa, na).numpy())
    return outs


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_values_float64(name):
    X, N = np.meshgrid(PX, PN)
    ours, theirs = _poly_both(name, X, N)
    _close(ours, theirs, rtol=1e-10, atol=1e-12)
    # integer degrees and python-number degrees
    for n in (0, 1, 5, 11):
        ours, theirs = _poly_both(name, PX, n)
        _close(ours, theirs, rtol=1e-12, atol=1e-14)
    ours, theirs = _poly_both(name, 0.3, np.array([0.0, 3.0, 7.0, 9.0, 15.0]))
    _close(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_values_float32(name):
    x = PX[np.abs(PX) <= 3]
    X, N = np.meshgrid(x, PN[np.isnan(PN) | (PN <= 20)])
    ours, theirs = _poly_both(name, X, N, np.float32)
    fin = np.isfinite(theirs) & (np.abs(theirs) < 1e30)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours[fin], theirs[fin], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", POLYS)
def test_polynomial_dtypes_errors_no_grad(name):
    cases = [lambda L: (L.tensor([1, 2]), L.tensor([2, 3])),
             lambda L: (L.tensor([1.0, 2.0]), L.tensor([2, 3])),
             lambda L: (L.tensor([1.0, 2.0]), L.tensor([2.0, 3.0], dtype=L.float64)),
             lambda L: (L.tensor(0.3, dtype=L.float64), L.tensor([3])),
             lambda L: (L.tensor([0.5]), L.tensor(3, dtype=L.float64)),
             lambda L: (0.5, L.tensor([2, 3])), lambda L: (1, L.tensor([2, 3])),
             lambda L: (L.tensor([True, False]), 3), lambda L: (L.tensor([0.3, 0.4]), 3.5),
             lambda L: (L.tensor([[0.1], [0.6]]), L.tensor([1.0, 2.0, 3.0]))]
    for make in cases:
        ours, theirs = (getattr(L.special, name)(*make(L)) for L in (ndgrad, torch))
        assert str(ours.dtype) == str(theirs.dtype) and ours.shape == theirs.shape
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
    _same_error(name, lambda L: getattr(L.special, name)(0.5, 3))
    _same_error(name, lambda L: getattr(L.special, name)("a", L.tensor([1.0])))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5], dtype=L.float16), 3))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5 + 1j]), 3))
    _same_error(name, lambda L: getattr(L.special, name)(L.tensor([0.5]), 2,
                                                        out=L.empty(1, dtype=L.int64)))
    x = ndgrad.tensor([0.2, 0.7], requires_grad=True)
    y = getattr(ndgrad.special, name)(x, ndgrad.tensor([3.0, 4.0], requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None
    assert not getattr(torch.special, name)(torch.tensor([0.2], requires_grad=True),
                                            3).requires_grad


def test_polynomial_out_and_broadcast():
    out = ndgrad.empty(0)
    res = ndgrad.special.legendre_polynomial_p(ndgrad.tensor([[0.2], [0.4]]),
                                               ndgrad.tensor([1, 2, 3]), out=out)
    assert res is out and out.shape == (2, 3)
    ref = torch.special.legendre_polynomial_p(torch.tensor([[0.2], [0.4]]),
                                              torch.tensor([1, 2, 3]))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)


def test_special_namespace_is_complete():
    missing = [n for n in dir(torch.special) if not n.startswith("_")
               and callable(getattr(torch.special, n)) and not hasattr(ndgrad.special, n)
               and n != "Tensor"]
    assert missing == []
