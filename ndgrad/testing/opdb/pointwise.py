"""Op database entries for the pointwise ops (``arithmetic.py``, ``comparison.py`` and
``pointwise.py``).

Samples are few and tiny: a 2x3 tensor, a 0-d tensor, an empty tensor and a transposed
(non-contiguous) view for unary ops; equal shapes, a broadcasting pair, a 0-d operand and a
Python number for binary ops. Values are drawn inside each op's safe domain and nudged away
from kinks (|x| near 0 for abs/relu, integers for floor/round/frac, ties for max/min) so finite
differences are meaningful; the special points themselves are tested in tests/test_pointwise.py.
"""

import numpy as np

import ndgrad

from . import COMPLEX, FLOATING, INTEGRAL, OpInfo, SampleInput, get, make_arg, register

_F_INT = FLOATING + (ndgrad.int64,)       # float ops also accept integers (promote to float)
_F_HALF = (ndgrad.float16,) + FLOATING


def _nudge(t, points=(0.0,), gap=0.15):
    """Move values within `gap` of any kink in `points` to `gap` away from it (in place)."""
    d = t._data
    if d.dtype.kind not in "f":
        return t
    for p in points:
        near = np.abs(d - p) < gap
        d[near] = np.where(d[near] >= p, p + gap, p - gap)
    return t


def _nudge_int(t, gap=0.15, scale=1.0, offset=0.0):
    """Move values away from (k + offset) / scale: the jumps of floor/frac (offset 0) and
    round (offset 0.5)."""
    d = t._data
    if d.dtype.kind == "f":
        y = d * scale - offset
        r = y - np.round(y)
        near = np.abs(r) < gap
        d[near] = (np.round(y[near]) + np.where(r[near] >= 0, gap, -gap) + offset) / scale
    return t


def _unary_samples(lo=-2.0, hi=2.0, kinks=None, int_kinks=False, kwargs_variants=(),
                   int_range=None):
    """int_kinks: False, or the offset of the jumps from the integers (0.0 floor, 0.5 round)."""
    def gen(op, dtype, requires_grad):
        make = make_arg(dtype, requires_grad=False)
        if dtype.np.kind in "iu":
            low, high = int_range if int_range is not None else (lo, hi)
            make = make_arg(dtype, low=int(np.ceil(low)), high=int(np.floor(high)) + 1)
        else:
            make = make_arg(dtype, low=lo, high=hi)

        def fix(t):
            if kinks is not None:
                _nudge(t, kinks)
            if int_kinks is not False:
                _nudge_int(t, offset=int_kinks)
            if requires_grad and dtype.np.kind in "fc":
                t.requires_grad_(True)
            return t

        yield SampleInput(fix(make((2, 3))), name="2x3")
        yield SampleInput(fix(make(())), name="0-d")
        yield SampleInput(fix(make((0,))), name="empty")
        t = make((2, 3))
        if kinks is not None:
            _nudge(t, kinks)
        if int_kinks is not False:
            _nudge_int(t, offset=int_kinks)
        tt = t.t()
        if requires_grad and dtype.np.kind in "fc":
            t.requires_grad_(True)
            tt = t.t()
        yield SampleInput(tt, name="transposed")
        for kw in kwargs_variants:
            t = fix(make((3,)).detach())
            if int_kinks is not False and "decimals" in kw:
                t = _nudge_int(t.detach(), scale=10.0 ** kw["decimals"], offset=int_kinks)
                if requires_grad and dtype.np.kind in "fc":
                    t.requires_grad_(True)
            yield SampleInput(t, kwargs=kw, name=str(kw))
    return gen


def _binary_samples(lo=-2.0, hi=2.0, rlo=None, rhi=None, scalar=1.5, kinks=None,
                    other_kinks=None, ties_gap=None, tensor_other=True, int_range=None):
    rlo = lo if rlo is None else rlo
    rhi = hi if rhi is None else rhi

    def gen(op, dtype, requires_grad):
        integral = dtype.np.kind in "iub"
        ir = int_range or (lo, hi)
        ma = make_arg(dtype, low=ir[0] if integral else lo, high=ir[1] if integral else hi)
        mb = make_arg(dtype, low=ir[0] if integral else rlo, high=ir[1] if integral else rhi)

        def fix(a, b):
            if kinks is not None:
                _nudge(a, kinks)
            if other_kinks is not None:
                _nudge(b, other_kinks)
            if ties_gap is not None and a._data.dtype.kind == "f":
                da, db = np.broadcast_arrays(a._data, b._data)
                if np.any(np.abs(da - db) < ties_gap):
                    b._data = b._data + 2 * ties_gap
            if requires_grad and not integral:
                a.requires_grad_(True)
                if isinstance(b, ndgrad.Tensor):
                    b.requires_grad_(True)
            return a, b

        yield SampleInput(*_pack(fix(ma((2, 3)), mb((2, 3)))), name="same-shape")
        yield SampleInput(*_pack(fix(ma((2, 3)), mb((3,)))), name="broadcast")
        yield SampleInput(*_pack(fix(ma(()), mb((2,)))), name="0-d-self")
        yield SampleInput(*_pack(fix(ma((0, 2)), mb((2,)))), name="empty")
        a, b = fix(ma((2, 3)), mb((2, 3)))
        # Same values in column-major memory: a non-contiguous leaf.
        a_nc = ndgrad.Tensor(np.asfortranarray(a.detach()._data)).requires_grad_(a.requires_grad)
        yield SampleInput(a_nc, args=(b,), name="non-contiguous-self")
        if scalar is not None:
            a = ma((3,))
            if kinks is not None:
                _nudge(a, kinks)
            if requires_grad and not integral:
                a.requires_grad_(True)
            s = scalar if not integral else int(scalar) or 2
            yield SampleInput(a, args=(s,), name="python-scalar")
    return gen


