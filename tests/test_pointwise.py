"""Pointwise ops at their special points, differential against torch 2.13: kinks (relu, abs,
clamp, maximum ties), sqrt/pow at 0, division by zero, ``where`` with NaN/inf in the branch not
taken, integer inputs to float ops, the special functions on dense grids and at their poles,
and the errors torch raises for bad arguments.
"""


import numpy as np
import pytest
import torch

import ndgrad

NAN, INF = float("nan"), float("inf")


def _pair(values, dtype="float64", rg=True):
    a = np.array(values, dtype=dtype)
    return (ndgrad.tensor(a, requires_grad=rg), torch.tensor(a, requires_grad=rg))


def _same(nd, th, rtol=1e-12, atol=1e-12):
    """Values, NaN positions, infinities (with sign) and dtype equal torch's."""
    a = nd.detach()._data if isinstance(nd, ndgrad.Tensor) else np.asarray(nd)
    if isinstance(th, torch.Tensor):
        th = th.detach()
        b = (np.zeros(tuple(th.shape), dtype=nd._data.dtype) if th._is_zerotensor()
             else th.numpy())
    else:
        b = np.asarray(th)
    if isinstance(nd, ndgrad.Tensor):
        assert str(nd.dtype) == str(th.dtype)
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b))
    np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b))
    fin = np.isfinite(a) & np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=rtol, atol=atol)


def _grads_match(f_nd, f_th, *values, dtype="float64", rtol=1e-12, atol=1e-12):
    """Forward values, grad_fn name and the gradient of sum(out) for every input."""
    pairs = [_pair(v, dtype) for v in values]
    out_n = f_nd(*[p[0] for p in pairs])
    out_t = f_th(*[p[1] for p in pairs])
    _same(out_n, out_t, rtol, atol)
    assert type(out_n.grad_fn).__name__ == out_t.grad_fn.name()
    out_n.sum().backward()
    out_t.sum().backward()
    for a, b in pairs:
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            _same(a.grad, b.grad, rtol, atol)
    return pairs


# --------------------------------------------------------------------------- kinks
@pytest.mark.parametrize("name", ["relu", "abs", "sign", "sgn", "floor", "round", "frac"])
def test_unary_kinks(name):
    _grads_match(getattr(ndgrad, name), getattr(torch, name), [-1.5, -0.0, 0.0, 0.5, 2.0, 2.5])


def test_clamp_at_bounds_scalar_and_tensor():
    x = [-1.0, -0.5, 0.0, 0.7, 1.0]
    _grads_match(lambda t: ndgrad.clamp(t, -0.5, 0.7), lambda t: torch.clamp(t, -0.5, 0.7), x)
    _grads_match(lambda t: ndgrad.clamp(t, min=0.0), lambda t: torch.clamp(t, min=0.0), x)
    _grads_match(lambda t: t.clamp(max=0.7), lambda t: t.clamp(max=0.7), x)
    lo, hi = [-0.5] * 5, [0.7, 0.7, 0.0, 0.7, 0.7]
    _grads_match(ndgrad.clamp, torch.clamp, x, lo, hi)


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_binary_min_max_ties_and_nan(name):
    # ties split evenly for maximum/minimum, go to the first argument for fmax/fmin; NaN
    # propagates for maximum, is ignored by fmax.
    _grads_match(getattr(ndgrad, name), getattr(torch, name),
                 [1.0, 2.0, 3.0, NAN, 1.0], [1.0, 1.0, 4.0, 2.0, NAN])


# --------------------------------------------------------------------------- zeros
def test_sqrt_rsqrt_log_at_zero():
    for name in ("sqrt", "rsqrt", "log", "log2", "log10", "reciprocal"):
        _grads_match(getattr(ndgrad, name), getattr(torch, name), [0.0, -0.0, 1.0, 4.0])


@pytest.mark.parametrize("exponent", [0, 1, 2, 0.5, -1, -0.5, 3])
def test_pow_scalar_exponent_at_zero(exponent):
    _grads_match(lambda t: t ** exponent, lambda t: t ** exponent, [0.0, -0.0, 1.0, -2.0])


