"""Elementwise primitives of the foundation: arithmetic, comparisons, and the unary functions
models need (exp, log, tanh, sigmoid, relu, ...), with their VJPs and JVPs, plus the fused
``*_backward`` primitives that keep double backward exact and cheap.

Every rule is written in ndgrad ops, so it is differentiable itself.
"""

import operator

import numpy as np

from .. import _state
from .._tensor import Tensor, _from_array
from .._graph_core import FREED, SavedTensor
from .registry import unary, binary, primitive

_tls = _state.tls
_ndarray = np.ndarray

__all__ = [
    "add", "sub", "mul", "div", "true_divide", "rsub", "neg", "negative", "pow", "exp", "log",
    "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sign", "reciprocal",
    "square", "log1p", "expm1", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum",
    "clamp", "clip", "where", "logical_not", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "floor_divide", "remainder",
    "conj", "sgn", "tanh_backward", "sigmoid_backward", "threshold_backward",
    "greater", "greater_equal", "less", "less_equal", "not_equal", "multiply", "divide",
    "subtract", "floor", "ceil", "round", "trunc", "isnan", "isinf", "isfinite",
]


def _conj(t):
    """``t.conj()`` for complex tensors, ``t`` itself otherwise (the common real case)."""
    if type(t) is complex:
        return t.conjugate()
    return CONJ.call(t) if t._data.dtype.kind == "c" else t


def _conj_any(v):
    """Conjugate of a saved operand that may be a tensor or a Python number."""
    t = type(v)
    if t is float or t is int or t is bool:
        return v
    if t is complex:
        return v.conjugate()
    return CONJ.call(v) if v._data.dtype.kind == "c" else v


def conj(input):
    return _conj(input)


def _raw_grad(ctx, g, k):
    """Fast path of the hot rules: ``(g's array, saved value k's array)`` when the rule may
    run on raw arrays, else None (then the rule runs in ndgrad ops).

    Allowed only in a plain backward (grad mode off, so nothing is recorded; no special mode,
    so no observer expects to see the rule's ops), for a real floating `g` and a saved tensor
    k without hooks, current version, and the same dtype and shape as `g`: then the ndgrad
    ops of the rule would compute exactly these arrays and wrap them in fresh plain Tensors.
    """
    if _tls.grad_enabled or _state.special or type(g) is not Tensor:
        return None
    saved = ctx._saved
    if saved is FREED:
        return None
    s = saved[k]
    if type(s) is not SavedTensor or s._hooks is not None or s._version != s._vc[0]:
        return None
    t = s._tensor
    sd = t._data if t is not None else s._data
    gd = g._data
    if sd.dtype is not gd.dtype or gd.dtype.kind != "f" or sd.shape != gd.shape:
        return None
    return gd, sd


def _wrap(out):
    return _from_array(out if type(out) is _ndarray else np.asarray(out))


# ----------------------------------------------------------------------------- arithmetic
def _add_fwd(a, b, alpha=None):
    return a + b if alpha is None else a + alpha * b


def _sub_fwd(a, b, alpha=None):
    return a - b if alpha is None else a - alpha * b


ADD = binary("add", _add_fwd, params=True, plain_fwd=operator.add)
SUB = binary("sub", _sub_fwd, params=True, plain_fwd=operator.sub)
def _rsub_fwd(a, b, alpha=None):
    return b - a if alpha is None else b - alpha * a


# torch: rsub(Tensor, Tensor) is RsubBackward0, rsub(Tensor, Scalar) (and `2 - x`) RsubBackward1.
RSUB = binary("rsub", _rsub_fwd, "RsubBackward1", params=True)
RSUB_T = binary("rsub_tensor", _rsub_fwd, "RsubBackward0", params=True)
MUL = binary("mul", operator.mul, save=((0, 1), (1, 0)))
DIV = binary("div", operator.truediv, save=((0, 1), (1, None)), promote="float")


@ADD.def_vjp
def _(ctx, g):
    alpha = ctx._params
    n = ctx._next
    return g if n[0] else None, (g if alpha is None else g * alpha) if n[1] else None


@SUB.def_vjp
def _(ctx, g):
    alpha = ctx._params
    n = ctx._next
    return g if n[0] else None, ((-g) if alpha is None else g * (-alpha)) if n[1] else None