def _pack(ab):
    a, b = ab
    return a, (b,)


def _ternary_samples(lo=-2.0, hi=2.0, third_lo=None, third_hi=None, kwargs=({},)):
    def gen(op, dtype, requires_grad):
        integral = dtype.np.kind in "iub"
        m = make_arg(dtype, requires_grad=requires_grad, low=lo, high=hi)
        m3 = make_arg(dtype, requires_grad=requires_grad,
                      low=lo if third_lo is None else third_lo,
                      high=hi if third_hi is None else third_hi)
        if integral:
            m = m3 = make_arg(dtype, low=1, high=5)
        for kw in kwargs:
            yield SampleInput(m((2, 3)), args=(m((2, 3)), m3((2, 3))), kwargs=kw,
                              name=f"same {kw}")
        yield SampleInput(m((2, 3)), args=(m((3,)), m3((2, 1))), name="broadcast")
        yield SampleInput(m(()), args=(m(()), m3(())), name="0-d")
    return gen


# --------------------------------------------------------------------------- unary entries
def U(name, lo=-2.0, hi=2.0, ref=None, dtypes=_F_INT, kinks=None, int_kinks=False,
      complex_grad=False, kwargs_variants=(), int_range=None, **kw):
    if complex_grad:
        dtypes = tuple(dtypes) + COMPLEX
    return OpInfo(name, sample_inputs=_unary_samples(lo, hi, kinks, int_kinks, kwargs_variants,
                                                     int_range),
                  ref=ref, dtypes=dtypes, family="pointwise unary",
                  supports_complex_autograd=complex_grad,
                  method=kw.pop("method", name), inplace=kw.pop("inplace", name + "_"), **kw)


_ZERO_GRAD = {"notes": "piecewise constant: gradient is zero (as torch)"}

register(
    U("abs", ref=np.abs, kinks=(0.0,), dtypes=FLOATING + INTEGRAL, complex_grad=True,
      aliases=("absolute",)),
    U("neg", ref=np.negative, dtypes=FLOATING + INTEGRAL, complex_grad=True,
      aliases=("negative",)),
    U("sign", ref=np.sign, dtypes=FLOATING + INTEGRAL, **_ZERO_GRAD),
    U("sgn", ref=np.sign, dtypes=FLOATING + INTEGRAL, inplace=None, complex_grad=True,
      notes="real: zero gradient; complex: z/|z| with torch's sgn_backward"),
    U("sqrt", 0.2, 3.0, ref=np.sqrt, dtypes=_F_HALF + (ndgrad.int64,), complex_grad=True),
    U("rsqrt", 0.3, 3.0, ref=lambda x: 1 / np.sqrt(x), complex_grad=True),
    U("square", ref=np.square, dtypes=FLOATING + (ndgrad.int64,), complex_grad=True,
      inplace=None),
    U("exp", ref=np.exp, dtypes=_F_HALF + (ndgrad.int64,), complex_grad=True),
    U("exp2", ref=np.exp2, complex_grad=True),
    U("expm1", ref=np.expm1, complex_grad=True),
    U("log", 0.2, 3.0, ref=np.log, complex_grad=True),
    U("log2", 0.2, 3.0, ref=np.log2, complex_grad=True),
    U("log10", 0.2, 3.0, ref=np.log10, complex_grad=True),
    U("log1p", -0.6, 2.0, ref=np.log1p, int_range=(0, 3), complex_grad=True),
    U("sin", ref=np.sin, dtypes=_F_HALF + (ndgrad.int64,), complex_grad=True),
    U("cos", ref=np.cos, complex_grad=True),
    U("tan", -1.2, 1.2, ref=np.tan, int_range=(-1, 1), complex_grad=True),
    U("asin", -0.9, 0.9, ref=np.arcsin, int_range=(0, 0), aliases=("arcsin",), complex_grad=True),
    U("acos", -0.9, 0.9, ref=np.arccos, int_range=(0, 0), aliases=("arccos",), complex_grad=True),
    U("atan", ref=np.arctan, aliases=("arctan",), complex_grad=True),
    U("sinh", ref=np.sinh, complex_grad=True),
    U("cosh", ref=np.cosh, complex_grad=True),
    U("tanh", ref=np.tanh, dtypes=_F_HALF + (ndgrad.int64,), complex_grad=True),
    U("asinh", ref=np.arcsinh, aliases=("arcsinh",), complex_grad=True),
    U("acosh", 1.2, 3.0, ref=np.arccosh, int_range=(1, 3), aliases=("arccosh",), complex_grad=True),
    U("atanh", -0.9, 0.9, ref=np.arctanh, int_range=(0, 0), aliases=("arctanh",),
      complex_grad=True),
    U("sigmoid", ref=lambda x: 1 / (1 + np.exp(-x)), dtypes=_F_HALF + (ndgrad.int64,),
      complex_grad=True),
    U("logit", 0.1, 0.9, ref=lambda x, eps=None: np.log(np.clip(x, eps or 0, 1 - (eps or 0)) /
                                                         (1 - np.clip(x, eps or 0,
                                                                      1 - (eps or 0)))),
      int_range=(0, 0), kwargs_variants=({"eps": 0.2},)),
    U("erf", ref=None, dtypes=_F_HALF + (ndgrad.int64,)),
    U("erfc", ref=None),
    U("erfinv", -0.9, 0.9, int_range=(0, 0)),
    U("lgamma", 0.2, 4.0, int_range=(1, 4)),
    U("digamma", 0.2, 4.0, int_range=(1, 4)),
    U("reciprocal", ref=np.reciprocal, kinks=(0.0,), dtypes=FLOATING, complex_grad=True),
    U("floor", ref=np.floor, int_kinks=0.0, dtypes=FLOATING + INTEGRAL, **_ZERO_GRAD),
    U("ceil", ref=np.ceil, int_kinks=0.0, dtypes=FLOATING + INTEGRAL, **_ZERO_GRAD),
    U("trunc", ref=np.trunc, int_kinks=0.0, dtypes=FLOATING + INTEGRAL, **_ZERO_GRAD),
    U("round", ref=np.round, int_kinks=0.5, dtypes=FLOATING + (ndgrad.int64,),
      kwargs_variants=({"decimals": 1},), **_ZERO_GRAD),
    U("frac", ref=lambda x: x - np.trunc(x), int_kinks=0.0, dtypes=FLOATING),
    U("relu", ref=lambda x: np.maximum(x, 0), kinks=(0.0,), dtypes=FLOATING + INTEGRAL,
      method="relu", inplace="relu_"),
    U("nan_to_num", ref=np.nan_to_num, dtypes=FLOATING + (ndgrad.int64,),
      kwargs_variants=({"nan": 1.0, "posinf": 2.0},)),
    U("deg2rad", ref=np.deg2rad),
    U("rad2deg", ref=np.rad2deg),
    U("positive", ref=np.positive, dtypes=FLOATING + (ndgrad.int64,), inplace=None,
      check_grad_fn=False, notes="returns its input (the grad_fn is the input's)"),
    U("signbit", ref=np.signbit, dtypes=FLOATING + (ndgrad.int64,), inplace=None,
      differentiable=False),
    U("isnan", ref=np.isnan, inplace=None, differentiable=False),
    U("isinf", ref=np.isinf, inplace=None, differentiable=False),
    U("isfinite", ref=np.isfinite, inplace=None, differentiable=False),
    U("logical_not", ref=np.logical_not, dtypes=FLOATING + INTEGRAL + (ndgrad.bool,),
      differentiable=False),
    U("bitwise_not", ref=np.invert, dtypes=INTEGRAL + (ndgrad.bool,), differentiable=False),
)