def test_pow_tensor_tensor_at_zero_base_and_exponent():
    _grads_match(ndgrad.pow, torch.pow, [0.0, 0.0, 0.0, 2.0, -2.0], [0.0, 2.0, -1.0, 0.0, 2.0])
    _grads_match(lambda e: 0.0 ** e, lambda e: 0.0 ** e, [0.0, 1.0, 2.0])
    _grads_match(lambda e: ndgrad.float_power(0.0, e), lambda e: torch.float_power(0.0, e),
                 [0.0, 1.0, 2.0])


def test_float_power_promotes_to_double_and_grads_keep_input_dtype():
    a, b = _pair([0.5, 2.0], "float32")
    out_n, out_t = ndgrad.float_power(a, 3), torch.float_power(b, 3)
    _same(out_n, out_t)
    assert out_n.dtype == ndgrad.float64
    out_n.sum().backward()
    out_t.sum().backward()
    assert a.grad.dtype == ndgrad.float32
    _same(a.grad, b.grad, rtol=1e-6)


def test_division_by_zero():
    _grads_match(ndgrad.div, torch.div, [1.0, -1.0, 0.0, 2.0], [0.0, 0.0, 0.0, -0.0])
    ia, it = ndgrad.tensor([1, -1, 0]), torch.tensor([1, -1, 0])
    _same(ndgrad.div(ia, 0), torch.div(it, 0))  # integers: true division gives float inf/nan
    _same(ia / ndgrad.zeros(3, dtype=ndgrad.int64), it / torch.zeros(3, dtype=torch.int64))
    for fn in ("floor_divide", "remainder", "fmod"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            getattr(torch, fn)(it, torch.tensor([1, 0, 1]))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            getattr(ndgrad, fn)(ia, ndgrad.tensor([1, 0, 1]))


def test_fmod_and_remainder_signs_and_grads():
    a, b = [5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]
    _grads_match(ndgrad.fmod, torch.fmod, a, b)
    _grads_match(ndgrad.remainder, torch.remainder, a, b)
    _grads_match(lambda t: ndgrad.fmod(t, 2.0), lambda t: torch.fmod(t, 2.0), a)
    _grads_match(lambda t: t % 2.0, lambda t: t % 2.0, a)


def test_floor_divide_has_no_derivative_like_torch():
    a, b = _pair([5.5, -5.5])
    out_n, out_t = ndgrad.floor_divide(a, 2.0), torch.floor_divide(b, 2.0)
    _same(out_n, out_t)
    assert type(out_n.grad_fn).__name__ == out_t.grad_fn.name()
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not "
                                           "implemented"):
        out_t.sum().backward()
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not "
                                           "implemented"):
        out_n.sum().backward()
    # div with a rounding mode is differentiable with zero gradient.
    _grads_match(lambda x: ndgrad.div(x, 2.0, rounding_mode="floor"),
                 lambda x: torch.div(x, 2.0, rounding_mode="floor"), [5.5, -5.5])


# --------------------------------------------------------------------------- where
def test_where_nan_and_inf_in_unselected_branch():
    # The classic trap: the gradient through the branch not taken is still computed; torch
    # gives NaN where the unused branch's derivative is 0 * inf.
    def f(lib):
        def g(x):
            return lib.where(x > 0, lib.sqrt(x), lib.zeros_like(x))
        return g
    _grads_match(f(ndgrad), f(torch), [-1.0, 0.0, 4.0])

    def h(lib):
        def g(x):
            return lib.where(x > 0, lib.log(x), x * 0 + 1.0)
        return g
    _grads_match(h(ndgrad), h(torch), [-1.0, 0.0, 2.0])
    # inf in the other branch: forward picks the finite value, gradient of the taken branch.
    _grads_match(lambda x: ndgrad.where(x < 1, x, x / 0.0),
                 lambda x: torch.where(x < 1, x, x / 0.0), [0.5, 2.0])


def test_where_promotes_scalars_and_integer_tensors():
    c = [True, False, True]
    for other in (0.5, 2, True):
        a = ndgrad.where(ndgrad.tensor(c), ndgrad.tensor([1, 2, 3]), other)
        b = torch.where(torch.tensor(c), torch.tensor([1, 2, 3]), other)
        _same(a, b)