def _rsub_vjp(ctx, g):
    alpha = ctx._params
    n = ctx._next
    return ((-g) if alpha is None else g * (-alpha)) if n[0] else None, g if n[1] else None


RSUB.def_vjp(_rsub_vjp)
RSUB_T.def_vjp(_rsub_vjp)


@MUL.def_vjp
def _(ctx, g):
    n = ctx._next
    if not _tls.grad_enabled and not _state.special and type(g) is Tensor:
        # a plain backward: try the raw-array path
        ga = _raw_mul(ctx, g, 1) if n[0] is not None else None
        gb = _raw_mul(ctx, g, 0) if n[1] is not None else None
        if (ga is not None or n[0] is None) and (gb is not None or n[1] is None):
            return ga, gb
    a, b = ctx.saved
    n = ctx._next
    ga = g * _conj_any(b) if n[0] else None
    gb = g * _conj(a) if n[1] else None
    return ga, gb


def _raw_mul(ctx, g, k):
    """``g * saved[k]`` on raw arrays (see ``_raw_grad``; the caller checked grad mode, special
    modes and g's type), or None; the saved operand may have a broadcastable shape of its own,
    so the shape check is NumPy's broadcasting."""
    saved = ctx._saved
    if saved is FREED:
        return None
    s = saved[k]
    if type(s) is not SavedTensor or s._hooks is not None or s._version != s._vc[0]:
        return None
    t = s._tensor
    bd = t._data if t is not None else s._data
    gd = g._data
    if bd.dtype is not gd.dtype or gd.dtype.kind != "f":
        return None
    try:
        return _wrap(gd * bd)
    except ValueError:
        return None  # not broadcastable: the dispatcher raises torch's error