def _polygamma_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=0.3, high=4.0)
    for n in (1, 2):
        yield SampleInput(make((2, 3)), args=(n,), name=f"n={n}")
    yield SampleInput(make(()), args=(1,), name="0-d")


register(
    OpInfo("polygamma", op=lambda x, n: ndgrad.polygamma(n, x),
           torch_op=lambda x, n: __import__("torch").polygamma(n, x),
           sample_inputs=_polygamma_samples, family="pointwise unary",
           method=None, notes="polygamma(n, x): n = 1 uses torch's trigamma algorithm (about "
                                 "1e-9 relative), n >= 2 Hurwitz zeta"),
)


def _clamp_samples(op, dtype, requires_grad):
    make = make_arg(dtype, low=-2, high=2)
    rg = requires_grad and dtype.np.kind == "f"

    def nudged(shape, pts):
        t = _nudge(make(shape), pts)
        return t.requires_grad_(rg) if rg else t
    lo, hi = (-1, 1) if dtype.np.kind in "iu" else (-0.5, 0.7)
    yield SampleInput(nudged((2, 3), (lo, hi)), args=(lo, hi), name="both")
    yield SampleInput(nudged((2, 3), (lo,)), kwargs={"min": lo}, name="min-only")
    yield SampleInput(nudged((3,), (hi,)), kwargs={"max": hi}, name="max-only")
    yield SampleInput(nudged((), (lo, hi)), args=(lo, hi), name="0-d")


def _clamp_tensor_samples(op, dtype, requires_grad):
    make = make_arg(dtype, low=-2, high=2)
    rg = requires_grad and dtype.np.kind == "f"
    x = make((2, 3))
    lo = make((3,)) * 0 - 0.5 if dtype.np.kind == "f" else make((3,)) * 0 - 1
    hi = make((2, 1)) * 0 + 0.7 if dtype.np.kind == "f" else make((2, 1)) * 0 + 1
    _nudge(x, (-0.5, 0.7))
    if rg:
        x.requires_grad_(True)
        lo.requires_grad_(True)
        hi.requires_grad_(True)
    yield SampleInput(x, args=(lo, hi), name="tensor-bounds")


register(
    OpInfo("clamp", sample_inputs=_clamp_samples, dtypes=FLOATING + (ndgrad.int64,),
           ref=lambda x, min=None, max=None: np.clip(x, min, max), family="pointwise unary",
           method="clamp", inplace="clamp_", aliases=("clip",)),
    OpInfo("clamp", variant_test_name="tensor", sample_inputs=_clamp_tensor_samples,
           dtypes=FLOATING, family="pointwise unary", method="clamp"),
)