# --------------------------------------------------------------------------- integer inputs
FLOAT_OPS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
             "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
             "atanh", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "reciprocal",
             "deg2rad", "rad2deg", "logit"]


@pytest.mark.parametrize("name", FLOAT_OPS)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integer_inputs_to_float_ops(name, dtype):
    vals = np.array([0, 1, 2, 3]).astype(dtype)
    _same(getattr(ndgrad, name)(ndgrad.tensor(vals)), getattr(torch, name)(torch.tensor(vals)),
          rtol=1e-6, atol=1e-6)


def test_integer_inputs_follow_default_dtype():
    prev = ndgrad.get_default_dtype()
    ndgrad.set_default_dtype(ndgrad.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for name in ("exp", "erf", "lgamma", "atan"):
            _same(getattr(ndgrad, name)(ndgrad.tensor([1, 2])),
                  getattr(torch, name)(torch.tensor([1, 2])))
        _same(ndgrad.atan2(ndgrad.tensor([1]), ndgrad.tensor([2])),
              torch.atan2(torch.tensor([1]), torch.tensor([2])))
    finally:
        ndgrad.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", ["atan2", "xlogy", "copysign", "div", "float_power"])
def test_integer_inputs_to_float_binary_ops(name):
    a, b = np.array([1, 2, 0]), np.array([3, 1, 2])
    _same(getattr(ndgrad, name)(ndgrad.tensor(a), ndgrad.tensor(b)),
          getattr(torch, name)(torch.tensor(a), torch.tensor(b)), rtol=1e-6)


# --------------------------------------------------------------------------- special functions
def _grid_match(name, xs, rtol=1e-13, atol=1e-14, f_nd=None, f_th=None):
    x = np.asarray(xs, dtype=np.float64)
    a = (f_nd or getattr(ndgrad, name))(ndgrad.tensor(x))
    b = (f_th or getattr(torch, name))(torch.tensor(x))
    _same(a, b, rtol, atol)


def test_erf_erfc_dense_grid_and_tails():
    xs = np.concatenate([np.linspace(-6, 6, 2401), [0.0, -0.0, INF, -INF, NAN, 1e-300, 27.0]])
    _grid_match("erf", xs)
    # erfc keeps its relative accuracy deep in the tail (1 - erf would lose it all).
    _grid_match("erfc", np.concatenate([xs, np.linspace(5, 26, 50)]), rtol=1e-13)


def test_erfinv_grid_and_edges():
    ys = np.concatenate([np.linspace(-0.999, 0.999, 2001), 1 - np.logspace(-16, -2, 40),
                         -1 + np.logspace(-16, -2, 40), [1.0, -1.0, 1.5, -1.5, 0.0, NAN]])
    _grid_match("erfinv", ys)


def test_lgamma_digamma_grids_poles_and_infinities():
    xs = np.concatenate([np.linspace(-9.75, 30, 1591), [1e-300, -1e-300, 0.0, -0.0, -1.0, -2.0,
                                                        1.0, 2.0, INF, -INF, NAN, 171.6,
                                                        1e10]])
    _grid_match("lgamma", xs, atol=1e-13)
    _grid_match("digamma", xs, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_positive_grid(n):
    xs = np.concatenate([np.linspace(0.05, 25, 500), [INF, NAN]])
    _grid_match("polygamma", xs, rtol=1e-12, f_nd=lambda t: ndgrad.polygamma(n, t),
                f_th=lambda t: torch.polygamma(n, t))


@pytest.mark.parametrize("name,lo,hi", [("erf", -3, 3), ("erfc", -3, 3), ("erfinv", -0.9, 0.9),
                                        ("lgamma", 0.1, 6), ("digamma", 0.1, 6)])
def test_special_function_gradients_and_second_derivatives(name, lo, hi):
    vals = list(np.linspace(lo, hi, 7))
    _grads_match(getattr(ndgrad, name), getattr(torch, name), vals, rtol=1e-11)
    # Double backward through the rule (e.g. digamma -> polygamma(1) -> polygamma(2)).
    x_n = ndgrad.tensor(vals, dtype=ndgrad.float64, requires_grad=True)
    x_t = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
    (g_n,) = ndgrad.autograd.grad(getattr(ndgrad, name)(x_n).sum(), x_n, create_graph=True)
    (g_t,) = torch.autograd.grad(getattr(torch, name)(x_t).sum(), x_t, create_graph=True)
    _same(ndgrad.autograd.grad(g_n.sum(), x_n)[0], torch.autograd.grad(g_t.sum(), x_t)[0],
          rtol=1e-10)


def test_logit_eps_and_domain_edges():
    vals = [-0.5, 0.0, 0.05, 0.5, 0.95, 1.0, 1.5]
    _grads_match(ndgrad.logit, torch.logit, vals)
    _grads_match(lambda t: ndgrad.logit(t, 0.1), lambda t: torch.logit(t, 0.1), vals)
    _grads_match(lambda t: t.logit(eps=0.1), lambda t: t.logit(eps=0.1), vals)


def test_xlogy_zero_times_log_zero():
    _grads_match(ndgrad.xlogy, torch.xlogy, [0.0, 0.0, 0.0, 2.0, 1.0], [0.0, NAN, 2.0, 0.0, INF])
    _grads_match(lambda y: ndgrad.xlogy(0.0, y), lambda y: torch.xlogy(0.0, y), [0.0, 1.0])
    _grads_match(lambda x: ndgrad.xlogy(x, 0.0), lambda x: torch.xlogy(x, 0.0), [0.0, 1.0])


def test_copysign_signed_zeros():
    _grads_match(ndgrad.copysign, torch.copysign, [1.0, 0.0, -0.0, 2.0, -3.0],
                 [-0.0, -1.0, 1.0, NAN, 0.0])
    _grads_match(lambda x: ndgrad.copysign(x, -0.0), lambda x: torch.copysign(x, -0.0),
                 [1.0, 0.0, -2.0])


def test_hypot_and_atan2_at_origin():
    _grads_match(ndgrad.hypot, torch.hypot, [0.0, 3.0, -3.0], [0.0, 4.0, 0.0])
    _grads_match(ndgrad.atan2, torch.atan2, [0.0, -0.0, 1.0, 0.0], [0.0, -1.0, 0.0, -1.0])


def test_nan_to_num_values_and_gradient_mask():
    vals = [NAN, INF, -INF, 1.5]
    _grads_match(ndgrad.nan_to_num, torch.nan_to_num, vals)
    _grads_match(lambda t: ndgrad.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-2.0),
                 lambda t: torch.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-2.0), vals)
    _same(ndgrad.nan_to_num(ndgrad.tensor(vals, dtype=ndgrad.float32)),
          torch.nan_to_num(torch.tensor(vals, dtype=torch.float32)))