@DIV.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    b = _conj_any(b)
    ga = g / b if n[0] else None
    gb = (-g * _conj(a) / (b * b)) if n[1] else None
    return ga, gb


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion."""
    return _out(ADD.call(input, other, None if alpha == 1 else alpha), out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    return _out(SUB.call(input, other, None if alpha == 1 else alpha), out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    op = RSUB_T if isinstance(other, Tensor) and isinstance(input, Tensor) else RSUB
    return op.call(input, other, None if alpha == 1 else alpha)


def mul(input, other, *, out=None):
    return _out(MUL.call(input, other), out)


multiply = mul

# torch has no derivative for floor_divide (its node is NotImplemented); div with a
# rounding_mode is DivBackward2 with zero gradients.
def _no_kernel(kernel_name, dt):
    from .. import _dtype
    return NotImplementedError(f'"{kernel_name}" not implemented for '
                               f"'{_dtype.from_np(dt)._legacy[:-6]}'")


def _int_zero_check(fn, kernel_name):
    """Integer division by zero raises as torch; complex and bool have no kernel."""
    def kernel(a, b):
        dt = a.dtype if isinstance(a, np.ndarray) else np.asarray(b).dtype
        if dt.kind in "cb":
            raise _no_kernel(kernel_name, dt)
        if np.asarray(b).dtype.kind in "biu" and np.asarray(a).dtype.kind in "biu" and \
                np.any(np.asarray(b) == 0):
            raise RuntimeError("ZeroDivisionError")
        return fn(a, b)
    return kernel


FLOOR_DIV = binary("floor_divide", _int_zero_check(np.floor_divide, "div_floor_cpu"),
                   "torch::autograd::NotImplemented")
FLOOR_DIV_MODE = binary("div_floor", _int_zero_check(np.floor_divide, "div_floor_cpu"),
                        "DivBackward2")
TRUNC_DIV = binary("div_trunc", lambda a, b: _trunc_div(a, b), "DivBackward2")


def _trunc_div(a, b):
    if np.asarray(a).dtype.kind in "biu" and np.asarray(b).dtype.kind in "biu":
        q = np.abs(a) // np.abs(b)
        return np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q)
    return np.trunc(np.true_divide(a, b))


for _op in (FLOOR_DIV_MODE, TRUNC_DIV):
    _op.def_vjp(lambda ctx, g: (g * 0 if ctx._next[0] else None,
                                g * 0 if ctx._next[1] else None))


@FLOOR_DIV.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


def div(input, other, *, rounding_mode=None, out=None):
    """True division (int / int gives float), or rounded with "trunc" / "floor"."""
    if rounding_mode is None:
        return _out(DIV.call(input, other), out)
    if rounding_mode == "floor":
        return _out(FLOOR_DIV_MODE.call(input, other), out)
    if rounding_mode == "trunc":
        return _out(TRUNC_DIV.call(input, other), out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


true_divide = divide = div


def floor_divide(input, other):
    return FLOOR_DIV.call(input, other)


REMAINDER = binary("remainder", _int_zero_check(np.remainder, "remainder_cpu"),
                   "RemainderBackward1", save=((0, 1), (1, 1)))
REMAINDER_SCALAR = binary("remainder_scalar", _int_zero_check(np.remainder, "remainder_cpu"),
                          "RemainderBackward0")
REMAINDER_SCALAR.def_vjp(lambda ctx, g: (g, None))


@REMAINDER.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return g if n[0] else None, (-g * FLOOR_DIV_MODE.call(a, b)) if n[1] else None


def remainder(input, other):
    """Python-style modulus (the result has the sign of `other`)."""
    from .._tensor import Tensor
    if isinstance(input, Tensor) and not isinstance(other, Tensor):
        return REMAINDER_SCALAR.call(input, other)
    return REMAINDER.call(input, other)


def _neg_fwd(x):
    if x.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return -x


NEG = unary("neg", _neg_fwd, linear=True)
NEG.def_vjp(lambda ctx, g: (-g,))


def neg(input):
    return NEG.call(input)


negative = neg


# ----------------------------------------------------------------------------- pow
def _pow_scalar_fwd(a, e):
    # torch special-cases these exponents (sqrt(-0.0) is -0.0; pow would give +0.0).
    if e == 0.5 and a.dtype.kind == "f":
        return np.sqrt(a)
    if e == -0.5 and a.dtype.kind == "f":
        with np.errstate(divide="ignore"):
            return 1 / np.sqrt(a)
    if a.dtype.kind in "biu" and type(e) is int and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(a, e)


def _pow_any(a, b):
    """np.power, except integer ** negative integer follows torch (1, -1 or 0, no error)."""
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.dtype.kind in "biu" and b_arr.dtype.kind in "biu" and np.any(b_arr < 0):
        neg = b_arr < 0
        out = np.power(a_arr, np.where(neg, 0, b_arr))
        odd = (b_arr % 2) != 0
        at_neg = np.where(a_arr == 1, 1, np.where(a_arr == -1, np.where(odd, -1, 1), 0))
        return np.where(neg, at_neg, out).astype(out.dtype)
    return np.power(a, b)


POW_SCALAR = binary("pow", _pow_scalar_fwd, "PowBackward0", save=((0, None), (1, None)))
POW_TENSOR = binary("pow_tensor", _pow_any, "PowBackward1", save=((0, None), (1, None),
                                                                    ("out", 1)))
POW_RSCALAR = binary("pow_rscalar", _pow_any, "PowBackward2", save=((0, None), ("out", None)))


# mul(Tensor, Scalar): what torch's C++ formulas record for `number * tensor` (MulBackward1;
# a Python `tensor * number` is mul(Tensor, Tensor), MulBackward0, in both libraries). Used by
# rules whose torch formula multiplies by a C++ scalar, so recorded graphs read the same.
MUL_SCALAR = primitive("mul_scalar", lambda x, s: x * s, "MulBackward1", linear=True)
MUL_SCALAR.def_vjp(lambda ctx, g: (MUL_SCALAR.call(g, params=_conj_any(ctx._params)),))


@POW_SCALAR.def_vjp
def _(ctx, g):
    e = ctx._saved[1] if ctx._saved is not FREED else None
    if (type(e) is int or type(e) is float) and e != 0:
        raw = _raw_grad(ctx, g, 0)
        if raw is not None:
            # g * (e * x ** (e - 1)) exactly as the ops below compute it (real x)
            gd, xd = raw
            p = _pow_scalar_fwd(xd, e - 1)
            if type(p) is _ndarray:  # a fresh array: scaled in place (same values)
                p *= e
                return _wrap(np.multiply(gd, p, out=p)), None
            return _wrap(gd * (p * e)), None
    x, e = ctx.saved
    if e == 0:
        return g * 0, None
    if type(e) is complex:
        return g * _conj(MUL_SCALAR.call(x ** (e - 1), params=e)), None
    return g * MUL_SCALAR.call(_conj(x) ** (e - 1), params=e), None


@POW_TENSOR.def_vjp
def _(ctx, g):
    x, y, out = ctx.saved
    n = ctx._next
    gx = gy = None
    if n[0]:
        gx = g * _conj(y * x ** (y - 1))
        gx = where(y == 0, 0.0, gx)
    if n[1]:
        # torch masks 0 ** y for y real and >= 0 (complex y: Im y == 0 and Re y >= 0).
        yc = (y.imag == 0) & (y.real >= 0) if y._data.dtype.kind == "c" else y >= 0
        lg = where((x == 0) & yc, 0.0, log(x))
        gy = g * _conj(out * lg)
    return gx, gy


@POW_RSCALAR.def_vjp
def _(ctx, g):
    base, out = ctx.saved
    if base == 0:
        # d/dy 0**y is 0 where the result is finite (torch masks the same way).
        return None, g * 0
    lb = complex(np.log(complex(base))) if isinstance(base, complex) or base < 0 else \
        float(np.log(base))
    return None, g * _conj(out * lb)


def pow(input, exponent, *, out=None):
    """``input ** exponent`` for every tensor/number combination."""
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return _out(POW_TENSOR.call(input, exponent), out)
        return _out(POW_SCALAR.call(input, exponent), out)
    return _out(POW_RSCALAR.call(input, exponent), out)


# ----------------------------------------------------------------------------- unary math
EXP = unary("exp", np.exp, save=(("out", None),), float_only=True)
EXP.def_vjp(lambda ctx, g: (g * _conj(ctx.saved[0]),))
LOG = unary("log", np.log, save=((0, None),), float_only=True)
LOG.def_vjp(lambda ctx, g: (g / _conj(ctx.saved[0]),))
SQRT = unary("sqrt", np.sqrt, save=(("out", None),), float_only=True)
SQRT.def_vjp(lambda ctx, g: (g / (2 * _conj(ctx.saved[0])),))
RSQRT = unary("rsqrt", lambda x: 1 / np.sqrt(x), save=(("out", None),), float_only=True)
RSQRT.def_vjp(lambda ctx, g: (g * (-0.5 * _conj(ctx.saved[0]) ** 3),))
SIN = unary("sin", np.sin, save=((0, None),), float_only=True)
SIN.def_vjp(lambda ctx, g: (g * _conj(cos(ctx.saved[0])),))
COS = unary("cos", np.cos, save=((0, None),), float_only=True)
COS.def_vjp(lambda ctx, g: (g * -_conj(sin(ctx.saved[0])),))
LOG1P = unary("log1p", np.log1p, "Log1PBackward0", save=((0, None),), float_only=True)
LOG1P.def_vjp(lambda ctx, g: (g / _conj(ctx.saved[0] + 1),))
EXPM1 = unary("expm1", np.expm1, save=(("out", None),), float_only=True)
EXPM1.def_vjp(lambda ctx, g: (g * _conj(ctx.saved[0] + 1),))
RECIPROCAL = unary("reciprocal", lambda x: 1 / x, save=(("out", None),), float_only=True)
RECIPROCAL.def_vjp(lambda ctx, g: (g * -_conj(ctx.saved[0] * ctx.saved[0]),))


def _tanh_bw_fwd(g, y):
    # g * (1 - y^2) with array-array operations only (no scalar conversion per call), in one
    # buffer: g*y*y already has the broadcast shape and dtype of the result.
    gy = g * y
    gy *= y
    if type(gy) is _ndarray:
        return np.subtract(g, gy, out=gy)
    return g - gy


def _sigmoid_bw_fwd(g, y):
    gy = g * y
    gyy = gy * y
    if type(gyy) is _ndarray:
        return np.subtract(gy, gyy, out=gyy)
    return gy - gyy


TANH = unary("tanh", np.tanh, save=(("out", None),), float_only=True)
TANH_BW = binary("tanh_backward", _tanh_bw_fwd, save=((0, 1), (1, None)))


@TANH.def_vjp
def _(ctx, g):
    raw = _raw_grad(ctx, g, 0)
    if raw is not None:
        return (_wrap(_tanh_bw_fwd(*raw)),)
    return (TANH_BW.call(g, _conj(ctx.saved[0])),)


@TANH_BW.def_vjp
def _(ctx, gg):
    n = ctx._next
    raw = _raw_grad(ctx, gg, 1) if n[1] else None
    if raw is not None:
        graw = _raw_grad(ctx, gg, 0)
        if graw is not None:
            # exactly the ops below on the arrays (real, one dtype, one shape)
            ggd, yd = raw
            gy = ggd * -2  # then * g * y, in place (same order, same values)
            gy *= graw[1]
            gy *= yd
            return (_wrap(_tanh_bw_fwd(ggd, yd)) if n[0] else None, _wrap(gy))
    g, y = ctx.saved
    y = _conj(y)
    return (TANH_BW.call(gg, y) if n[0] else None,
            (gg * -2 * _conj(g) * y) if n[1] else None)


def _sigmoid_fwd(x):
    # Stable for large |x|: exp only of non-positive numbers.
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


SIGMOID = unary("sigmoid", _sigmoid_fwd, save=(("out", None),), float_only=True)
SIGMOID_BW = binary("sigmoid_backward", _sigmoid_bw_fwd, save=((0, 1), (1, None)))


@SIGMOID.def_vjp
def _(ctx, g):
    raw = _raw_grad(ctx, g, 0)
    if raw is not None:
        return (_wrap(_sigmoid_bw_fwd(*raw)),)
    return (SIGMOID_BW.call(g, _conj(ctx.saved[0])),)


@SIGMOID_BW.def_vjp
def _(ctx, gg):
    g, y = ctx.saved
    n = ctx._next
    y = _conj(y)
    return (SIGMOID_BW.call(gg, y) if n[0] else None,
            (gg * _conj(g) * (1 - 2 * y)) if n[1] else None)


def _relu_fwd(x):
    return np.maximum(x, 0) if x.dtype.kind != "b" else x.copy()


RELU = unary("relu", _relu_fwd, save=(("out", None),))


def _threshold_bw_fwd(g, x, threshold):
    return np.where(x > threshold, g, np.zeros((), g.dtype))


THRESHOLD_BW = binary("threshold_backward", _threshold_bw_fwd, save=((1, None),),
                      params=True)


@RELU.def_vjp
def _(ctx, g):
    raw = _raw_grad(ctx, g, 0)
    if raw is not None:
        return (_wrap(_threshold_bw_fwd(raw[0], raw[1], 0)),)
    return (THRESHOLD_BW.call(g, ctx.saved[0], 0),)


@THRESHOLD_BW.def_vjp
def _(ctx, gg):
    (x,) = ctx.saved
    return THRESHOLD_BW.call(gg, x, ctx._params), None


def tanh_backward(grad_output, output):
    return TANH_BW.call(grad_output, output)


def sigmoid_backward(grad_output, output):
    return SIGMOID_BW.call(grad_output, output)


def threshold_backward(grad_output, input, threshold):
    return THRESHOLD_BW.call(grad_output, input, threshold)


def _sign_fwd(x):
    if x.dtype.kind == "b":
        return x.copy()
    if x.dtype.kind == "f":
        # torch's sign(nan) is 0 (NumPy's is nan): (x > 0) - (x < 0) is 0 for nan
        return np.subtract(x > 0, x < 0, dtype=x.dtype)
    return np.sign(x)


SIGN = unary("sign", _sign_fwd)
SIGN.def_vjp(lambda ctx, g: (g * 0,))


def _abs_fwd(x):
    return np.abs(x) if x.dtype.kind != "b" else x.copy()


ABS = unary("abs", _abs_fwd, save=((0, None),))


@ABS.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    return (g * sgn(x),)


@ABS.def_jvp
def _(ctx, t):
    x = ctx.inputs[0]
    if x._data.dtype.kind == "c":  # d|z| = Re(conj(sgn z) dz): a real tangent
        from .complex_ops import real
        return real(_conj(sgn(x)) * t)
    return t * sgn(x)


def _sgn_fwd(x):
    if x.dtype.kind != "c":
        return _sign_fwd(x)
    mag = np.abs(x)
    return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)


SGN = unary("sgn", _sgn_fwd, save=((0, None),))


@SGN.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    if x._data.dtype.kind != "c":
        return (g * 0,)
    # z/|z| for complex z: (g - sgn * Re(g conj(sgn))) / |z|, 0 at z = 0 (torch's sgn_backward).
    from .complex_ops import real
    mag = abs(x)
    s = sgn(x)
    gx = (g - s * real(g * _conj(s))) / where(mag == 0, 1.0, mag)
    return (where(mag == 0, 0.0, gx),)


@SGN.def_jvp
def _(ctx, t):
    x = ctx.inputs[0]
    if x._data.dtype.kind != "c":
        return t * 0
    from .complex_ops import real
    mag = abs(x)
    s = ctx.outputs[0]
    return where(mag == 0, 0.0, (t - s * real(_conj(s) * t)) / where(mag == 0, 1.0, mag))


def sgn(input):
    """sign for real tensors; z / |z| (0 at 0) for complex ones."""
    return SGN.call(input)


CONJ = unary("conj", np.conjugate, linear=True)
CONJ.def_vjp(lambda ctx, g: (_conj(g),))


def _rounding(name, fn):
    """floor/ceil/trunc: integers pass through (copied), the gradient is zero."""
    op = unary(name, lambda x: x.copy() if x.dtype.kind in "biu" else fn(x))
    op.def_vjp(lambda ctx, g: (g * 0,))
    return op


_FLOOR = _rounding("floor", np.floor)
_CEIL = _rounding("ceil", np.ceil)
_TRUNC = _rounding("trunc", np.trunc)


def floor(input):
    return _FLOOR.call(input)


def ceil(input):
    return _CEIL.call(input)


def trunc(input):
    return _TRUNC.call(input)


def _round_fwd(x, decimals):
    if x.dtype.kind in "biu":
        if decimals is not None:
            from .. import _dtype
            raise NotImplementedError(f'"round_cpu" not implemented for '
                                      f"'{_dtype.from_np(x.dtype)._legacy[:-6]}'")
        return x.copy()
    return np.round(x, decimals or 0)


# torch: round(x) is RoundBackward0, round(x, decimals=d) (any d, even 0) RoundBackward1.
ROUND = unary("round", _round_fwd, params=True)
ROUND.def_vjp(lambda ctx, g: (g * 0,))
ROUND_DECIMALS = unary("round_decimals", _round_fwd, "RoundBackward1", params=True)
ROUND_DECIMALS.def_vjp(lambda ctx, g: (g * 0,))


def round(input, *, decimals=None):
    if decimals is None:
        return ROUND.call(input, None)
    return ROUND_DECIMALS.call(input, decimals)


def exp(input):
    return EXP.call(input)


def log(input):
    return LOG.call(input)


def sqrt(input):
    return SQRT.call(input)


def rsqrt(input):
    return RSQRT.call(input)


def sin(input):
    return SIN.call(input)


def cos(input):
    return COS.call(input)


def tanh(input):
    return TANH.call(input)


def sigmoid(input):
    return SIGMOID.call(input)


def relu(input):
    return RELU.call(input)


def abs(input):
    return ABS.call(input)


def sign(input):
    return SIGN.call(input)


def reciprocal(input):
    return RECIPROCAL.call(input)


def square(input):
    return POW_SCALAR.call(input, 2)


def log1p(input):
    return LOG1P.call(input)


def expm1(input):
    return EXPM1.call(input)


# ----------------------------------------------------------------------------- comparisons
def _cmp(name, fn):
    op = binary(name, fn, promote="compare")
    return op


EQ = _cmp("eq", np.equal)
NE = _cmp("ne", np.not_equal)
def _ordered(name, fn):
    """Order comparisons have no complex kernel in torch."""
    def kernel(a, b):
        dt = a.dtype if isinstance(a, np.ndarray) else np.asarray(b).dtype
        if dt.kind == "c":
            raise _no_kernel(name + "_cpu", dt)
        return fn(a, b)
    return kernel


LT = _cmp("lt", _ordered("lt", np.less))
LE = _cmp("le", _ordered("le", np.less_equal))
GT = _cmp("gt", _ordered("gt", np.greater))
GE = _cmp("ge", _ordered("ge", np.greater_equal))
LOGICAL_AND = _cmp("logical_and", np.logical_and)
LOGICAL_OR = _cmp("logical_or", np.logical_or)
LOGICAL_XOR = _cmp("logical_xor", np.logical_xor)


def eq(input, other):
    return EQ.call(input, other)


def ne(input, other):
    return NE.call(input, other)


def lt(input, other):
    return LT.call(input, other)


def le(input, other):
    return LE.call(input, other)


def gt(input, other):
    return GT.call(input, other)


def ge(input, other):
    return GE.call(input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def logical_and(input, other):
    return LOGICAL_AND.call(input, other)


def logical_or(input, other):
    return LOGICAL_OR.call(input, other)


def logical_xor(input, other):
    return LOGICAL_XOR.call(input, other)


_LOGICAL_NOT = unary("logical_not", np.logical_not)
_ISNAN = unary("isnan", np.isnan)
_ISINF = unary("isinf", np.isinf)
_ISFINITE = unary("isfinite", np.isfinite)


def logical_not(input):
    return _LOGICAL_NOT.call(input)


def isnan(input):
    return _ISNAN.call(input)


def isinf(input):
    return _ISINF.call(input)


def isfinite(input):
    return _ISFINITE.call(input)


def _int_or_bool(name, fn, kernel_name=None):
    kernel_name = kernel_name or name + "_cpu"

    def kernel(a, b):
        for v in (a, b):
            dt = np.asarray(v).dtype
            if dt.kind in "fc":
                from .. import _dtype
                raise NotImplementedError(f'"{kernel_name}" not implemented for '
                                          f"'{_dtype.from_np(dt)._legacy[:-6]}'")
        return fn(a, b)
    return binary(name, kernel)


BITWISE_AND = _int_or_bool("bitwise_and", np.bitwise_and)
BITWISE_OR = _int_or_bool("bitwise_or", np.bitwise_or)
BITWISE_XOR = _int_or_bool("bitwise_xor", np.bitwise_xor)
LSHIFT = _int_or_bool("bitwise_left_shift", np.left_shift, "lshift_cpu")
RSHIFT = _int_or_bool("bitwise_right_shift", np.right_shift, "rshift_cpu")


def _invert(x):
    if x.dtype.kind == "f" or x.dtype.kind == "c":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return np.invert(x)


_BITWISE_NOT = unary("bitwise_not", _invert)


def bitwise_and(input, other):
    return BITWISE_AND.call(input, other)


def bitwise_or(input, other):
    return BITWISE_OR.call(input, other)


def bitwise_xor(input, other):
    return BITWISE_XOR.call(input, other)


def bitwise_not(input):
    return _BITWISE_NOT.call(input)


# ----------------------------------------------------------------------------- max/min/clamp
def _real_only(name, fn):
    def kernel(a, b):
        dt = a.dtype if isinstance(a, np.ndarray) else np.asarray(b).dtype
        if dt.kind == "c":
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return fn(a, b)
    return kernel


MAXIMUM = binary("maximum", _real_only("maximum", np.maximum), save=((0, None), (1, None)))
MINIMUM = binary("minimum", _real_only("minimum", np.minimum), save=((0, None), (1, None)))


def _minmax_vjp(first_loses):
    # torch: ties split the gradient; an input gets nothing only where it strictly loses, so
    # where a NaN is involved both inputs receive the full gradient.
    def vjp(ctx, g):
        a, b = ctx.saved
        n = ctx._next
        tie = a == b
        half = g * 0.5
        ga = where(tie, half, where(first_loses(a, b), 0.0, g)) if n[0] else None
        gb = where(tie, half, where(first_loses(b, a), 0.0, g)) if n[1] else None
        return ga, gb
    return vjp


MAXIMUM.def_vjp(_minmax_vjp(lambda a, b: a < b))
MINIMUM.def_vjp(_minmax_vjp(lambda a, b: a > b))


def maximum(input, other):
    return MAXIMUM.call(input, other)


def minimum(input, other):
    return MINIMUM.call(input, other)


def _clamp_fwd(x, bounds):
    lo, hi = bounds
    out = x
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return out if out is not x else x.copy()


CLAMP = unary("clamp", _clamp_fwd, "ClampBackward1", save=((0, None),), params=True)


@CLAMP.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    lo, hi = ctx._params
    mask = None
    if lo is not None:
        mask = x >= lo
    if hi is not None:
        m2 = x <= hi
        mask = m2 if mask is None else mask & m2
    return (where(mask, g, 0.0),)


def clamp(input, min=None, max=None):
    """Clamp into [min, max]; bounds may be numbers or tensors."""
    from .._tensor import Tensor
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    return CLAMP.call(input, (min, max))


def _clamp_t_fwd(x, lo, hi, _):
    out = x
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    return out if out is not x else x.copy()


CLAMP_T = primitive("clamp_tensor", _clamp_t_fwd, "ClampBackward0",
                    save=((0, None), (1, None), (2, None)))


@CLAMP_T.def_vjp
def _(ctx, g):
    x, lo, hi = ctx.saved
    n = ctx._next
    gx = glo = ghi = None
    # torch's clamp_backward_min_max masks.
    if lo is not None and hi is not None:
        if n[0]:
            gx = where((x >= lo) & (x <= hi), g, 0.0)
        if n[1]:
            glo = where((x < lo) & (lo < hi), g, 0.0)
        if n[2]:
            ghi = where((x > hi) | (hi < lo), g, 0.0)
    elif lo is not None:
        gx = where(x >= lo, g, 0.0) if n[0] else None
        glo = where(x < lo, g, 0.0) if n[1] else None
    else:
        gx = where(x <= hi, g, 0.0) if n[0] else None
        ghi = where(x > hi, g, 0.0) if n[2] else None
    return gx, glo, ghi


def _clamp_tensor(input, lo, hi):
    from .._tensor import Tensor
    from .registry import as_tensor_arg, _meta_for
    from .. import _dtype
    for b, nm in ((lo, "min"), (hi, "max")):
        if b is not None and not isinstance(b, Tensor):
            raise TypeError(f"clamp(): argument '{nm}' must be Tensor, not {type(b).__name__}")
    x = as_tensor_arg(input)
    ts = [t for t in (x, lo, hi) if t is not None]
    groups = ([], [], [])
    for t in ts:
        groups[0 if t._data.ndim else 1].append(t.dtype)
    dt = _dtype.result_type_of(*groups)
    x, lo, hi = [t if t is None or t.dtype is dt else t.to(dt) for t in (x, lo, hi)]
    try:
        np.broadcast_shapes(*[t._data.shape for t in ts])
    except ValueError:
        from .registry import _broadcast_error
        raise _broadcast_error(ts[0]._data, ts[1]._data) from None
    out = CLAMP_T.call(x, lo, hi)
    if out._grad_fn is not None:
        out._grad_fn._meta = _meta_for((x, lo, hi), out._data)
    return out


clip = clamp


# ----------------------------------------------------------------------------- where
def _where_fwd(cond, a, b, _):
    return np.where(cond, a, b)


WHERE = primitive("where", _where_fwd, save=((0, None),))


@WHERE.def_vjp
def _(ctx, g):
    (cond,) = ctx.saved
    n = ctx._next
    zero = g * 0 if (n[1] or n[2]) else None
    return (None,
            where(cond, g, zero) if n[1] else None,
            where(cond, zero, g) if n[2] else None)


def where(condition, input=None, other=None):
    """Elements of `input` where `condition`, else of `other` (numbers allowed)."""
    from .._tensor import Tensor
    from .registry import as_tensor_arg, _promote2
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    cond = as_tensor_arg(condition)
    if cond._data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {cond.dtype}")
    dt = _promote2(input, other)
    a = input if isinstance(input, Tensor) else as_tensor_arg(np.asarray(input, dt))
    b = other if isinstance(other, Tensor) else as_tensor_arg(np.asarray(other, dt))
    if a._data.dtype != dt:
        a = a.to(_dtype_of(dt))
    if b._data.dtype != dt:
        b = b.to(_dtype_of(dt))
    out = WHERE.call(cond, a, b)
    node = out._grad_fn
    if node is not None and node._meta is None:
        shape = out._data.shape
        if a._data.shape != shape or b._data.shape != shape:
            node._meta = (None, (a._data.shape, a._data.dtype), (b._data.shape, b._data.dtype))
    return out


def _dtype_of(np_dtype):
    from .. import _dtype
    return _dtype.from_np(np_dtype)


def _out(result, out):
    """Support for the ``out=`` keyword: copy the result into `out` and return it."""
    if out is None:
        return result
    from .._tensor import Tensor
    if not isinstance(out, Tensor):
        raise TypeError("out= must be a Tensor")
    if out._data.shape != result._data.shape:
        out._data = np.empty(result._data.shape, out._data.dtype)
    np.copyto(out._data, result._data, casting="unsafe")
    out._vc[0] += 1
    return out