# --------------------------------------------------------------------------- binary entries
def B(name, ref=None, dtypes=_F_INT, complex_grad=False, lo=-2.0, hi=2.0, rlo=None, rhi=None,
      scalar=1.5, kinks=None, other_kinks=None, ties_gap=None, int_range=None, **kw):
    if complex_grad:
        dtypes = tuple(dtypes) + COMPLEX
    return OpInfo(name, sample_inputs=_binary_samples(lo, hi, rlo, rhi, scalar, kinks,
                                                      other_kinks, ties_gap,
                                                      int_range=int_range),
                  ref=ref, dtypes=dtypes, family="pointwise binary",
                  supports_complex_autograd=complex_grad,
                  method=kw.pop("method", name), inplace=kw.pop("inplace", name + "_"), **kw)


_ALL_NUM = FLOATING + INTEGRAL
register(
    B("add", ref=np.add, dtypes=_ALL_NUM + (ndgrad.float16,), complex_grad=True),
    B("sub", ref=np.subtract, dtypes=_ALL_NUM, complex_grad=True, aliases=("subtract",)),
    B("mul", ref=np.multiply, dtypes=_ALL_NUM + (ndgrad.bool, ndgrad.float16),
      complex_grad=True,
      aliases=("multiply",)),
    B("div", ref=np.true_divide, dtypes=_F_INT, complex_grad=True, other_kinks=(0.0,),
      int_range=(1, 5), aliases=("divide", "true_divide")),
    B("floor_divide", ref=np.floor_divide, dtypes=FLOATING + (ndgrad.int64,), rlo=0.5,
      rhi=2.0, int_range=(1, 5), inplace="floor_divide_", supports_autograd=False,
      notes="torch has no derivative for floor_divide: backward raises (use div with "
            "rounding_mode='floor', whose gradient is zero)"),
    B("remainder", ref=np.remainder, dtypes=FLOATING + (ndgrad.int64,), rlo=0.6, rhi=2.0,
      int_range=(1, 5), notes="kinks where input/other is an integer"),
    B("fmod", ref=np.fmod, dtypes=FLOATING + (ndgrad.int64,), rlo=0.6, rhi=2.0,
      int_range=(1, 5)),
    B("pow", ref=np.power, dtypes=FLOATING, lo=0.3, hi=2.0, complex_grad=True),
    B("float_power", ref=np.power, dtypes=FLOATING + (ndgrad.int64,), lo=0.3, hi=2.0,
      int_range=(1, 4)),
    B("atan2", ref=np.arctan2, scalar=None, kinks=(0.0,), aliases=("arctan2",)),
    B("hypot", ref=np.hypot, dtypes=FLOATING, scalar=None, kinks=(0.0,)),
    B("maximum", ref=np.maximum, dtypes=_ALL_NUM, scalar=None, ties_gap=0.05, inplace=None),
    B("minimum", ref=np.minimum, dtypes=_ALL_NUM, scalar=None, ties_gap=0.05, inplace=None),
    B("fmax", ref=np.fmax, dtypes=_ALL_NUM, scalar=None, ties_gap=0.05, inplace=None),
    B("fmin", ref=np.fmin, dtypes=_ALL_NUM, scalar=None, ties_gap=0.05, inplace=None),
    B("copysign", ref=np.copysign, kinks=(0.0,), other_kinks=(0.0,)),
    B("xlogy", ref=lambda x, y: x * np.log(y), rlo=0.3, rhi=3.0, int_range=(1, 4)),
)


def _pow_variants(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=0.3, high=2.0)
    yield SampleInput(make((2, 3)), args=(2,), name="int-exponent")
    yield SampleInput(make((2, 3)), args=(0.5,), name="float-exponent")
    yield SampleInput(make((3,)), args=(0,), name="zero-exponent")
    yield SampleInput(make(()), args=(-1.5,), name="0-d")


def _rpow_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=-1.0, high=2.0)
    yield SampleInput(2.5, args=(make((2, 3)),), name="scalar-base")
    yield SampleInput(0.7, args=(make((3,)),), name="scalar-base<1")


def _div_mode_samples(mode):
    def gen(op, dtype, requires_grad):
        rg = requires_grad and dtype.np.kind == "f"
        a = make_arg(dtype, low=-5, high=5)((2, 3))
        b = make_arg(dtype, low=1, high=3)((3,))
        if dtype.np.kind == "f":
            q = a._data / b._data  # keep the quotient away from integers
            a._data = np.where(np.abs(q - np.round(q)) < 0.1, a._data + 0.3 * b._data, a._data)
        if rg:
            a.requires_grad_(True)
            b.requires_grad_(True)
        yield SampleInput(a, args=(b,), kwargs={"rounding_mode": mode}, name=mode)
    return gen


register(
    OpInfo("pow", variant_test_name="scalar_exponent", sample_inputs=_pow_variants,
           ref=np.power, family="pointwise binary", method="pow", inplace="pow_"),
    OpInfo("pow", variant_test_name="scalar_base", sample_inputs=_rpow_samples,
           ref=lambda b, e: np.power(b, e), family="pointwise binary"),
    OpInfo("float_power", variant_test_name="scalar_exponent", sample_inputs=_pow_variants,
           family="pointwise binary", method="float_power"),
    OpInfo("div", variant_test_name="trunc", sample_inputs=_div_mode_samples("trunc"),
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary", method="div",
           inplace="div_", **_ZERO_GRAD),
    OpInfo("div", variant_test_name="floor", sample_inputs=_div_mode_samples("floor"),
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary", method="div",
           inplace="div_", **_ZERO_GRAD),
)