def test_signbit_and_frac_and_positive():
    vals = [-0.0, 0.0, -1.5, 2.5, NAN, -INF]
    _same(ndgrad.signbit(ndgrad.tensor(vals)), torch.signbit(torch.tensor(vals)))
    _same(ndgrad.signbit(ndgrad.tensor([-1, 0, 3])), torch.signbit(torch.tensor([-1, 0, 3])))
    x = ndgrad.tensor([1.0], requires_grad=True)
    assert ndgrad.signbit(x).requires_grad is False
    assert ndgrad.positive(x) is x
    with pytest.raises(RuntimeError, match="bool tensor is not supported"):
        torch.positive(torch.tensor([True]))
    with pytest.raises(RuntimeError, match="bool tensor is not supported"):
        ndgrad.positive(ndgrad.tensor([True]))
    with pytest.raises(NotImplementedError, match="frac_cpu"):
        torch.frac(torch.tensor([1]))
    with pytest.raises(NotImplementedError, match="frac_cpu"):
        ndgrad.frac(ndgrad.tensor([1]))


def test_lerp_exact_endpoints_and_weights():
    s, e = [1.0, -2.0, 1e8], [3.0, 5.0, -1e8]
    for w in (0.0, 0.3, 0.5, 0.8, 1.0, 1.5):
        _grads_match(lambda a, b, w=w: ndgrad.lerp(a, b, w),
                     lambda a, b, w=w: torch.lerp(a, b, w), s, e)
    _grads_match(ndgrad.lerp, torch.lerp, s, e, [0.0, 0.7, 1.0])


@pytest.mark.parametrize("value", [1, 0.5, -2])
def test_addcmul_addcdiv(value):
    a, b, c = [1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [2.0, 4.0, -0.5]
    _grads_match(lambda x, y, z: ndgrad.addcmul(x, y, z, value=value),
                 lambda x, y, z: torch.addcmul(x, y, z, value=value), a, b, c)
    _grads_match(lambda x, y, z: ndgrad.addcdiv(x, y, z, value=value),
                 lambda x, y, z: torch.addcdiv(x, y, z, value=value), a, b, c)


def test_inplace_variants_match_torch_and_record_history():
    for name in ("exp2_", "tan_", "atanh_", "asinh_", "erf_", "erfinv_", "lgamma_", "digamma_",
                 "frac_", "deg2rad_", "logit_", "nan_to_num_", "arcsin_"):
        a = ndgrad.tensor([0.25, -0.5], dtype=ndgrad.float64, requires_grad=True)
        b = torch.tensor([0.25, -0.5], dtype=torch.float64, requires_grad=True)
        ya, yb = a * 1, b * 1
        getattr(ya, name)()
        getattr(yb, name)()
        _same(ya, yb)
        assert type(ya.grad_fn).__name__ == yb.grad_fn.name()
        if name in ("atanh_", "asinh_", "acosh_"):  # torch has no derivative for these
            _same_error(ya.sum().backward, yb.sum().backward)
            continue
        ya.sum().backward()
        yb.sum().backward()
        _same(a.grad, b.grad)
    for name, other in (("atan2_", [0.5, 2.0]), ("hypot_", [0.5, 2.0]), ("xlogy_", [0.5, 2.0]),
                        ("copysign_", [-1.0, 1.0]), ("fmod_", [0.3, 0.3])):
        a, b = _pair([0.25, -0.5])
        oa, ob = _pair(other)
        ya, yb = a * 1, b * 1
        getattr(ya, name)(oa)
        getattr(yb, name)(ob)
        _same(ya, yb)
        ya.sum().backward()
        yb.sum().backward()
        _same(a.grad, b.grad)
        _same(oa.grad, ob.grad)


# --------------------------------------------------------------------------- closeness
def test_isclose_allclose_equal():
    a = [1.0, NAN, INF, -INF, 1.0, 0.0]
    b = [1.0 + 1e-9, NAN, INF, INF, 1.1, 1e-9]
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.2, "atol": 0.0}, {"atol": 1e-8}):
        _same(ndgrad.isclose(ndgrad.tensor(a), ndgrad.tensor(b), **kw),
              torch.isclose(torch.tensor(a), torch.tensor(b), **kw))
        assert ndgrad.allclose(ndgrad.tensor(a), ndgrad.tensor(b), **kw) == \
            torch.allclose(torch.tensor(a), torch.tensor(b), **kw)
    ia, ib = [1, 2, 3], [1, 2, 4]
    _same(ndgrad.isclose(ndgrad.tensor(ia), ndgrad.tensor(ib)),
          torch.isclose(torch.tensor(ia), torch.tensor(ib)))
    assert ndgrad.tensor(a).allclose(ndgrad.tensor(a), equal_nan=True) is True
    assert ndgrad.equal(ndgrad.tensor(ia), ndgrad.tensor(ia)) is torch.equal(
        torch.tensor(ia), torch.tensor(ia))
    assert ndgrad.equal(ndgrad.tensor(ia), ndgrad.tensor([1, 2])) is False
    assert ndgrad.tensor([1.0, NAN]).equal(ndgrad.tensor([1.0, NAN])) is torch.equal(
        torch.tensor([1.0, NAN]), torch.tensor([1.0, NAN]))


# --------------------------------------------------------------------------- errors
def _same_error(f_nd, f_th):
    with pytest.raises(Exception) as e_t:
        f_th()
    with pytest.raises(type(e_t.value)) as e_n:
        f_nd()
    assert str(e_n.value) == str(e_t.value)