def _alpha_samples(op, dtype, requires_grad):
    integral = dtype.np.kind in "iu"
    make = make_arg(dtype, requires_grad=requires_grad and not integral)
    alpha = 2 if integral else -0.5
    yield SampleInput(make((2, 3)), args=(make((3,)),), kwargs={"alpha": alpha}, name="alpha")
    yield SampleInput(make((2, 3)), args=(1.5 if not integral else 3,),
                      kwargs={"alpha": alpha}, name="scalar-other-alpha")


def _rsub_samples(op, dtype, requires_grad):
    integral = dtype.np.kind in "iu"
    make = make_arg(dtype, requires_grad=requires_grad and not integral)
    yield SampleInput(make((2, 3)), args=(make((3,)),), name="broadcast")
    yield SampleInput(make((2, 3)), args=(make((2, 3)),), kwargs={"alpha": 2}, name="alpha")
    yield SampleInput(make((3,)), args=(2,), name="scalar-other")


register(
    OpInfo("add", variant_test_name="alpha", sample_inputs=_alpha_samples,
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary", method="add",
           inplace="add_", ref=lambda a, b, alpha=1: a + alpha * b),
    OpInfo("sub", variant_test_name="alpha", sample_inputs=_alpha_samples,
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary", method="sub",
           inplace="sub_", ref=lambda a, b, alpha=1: a - alpha * b),
    OpInfo("rsub", sample_inputs=_rsub_samples, dtypes=FLOATING + (ndgrad.int64,),
           family="pointwise binary", ref=lambda a, b, alpha=1: b - alpha * a),
)


def _copysign_scalar(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=-2, high=2)
    yield SampleInput(_nudge(make((2, 3)).detach()).requires_grad_(requires_grad),
                      args=(-1.0,), name="negative")
    yield SampleInput(_nudge(make((3,)).detach()).requires_grad_(requires_grad),
                      args=(0.0,), name="plus-zero")


def _xlogy_scalar_self(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=0.3, high=3.0)
    yield SampleInput(2.0, args=(make((2, 3)),), name="scalar-self")


register(
    OpInfo("copysign", variant_test_name="scalar", sample_inputs=_copysign_scalar,
           family="pointwise binary", method="copysign", inplace="copysign_"),
    OpInfo("xlogy", variant_test_name="scalar_self", sample_inputs=_xlogy_scalar_self,
           family="pointwise binary", ref=lambda x, y: x * np.log(y)),
)


_CMP_ALIASES = {"gt": ("greater",), "ge": ("greater_equal",), "lt": ("less",),
                "le": ("less_equal",), "ne": ("not_equal",)}


def _cmp_entry(name, ref):
    # torch's logical_* take no Python number as `other` (comparisons do).
    return B(name, ref=ref, dtypes=FLOATING + (ndgrad.int64,), inplace=None,
             differentiable=False, scalar=None if name.startswith("logical") else 1.5,
             aliases=_CMP_ALIASES.get(name, ()))


register(*[_cmp_entry(n, r) for n, r in (
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
    ("gt", np.greater), ("ge", np.greater_equal), ("logical_and", np.logical_and),
    ("logical_or", np.logical_or), ("logical_xor", np.logical_xor))])
register(*[B(n, ref=r, dtypes=INTEGRAL + (ndgrad.bool,), inplace=n + "_", differentiable=False,
             scalar=3, int_range=(0, 8))
           for n, r in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                        ("bitwise_xor", np.bitwise_xor))])


def _close_samples(op, dtype, requires_grad):
    make = make_arg(dtype, low=-2, high=2)
    a = make((2, 3))
    b = a.clone()
    if dtype.np.kind == "f":
        b._data[0, 0] += 1e-6
        b._data[1, 2] += 0.5
    else:
        b._data[1, 2] += 1
    yield SampleInput(a, args=(b,), name="mixed")
    yield SampleInput(a, args=(a.clone(),), name="equal")
    if dtype.np.kind == "f":
        yield SampleInput(a, args=(b,), kwargs={"rtol": 0.5, "atol": 0.1}, name="loose")
        n = ndgrad.tensor([float("nan"), float("inf"), 1.0], dtype=dtype)
        yield SampleInput(n, args=(n.clone(),), kwargs={"equal_nan": True}, name="nan-inf")
        yield SampleInput(n, args=(n.clone(),), name="nan-not-equal")


register(
    OpInfo("isclose", sample_inputs=_close_samples, dtypes=FLOATING + (ndgrad.int64,),
           ref=np.isclose, family="comparison", method="isclose", differentiable=False),
    OpInfo("allclose", sample_inputs=_close_samples, dtypes=FLOATING + (ndgrad.int64,),
           ref=lambda *a, **k: bool(np.allclose(*a, **k)), family="comparison",
           method="allclose", differentiable=False),
    OpInfo("equal", sample_inputs=lambda op, dt, rg: (s for s in _close_samples(op, dt, rg)
                                                       if not s.kwargs),
           dtypes=FLOATING + (ndgrad.int64,), ref=lambda a, b: bool(np.array_equal(a, b)),
           family="comparison", method="equal", differentiable=False),
)