def test_errors_match_torch():
    def both(expr):
        return (lambda: expr(ndgrad)), (lambda: expr(torch))
    cases = [
        lambda L: L.atan2(L.tensor([1.0]), 2.0),
        lambda L: L.hypot(L.tensor([1.0]), 2.0),
        lambda L: L.fmax(L.tensor([1.0]), 2.0),
        lambda L: L.hypot(L.tensor([1]), L.tensor([2])),
        lambda L: L.lerp(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64), 0.5),
        lambda L: L.lerp(L.tensor([1.0]), L.tensor([2.0]), L.tensor([0.5], dtype=L.float64)),
        lambda L: L.lerp(L.tensor([1]), L.tensor([2]), 0.5),
        lambda L: L.addcdiv(L.tensor([1.0]), L.tensor([1]), L.tensor([2])),
        lambda L: L.isclose(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64)),
        lambda L: L.polygamma(-1, L.tensor([1.0])),
        lambda L: L.round(L.tensor([1, 2]), decimals=1),
        lambda L: L.tensor([1.0], dtype=L.float32).float_power_(2),
        lambda L: L.div(L.tensor([1.0]), 2, rounding_mode="ceil"),
        lambda L: L.tensor([1 + 1j]).abs_(),
        # dtypes torch has no kernel for
        lambda L: L.remainder(L.tensor([1 + 1j]), L.tensor([1 + 1j])),
        lambda L: L.floor_divide(L.tensor([True]), L.tensor([True])),
        lambda L: L.fmod(L.tensor([True]), L.tensor([True])),
        lambda L: L.lt(L.tensor([1 + 1j]), L.tensor([1.0])),
        lambda L: L.maximum(L.tensor([1 + 1j]), L.tensor([1.0])),
        lambda L: L.atan2(L.tensor([1 + 1j]), L.tensor([1.0])),
        lambda L: L.xlogy(L.tensor([1 + 1j]), L.tensor([1.0])),
        lambda L: L.nextafter(L.tensor([True]), L.tensor([False])),
        lambda L: L.bitwise_and(L.tensor([1.0]), L.tensor([1.0])),
        lambda L: L.logaddexp(L.tensor([True]), L.tensor([False])),
    ]
    for case in cases:
        f_nd, f_th = both(case)
        _same_error(f_nd, f_th)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma", "trigamma"])
def test_special_functions_small_tensor_path(name):
    """Tensors of up to 16 elements take a per-element path (math.erf, ...): same values."""
    pts = {"erfinv": [-1.0, -0.999999, -0.5, -0.0, 0.0, 0.3, 0.9, 1.0, 1.5, NAN],
           }.get(name, [-2.5, -2.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 2.0, 3.7, 30.0, INF, -INF, NAN])
    if name == "trigamma":
        _grid_match(name, pts, rtol=1e-14, f_nd=lambda t: ndgrad.polygamma(1, t),
                    f_th=lambda t: torch.polygamma(1, t))
    else:
        _grid_match(name, pts, rtol=1e-13)


def test_more_pointwise_ops_at_special_points():
    x, y = [0.5, -1.5, 2.0, 0.0, -0.0], [1.0, 0.5, -2.0, 0.0, 0.0]
    _grads_match(ndgrad.logaddexp, torch.logaddexp, [1000.0, -1000.0, 0.0], [1000.0, 3.0, -INF])
    _grads_match(ndgrad.logaddexp2, torch.logaddexp2, [1000.0, -1000.0, 0.0], [1000.0, 3.0, -INF])
    _grads_match(ndgrad.nextafter, torch.nextafter, x, y)
    _grads_match(ndgrad.sinc, torch.sinc, [0.0, 1.0, -2.5, 1e-9])
    _grads_match(ndgrad.clamp_min, torch.clamp_min, x, y)
    _grads_match(ndgrad.clamp_max, torch.clamp_max, x, y)
    _grads_match(lambda t: ndgrad.clamp_min(t, 0.0), lambda t: torch.clamp_min(t, 0.0), x)
    # ldexp: torch's gradient is 0 where an integer exponent is negative; ndgrad matches.
    _grads_match(lambda t: ndgrad.ldexp(t, ndgrad.tensor([-1, 3, 2, 0, -2])),
                 lambda t: torch.ldexp(t, torch.tensor([-1, 3, 2, 0, -2])), x)
    _grads_match(ndgrad.ldexp, torch.ldexp, x, [-1.0, 3.0, 2.0, 0.0, -2.0])
    m_n, e_n = ndgrad.frexp(ndgrad.tensor([8.0, -0.0, INF, NAN, 3e-310]))
    m_t, e_t = torch.frexp(torch.tensor([8.0, -0.0, INF, NAN, 3e-310]))
    _same(m_n, m_t)
    assert e_n.dtype == ndgrad.int32
    np.testing.assert_array_equal(e_n._data[:2], e_t.numpy()[:2])
    assert repr(ndgrad.frexp(ndgrad.tensor([8.0]))) == repr(torch.frexp(torch.tensor([8.0])))
    _same(ndgrad.heaviside(ndgrad.tensor(x), ndgrad.tensor(y)),
          torch.heaviside(torch.tensor(x), torch.tensor(y)))
    _same(ndgrad.gcd(ndgrad.tensor([0, -4, 6]), ndgrad.tensor([5, 6, -9])),
          torch.gcd(torch.tensor([0, -4, 6]), torch.tensor([5, 6, -9])))
    _same(ndgrad.isreal(ndgrad.tensor([1 + 0j, 1j])), torch.isreal(torch.tensor([1 + 0j, 1j])))
    _same(ndgrad.mvlgamma(ndgrad.tensor([2.5, 3.0]), 2), torch.mvlgamma(torch.tensor([2.5, 3.0]), 2))