# --------------------------------------------------------------------------- ternary entries
def _where_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad)
    cond = make_arg(ndgrad.bool)
    yield SampleInput(cond((2, 3)), args=(make((2, 3)), make((2, 3))), name="same")
    yield SampleInput(cond((2, 1)), args=(make((3,)), make((2, 3))), name="broadcast")
    yield SampleInput(cond(()), args=(make(()), make(())), name="0-d")
    yield SampleInput(cond((3,)), args=(make((3,)), 0.0), name="scalar-other")


def _lerp_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad)
    yield SampleInput(make((2, 3)), args=(make((2, 3)), 0.3), name="scalar-weight")
    yield SampleInput(make((2, 3)), args=(make((3,)), 0.8), name="broadcast-weight>0.5")
    yield SampleInput(make(()), args=(make((2,)), 0.5), name="0-d")


def _lerp_tensor_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad)
    mw = make_arg(dtype, requires_grad=requires_grad, low=0, high=1)
    yield SampleInput(make((2, 3)), args=(make((2, 3)), mw((2, 3))), name="same")
    yield SampleInput(make((2, 3)), args=(make((3,)), mw((2, 1))), name="broadcast")


register(
    OpInfo("where", op=lambda c, a, b: ndgrad.where(c, a, b), sample_inputs=_where_samples,
           dtypes=FLOATING + (ndgrad.int64,), ref=np.where, family="pointwise ternary",
           torch_op=lambda c, a, b: __import__("torch").where(c, a, b)),
    OpInfo("lerp", sample_inputs=_lerp_samples, family="pointwise ternary", method="lerp",
           inplace="lerp_", ref=lambda s, e, w: s + w * (e - s), dtypes=_F_HALF),
    OpInfo("lerp", variant_test_name="tensor_weight", sample_inputs=_lerp_tensor_samples,
           family="pointwise ternary", method="lerp", ref=lambda s, e, w: s + w * (e - s)),
    OpInfo("addcmul", sample_inputs=_ternary_samples(kwargs=({}, {"value": 0.5})),
           family="pointwise ternary", method="addcmul", inplace="addcmul_",
           dtypes=FLOATING + (ndgrad.int64,),
           ref=lambda x, a, b, value=1: x + (int(value) if x.dtype.kind in "iu" else value)
           * a * b),
    OpInfo("addcdiv", sample_inputs=_ternary_samples(third_lo=0.5, third_hi=2.0,
                                                     kwargs=({}, {"value": -2})),
           family="pointwise ternary", method="addcdiv", inplace="addcdiv_",
           ref=lambda x, a, b, value=1: x + value * a / b),
)


# --------------------------------------------------------------------------- error inputs
def _errors(*builders):
    """error_inputs from (input, args, kwargs) builders, run fresh for each call."""
    def gen(op):
        for build in builders:
            inp, args, kwargs = build()
            yield SampleInput(inp, args=args, kwargs=kwargs)
    return gen


def _t(*v, dtype=None):
    return ndgrad.tensor(list(v), dtype=dtype)


_ERRORS = {
    "atan2": _errors(lambda: (_t(1.0), (2.0,), {})),
    "hypot": _errors(lambda: (_t(1.0), (2.0,), {}), lambda: (_t(1), (_t(2),), {})),
    "fmax": _errors(lambda: (_t(1.0), (2.0,), {})),
    "lerp": _errors(lambda: (_t(1.0), (_t(1.0, dtype=ndgrad.float64), 0.5), {}),
                    lambda: (_t(1), (_t(2), 0.5), {})),
    "lerp.tensor_weight": _errors(
        lambda: (_t(1.0), (_t(2.0), _t(0.5, dtype=ndgrad.float64)), {})),
    "addcdiv": _errors(lambda: (_t(1.0), (_t(1), _t(2)), {})),
    "isclose": _errors(lambda: (_t(1.0), (_t(1.0, dtype=ndgrad.float64),), {})),
    "round": _errors(lambda: (_t(1, 2), (), {"decimals": 1})),
    "div.floor": _errors(lambda: (_t(1.0), (_t(2.0),), {"rounding_mode": "ceil"})),
    "frac": _errors(lambda: (_t(1, 2), (), {})),
    "floor_divide": _errors(lambda: (_t(1, 2), (_t(0, 1),), {})),
    "remainder": _errors(lambda: (_t(1, 2), (_t(0, 1),), {})),
    "fmod": _errors(lambda: (_t(1, 2), (_t(0, 1),), {})),
    "positive": _errors(lambda: (_t(True), (), {})),
    "clamp": _errors(lambda: (_t(1.0), (), {})),
    "bitwise_and": _errors(lambda: (_t(1.0), (_t(1.0),), {})),
}
for _name, _gen in _ERRORS.items():
    get(_name).error_inputs_func = _gen


# --------------------------------------------------------------------------- more pointwise ops
def _clamp_one_samples(tensor_bound):
    def gen(op, dtype, requires_grad):
        integral = dtype.np.kind in "iu"
        rg = requires_grad and not integral
        make = make_arg(dtype, low=-2, high=2)
        x = make((2, 3))
        if tensor_bound:
            b = make((3,))
            if not integral:
                d = x._data - b._data  # keep x away from its bound (ties split nothing here)
                x._data = np.where(np.abs(d) < 0.15, x._data + 0.3, x._data)
            if rg:
                b.requires_grad_(True)
        else:
            b = 1 if integral else 0.4
            _nudge(x, (0.4,))
        if rg:
            x.requires_grad_(True)
        yield SampleInput(x, args=(b,), name="tensor-bound" if tensor_bound else "scalar-bound")
    return gen


def _ldexp_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad)
    # Non-negative integer exponents: for negative ones torch's gradient is 0 (it forms 2**e in
    # integer arithmetic); ndgrad matches that, tested in tests/test_pointwise.py.
    e = make_arg(ndgrad.int64, low=0, high=4)
    yield SampleInput(make((2, 3)), args=(e((2, 3)),), name="int-exponent")
    yield SampleInput(make((2, 3)), args=(make_arg(dtype, requires_grad=requires_grad,
                                                   low=-2, high=2)((3,)),),
                      name="float-exponent")


def _heaviside_samples(op, dtype, requires_grad):
    x = ndgrad.tensor([-1.5, 0.0, 2.0, 0.0], dtype=dtype)
    v = ndgrad.tensor([0.5, 0.25, 3.0, 1.0], dtype=dtype)
    if requires_grad and dtype.is_floating_point:
        x.requires_grad_(True)
    yield SampleInput(x, args=(v,), name="zeros")


def _mvlgamma_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=2.0, high=4.0)
    for p in (1, 3):
        yield SampleInput(make((2, 3)), args=(p,), name=f"p={p}")


def _frexp_samples(op, dtype, requires_grad):
    make = make_arg(dtype, requires_grad=requires_grad, low=-20, high=20)
    yield SampleInput(make((2, 3)), name="2x3")
    yield SampleInput(make(()), name="0-d")


def _int_pair_samples(op, dtype, requires_grad):
    make = make_arg(dtype, low=0, high=20)
    yield SampleInput(make((2, 3)), args=(make((3,)),), name="broadcast")


def _shift_samples(op, dtype, requires_grad):
    make = make_arg(dtype, low=0, high=5)
    yield SampleInput(make((2, 3)), args=(make((3,)),), name="broadcast")
    yield SampleInput(make((3,)), args=(2,), name="scalar")


def _inf_samples(op, dtype, requires_grad):
    x = ndgrad.tensor([float("inf"), -float("inf"), float("nan"), 1.0, -0.0], dtype=dtype)
    yield SampleInput(x, name="special")
    yield SampleInput(make_arg(dtype)((2, 3)), name="2x3")


register(
    U("fix", ref=np.trunc, int_kinks=0.0, dtypes=FLOATING + (ndgrad.int64,), **_ZERO_GRAD),
    U("sinc", ref=np.sinc),
    B("logaddexp", ref=np.logaddexp, dtypes=FLOATING, scalar=None, inplace=None,
      complex_grad=True),
    B("logaddexp2", ref=np.logaddexp2, dtypes=FLOATING, scalar=None, inplace=None),
    B("nextafter", ref=np.nextafter, dtypes=FLOATING, scalar=None, ties_gap=0.05),
    OpInfo("clamp_min", sample_inputs=_clamp_one_samples(False),
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise unary", method="clamp_min",
           inplace="clamp_min_", ref=np.maximum),
    OpInfo("clamp_min", variant_test_name="tensor", sample_inputs=_clamp_one_samples(True),
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary", method="clamp_min",
           inplace="clamp_min_", ref=np.maximum),
    OpInfo("clamp_max", sample_inputs=_clamp_one_samples(False),
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise unary", method="clamp_max",
           inplace="clamp_max_", ref=np.minimum),
    OpInfo("clamp_max", variant_test_name="tensor", sample_inputs=_clamp_one_samples(True),
           dtypes=FLOATING + (ndgrad.int64,), family="pointwise binary", method="clamp_max",
           inplace="clamp_max_", ref=np.minimum),
    OpInfo("ldexp", sample_inputs=_ldexp_samples, family="pointwise binary", method="ldexp",
           inplace="ldexp_", ref=lambda x, e: x * np.exp2(e),
           notes="as torch, the gradient wrt input is 0 where an integer exponent is negative"),
    OpInfo("heaviside", sample_inputs=_heaviside_samples, family="pointwise binary",
           method="heaviside", inplace="heaviside_", ref=np.heaviside,
           supports_autograd=False,
           notes="torch has no derivative for heaviside: backward raises"),
    OpInfo("mvlgamma", sample_inputs=_mvlgamma_samples, family="pointwise unary",
           method="mvlgamma", inplace="mvlgamma_"),
    OpInfo("frexp", sample_inputs=_frexp_samples, family="pointwise unary", method="frexp",
           output_process_fn_grad=lambda out: out[0],
           notes="the mantissa is differentiable (FrexpBackward0); the exponent is int32"),
    OpInfo("gcd", sample_inputs=_int_pair_samples, dtypes=INTEGRAL, family="pointwise binary",
           method="gcd", inplace="gcd_", ref=np.gcd, differentiable=False),
    OpInfo("lcm", sample_inputs=_int_pair_samples, dtypes=INTEGRAL, family="pointwise binary",
           method="lcm", inplace="lcm_", ref=np.lcm, differentiable=False),
    OpInfo("bitwise_left_shift", sample_inputs=_shift_samples, dtypes=INTEGRAL,
           family="pointwise binary", method="bitwise_left_shift", ref=np.left_shift,
           differentiable=False),
    OpInfo("bitwise_right_shift", sample_inputs=_shift_samples, dtypes=INTEGRAL,
           family="pointwise binary", method="bitwise_right_shift", ref=np.right_shift,
           differentiable=False),
    OpInfo("isposinf", sample_inputs=_inf_samples, family="pointwise unary",
           method="isposinf", ref=np.isposinf, differentiable=False),
    OpInfo("isneginf", sample_inputs=_inf_samples, family="pointwise unary",
           method="isneginf", ref=np.isneginf, differentiable=False),
    OpInfo("isreal", sample_inputs=_inf_samples, dtypes=FLOATING + COMPLEX,
           family="pointwise unary", method="isreal", ref=np.isreal, differentiable=False),
)