def test_comparison_inplace_records_zero_gradient():
    for name in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_"):
        a, b = _pair([0.5, 1.0, 2.0])
        ya, yb = a * 1, b * 1
        getattr(ya, name)(1.0)
        getattr(yb, name)(1.0)
        _same(ya, yb)
        assert type(ya.grad_fn).__name__ == yb.grad_fn.name()
        ya.sum().backward()
        yb.sum().backward()
        _same(a.grad, b.grad)


def test_docstring_examples_run():
    """Every example in the pointwise docstrings prints what the docstring says."""
    import doctest

    from ndgrad._ops import pointwise

    class TensorChecker(doctest.OutputChecker):
        """A printed float tensor also matches when its values are the expected ones to
        float32 precision: NumPy's float32 kernels round the last bit differently on
        AVX-512 CPUs (log10(1000.) is 3.0000002 there), which changes the printed form."""

        def check_output(self, want, got, optionflags):
            if super().check_output(want, got, optionflags):
                return True
            try:
                w, g = (eval(s, {"tensor": ndgrad.tensor}) for s in (want, got))
            except Exception:
                return False
            return (isinstance(w, ndgrad.Tensor) and isinstance(g, ndgrad.Tensor)
                    and w.dtype == g.dtype == ndgrad.float32 and w.shape == g.shape
                    and np.allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=0))

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(
        checker=TensorChecker(), optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(pointwise):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 50 and result.failed == 0


@pytest.mark.parametrize("name,args", [("exp2", ([1.0, 2.0],)), ("erf", ([0.5, -1.0],)),
                                       ("atan2", ([1.0, 2.0], [3.0, -1.0])),
                                       ("hypot", ([3.0, 5.0], [4.0, 12.0])),
                                       ("xlogy", ([0.0, 2.0], [1.0, 3.0]))])
def test_out_argument(name, args):
    """out= writes into the given tensor (resized when empty) and returns it, as torch."""
    out_n, out_t = ndgrad.empty(0), torch.empty(0)
    res_n = getattr(ndgrad, name)(*[ndgrad.tensor(a) for a in args], out=out_n)
    res_t = getattr(torch, name)(*[torch.tensor(a) for a in args], out=out_t)
    assert res_n is out_n and res_t is out_t
    _same(out_n, out_t, rtol=1e-6)


def test_integer_pow_edge_cases():
    # torch: integer ** negative integer tensor gives 1, -1 or 0; a negative Python exponent
    # on an integer tensor is an error.
    _same(ndgrad.tensor([1, 2, -1, -2, 0]) ** ndgrad.tensor([-1, -2, -3, -1, 2]),
          torch.tensor([1, 2, -1, -2, 0]) ** torch.tensor([-1, -2, -3, -1, 2]))
    _same(2 ** ndgrad.tensor([-1, 3]), 2 ** torch.tensor([-1, 3]))
    _same_error(lambda: ndgrad.tensor([1, 2]) ** -1, lambda: torch.tensor([1, 2]) ** -1)