# --------------------------------------------------------------------------- bessel.py
# i0/i0e/i1/i1e (unary), Hurwitz zeta and the regularized incomplete gamma functions. torch
# differentiates zeta and igamma/igammac in their second argument only (the first raises, and
# neither has forward AD): samples give the first argument no requires_grad.
def _bessel_errors(op):
    yield SampleInput(ndgrad.tensor([1.0 + 1.0j]), name="complex")
    yield SampleInput(2.0, name="python-number")


def _second_arg_samples(lo, hi, rlo, rhi, int_ok, scalar_self=None):
    def gen(op, dtype, requires_grad):
        if dtype.np.kind in "iu":
            ma = mb = make_arg(dtype, low=1, high=4)
        else:
            ma = make_arg(dtype, low=lo, high=hi)
            mb = make_arg(dtype, low=rlo, high=rhi,
                          requires_grad=requires_grad and int_ok is not None)

        def pair(sa, sb):
            return SampleInput(ma(sa), args=(mb(sb),))
        for s, (sa, sb) in (("same-shape", ((2, 3), (2, 3))), ("broadcast", ((2, 3), (3,))),
                            ("0-d-other", ((3,), ())), ("empty", ((0, 2), (2,)))):
            smp = pair(sa, sb)
            smp.name = s
            yield smp
        if scalar_self is not None and dtype.np.kind == "f":
            yield SampleInput(scalar_self, args=(mb((3,)),), name="python-number-self")
            yield SampleInput(ma((3,)), args=(scalar_self + 0.5,), name="python-number-other")
    return gen


def _igamma_errors(op):
    yield SampleInput(ndgrad.tensor([1, 2]), args=(ndgrad.tensor([1, 2]),), name="int64")
    yield SampleInput(ndgrad.tensor([1.0]), args=(2.0,), name="number-other")
    yield SampleInput(ndgrad.tensor([1.5 + 0j]), args=(ndgrad.tensor([1.0]),), name="complex")


def _zeta_errors(op):
    yield SampleInput(2.0, args=(3.0,), name="two-numbers")
    yield SampleInput(ndgrad.tensor([2.0], dtype=ndgrad.float16), args=(2.0,), name="float16")


_BESSEL_NOTE = ("float64 power series (|x| <= 20) / Hankel asymptotic series; torch's float32 "
                "kernels are a few ulps off ours (float64 rounded)")
register(
    U("i0", -4.0, 4.0, int_range=(-3, 3), aliases=("special.i0",), notes=_BESSEL_NOTE,
      error_inputs=_bessel_errors),
    U("special.i0e", -4.0, 4.0, int_range=(-3, 3), method=None, inplace=None,
      notes=_BESSEL_NOTE, error_inputs=_bessel_errors),
    U("special.i1", -4.0, 4.0, int_range=(-3, 3), method=None, inplace=None,
      notes=_BESSEL_NOTE + "; the gradient is 1/2 at |x| <= eps, as torch's",
      error_inputs=_bessel_errors),
    U("special.i1e", -4.0, 4.0, int_range=(-3, 3), method=None, inplace=None,
      notes=_BESSEL_NOTE, error_inputs=_bessel_errors),
    OpInfo("special.zeta", sample_inputs=_second_arg_samples(1.5, 4.0, 0.3, 3.0, True, 2.5),
           dtypes=_F_INT, family="pointwise binary", supports_forward_ad=False,
           error_inputs=_zeta_errors,
           notes="Hurwitz zeta; differentiable in q only (d/dq = -x zeta(x+1, q)), the "
                 "derivative in x raises and forward AD is refused, as in torch"),
    OpInfo("igamma", sample_inputs=_second_arg_samples(0.5, 3.0, 0.2, 4.0, True),
           family="pointwise binary", method="igamma", inplace="igamma_",
           aliases=("special.gammainc",), supports_forward_ad=False,
           error_inputs=_igamma_errors,
           notes="regularized lower incomplete gamma P(a, x); differentiable in x only (the "
                 "derivative in a raises NotImplementedError and forward AD is refused, as in "
                 "torch)"),
    OpInfo("igammac", sample_inputs=_second_arg_samples(0.5, 3.0, 0.2, 4.0, True),
           family="pointwise binary", method="igammac", inplace="igammac_",
           aliases=("special.gammaincc",), supports_forward_ad=False,
           error_inputs=_igamma_errors,
           notes="regularized upper incomplete gamma Q(a, x) = 1 - P(a, x); differentiable in "
                 "x only, as in torch"),
)
