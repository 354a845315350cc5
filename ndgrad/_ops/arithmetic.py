"""Arithmetic on tensors and numbers: add, sub, rsub, mul, div (and its rounding modes),
floor_divide, remainder, fmod, neg, pow and float_power, and the other pointwise functions of
two or three operands: atan2, hypot, copysign, xlogy, logaddexp(2), ldexp, nextafter,
heaviside, lerp, addcmul and addcdiv.

Every rule is written in ndgrad ops, so it is differentiable itself. Node names are torch's.
"""

import operator

import numpy as np

from .. import _dtype
from .. import _state
from .._tensor import Tensor
from .._graph_core import FREED, SavedTensor
from .comparison import isfinite, where
from .inplace import apply_inplace
from .arguments import _int_kernel_error, _no_kernel, _out, _tensor_only, scalar_first
from .pointwise import _LN2, _conj, _conj_any, _guarded, _quiet, _raw_grad, _wrap, exp, exp2, log
from .registry import _meta_for, binary, primitive, unary
from .registry import _broadcast_error

_tls = _state.tls
_ndarray = np.ndarray

__all__ = [
    "square", "add", "addcdiv", "addcmul", "arctan2", "atan2", "copysign", "div", "divide",
    "float_power", "floor_divide", "fmod", "heaviside", "hypot", "ldexp", "lerp", "logaddexp",
    "logaddexp2", "mul", "multiply", "neg", "negative", "nextafter", "pow", "remainder",
    "rsub", "sub", "subtract", "true_divide", "xlogy",
]

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
    if t is not None and t._grad_fn is None and not t._rg and getattr(s, "_rg", False):
        return None  # detached in place since saved: unpack raises torch's error
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


def _same_tangent(ctx, t):
    return t


def _alpha_tangent(sign):
    """The tangent part of the operand scaled by ``sign * alpha`` (alpha None means 1)."""
    def part(ctx, t):
        k = sign * (1 if ctx.params is None else ctx.params)
        return t if k == 1 else -t if k == -1 else t * k
    return part


ADD.def_jvp_parts(_same_tangent, _alpha_tangent(1))
SUB.def_jvp_parts(_same_tangent, _alpha_tangent(-1))
# rsub(a, b, alpha) = b - alpha * a
RSUB.def_jvp_parts(_alpha_tangent(-1), _same_tangent)
RSUB_T.def_jvp_parts(_alpha_tangent(-1), _same_tangent)
MUL.def_jvp_parts(lambda ctx, ta: ta * ctx.inputs[1], lambda ctx, tb: tb * ctx.inputs[0])


@ADD.def_jvp_raw
def _(a, b, ta, tb, out):
    if ta is None:
        return tb
    return ta if tb is None else ta + tb


@MUL.def_jvp_raw
def _(a, b, ta, tb, out):
    r = None if ta is None else ta * b
    if tb is not None:
        r = tb * a if r is None else r + tb * a
    return r


@SUB.def_jvp_raw
def _(a, b, ta, tb, out):
    ntb = None if tb is None else _neg_fwd(tb)  # ta + (-tb), as the parts sum
    if ta is None:
        return ntb
    return ta if ntb is None else ta + ntb


@DIV.def_jvp
def _(ctx, ta, tb):
    # torch's (ta - tb * out) / b, a missing tangent a zero that adds no nan (inf * 0): the
    # sum of the parts ta / b - tb * (out / b) made nan of inf - inf where torch has +-inf
    b = ctx.inputs[1]
    if tb is None:
        return None if ta is None else ta / b
    p = tb * ctx.outputs[0]
    return (-p if ta is None else ta - p) / b


@DIV.def_jvp_raw
def _(a, b, ta, tb, out):
    if tb is None:
        return ta / b
    p = tb * out
    return (_neg_fwd(p) if ta is None else ta - p) / b


def alpha_param(fname, input, other, alpha):
    """The ``alpha`` of add/sub/rsub as the op's parameter: None for 1, else a Python number.

    torch reads alpha as a Scalar: a number, or a 0-d tensor that does not require grad
    (optimizers pass ``alpha=-lr * trust_ratio``, a 0-d tensor); and it refuses a bool alpha
    unless the result is bool, a float alpha for an integral result and a complex one for a
    real result. All checks run before anything is computed or written."""
    if isinstance(alpha, Tensor):
        if alpha._data.ndim or alpha.requires_grad:
            raise TypeError(f"{fname}(): argument 'alpha' must be Number, not Tensor")
        alpha = alpha._data.item()
    if alpha == 1 and not isinstance(alpha, bool):
        return None
    if isinstance(alpha, (bool, int, float, complex, np.generic)):
        dt = _dtype.result_type(input, other) if isinstance(input, Tensor) else \
            _dtype.result_type(other, input)
        cat = dt._category
        if isinstance(alpha, (bool, np.bool_)):
            if dt is not _dtype.bool:
                raise RuntimeError("Boolean alpha only supported for Boolean results.")
        elif cat <= _dtype._INT and not isinstance(alpha, (int, np.integer)):
            raise RuntimeError("For integral input tensors, argument alpha must not be a "
                               "floating point number.")
        elif cat != _dtype._COMPLEX and isinstance(alpha, (complex, np.complexfloating)):
            raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                               "complex number.")
    return alpha


def add(input, other, *legacy, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion."""
    if legacy:  # the deprecated add(input, alpha, other)
        (input, other), kw = scalar_first("add", (input, other) + legacy, alpha != 1)
        alpha = kw["alpha"]
    return _out(ADD.call(input, other, alpha_param("add", input, other, alpha)), out)


def sub(input, other, *legacy, alpha=1, out=None):
    """``input - alpha * other``."""
    if legacy:  # the deprecated sub(input, alpha, other)
        (input, other), kw = scalar_first("sub", (input, other) + legacy, alpha != 1)
        alpha = kw["alpha"]
    return _out(SUB.call(input, other, alpha_param("sub", input, other, alpha)), out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    op = RSUB_T if isinstance(other, Tensor) and isinstance(input, Tensor) else RSUB
    return op.call(input, other, alpha_param("rsub", input, other, alpha))


def mul(input, other, *, out=None):
    return _out(MUL.call(input, other), out)


multiply = mul

# torch has no derivative for floor_divide (its node is NotImplemented); div with a
# rounding_mode is DivBackward2 with zero gradients.
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


def _zero_tangent(ctx, t):
    return t * 0


for _op in (FLOOR_DIV, FLOOR_DIV_MODE, TRUNC_DIV):
    _op.def_jvp_parts(_zero_tangent, _zero_tangent)


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


REMAINDER.def_jvp_parts(_same_tangent,
                        lambda ctx, tb: -tb * FLOOR_DIV_MODE.call(*ctx.inputs))
REMAINDER_SCALAR.def_jvp_parts(_same_tangent, None)


def remainder(input, other):
    """Python-style modulus (the result has the sign of `other`)."""
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
NEG.def_jvp_raw(lambda x, t, y: _neg_fwd(t))


def neg(input):
    return NEG.call(input)


negative = neg


# ----------------------------------------------------------------------------- pow
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

def _pow_scalar_fwd(a, e):
    # torch special-cases these exponents (sqrt(-0.0) is -0.0; pow would give +0.0).
    if e == 0.5 and a.dtype.kind == "f":
        return np.sqrt(a)
    if e == -0.5 and a.dtype.kind == "f":
        with np.errstate(divide="ignore"):
            return 1 / np.sqrt(a)
    if a.dtype.kind in "biu" and type(e) is int and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if (e == 3 or e == -2) and (a.dtype == _F32 or a.dtype == _F64):
        # torch's CPU kernel multiplies for these exponents (x*x*x, 1/(x*x)), with the
        # roundings of the products; np.power's pow() rounds once (and is 20x slower)
        sq = a * a
        out = sq if type(sq) is np.ndarray else None   # (0-d: NumPy made a scalar)
        if e == 3:
            return np.multiply(sq, a, out=out)
        with np.errstate(divide="ignore"):
            return np.divide(a.dtype.type(1), sq, out=out)
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
MUL_SCALAR.batch_transparent = True


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
        # The mask wraps the whole product, as torch's: a second derivative at 0 ** y meets
        # 0 * log(0) and is nan, as torch's.
        gy = g * where((x == 0) & _nonnegative(y), 0.0, _conj(out * log(x)))
    return gx, gy


def _nonnegative(y):
    """y >= 0, for complex y: Im y == 0 and Re y >= 0 (torch's mask of 0 ** y)."""
    return (y.imag == 0) & (y.real >= 0) if y._data.dtype.kind == "c" else y >= 0


@POW_RSCALAR.def_vjp
def _(ctx, g):
    base, out = ctx.saved
    if base == 0:
        # d/dy 0**y is 0 for y >= 0, out * log(0) (-inf or nan) elsewhere, as torch masks it.
        return None, g * _zero_base_slope(ctx.saved[1])
    lb = complex(np.log(complex(base))) if isinstance(base, complex) or base < 0 else \
        float(np.log(base))
    return None, g * _conj(out * lb)


def _zero_base_slope(out):
    """d/dy 0 ** y by torch's masking: 0 where y >= 0 (out is then 0 or 1), else
    out * log(0) (-inf for y < 0, nan for nan y); the product stays in the graph, so a second
    derivative is nan where torch's is."""
    return where(isfinite(out), 0.0, out * float("-inf"))


def _pow_scalar_tangent(ctx, tx):
    x, e = ctx.inputs
    if e == 0:
        return tx * 0
    if e == 2:
        return tx * (2 * x)
    return tx * (e * x ** (e - 1))


def _pow_rscalar_tangent(ctx, ty):
    base = ctx.inputs[0]
    if base == 0:
        return ty * _zero_base_slope(ctx.outputs[0])
    lb = complex(np.log(complex(base))) if isinstance(base, complex) or base < 0 else \
        float(np.log(base))
    return ty * (ctx.outputs[0] * lb)


POW_SCALAR.def_jvp_parts(_pow_scalar_tangent, None)
POW_TENSOR.def_jvp_parts(
    lambda ctx, tx: where(ctx.inputs[1] == 0, 0.0,
                          tx * (ctx.inputs[1] * ctx.inputs[0] ** (ctx.inputs[1] - 1))),
    lambda ctx, ty: ty * (ctx.outputs[0] * where(
        (ctx.inputs[0] == 0) & _nonnegative(ctx.inputs[1]), 0.0, log(ctx.inputs[0]))))
POW_RSCALAR.def_jvp_parts(None, _pow_rscalar_tangent)


def pow(input, exponent, *, out=None):
    """``input ** exponent`` for every tensor/number combination."""
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return _out(POW_TENSOR.call(input, exponent), out)
        return _out(POW_SCALAR.call(input, exponent), out)
    return _out(POW_RSCALAR.call(input, exponent), out)



def square(input):
    return POW_SCALAR.call(input, 2)


# -------------------------------------------------------------- atan2, hypot, copysign, xlogy, fmod
ATAN2 = binary("atan2", _guarded("atan2_cpu", np.arctan2), save=((0, None), (1, None)),
               promote="float", elementwise=True)


@ATAN2.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    # torch zeroes the reciprocal at the origin: gradients 0 (and -0) there, not NaN.
    denom = a * a + b * b
    recip = where(denom == 0, 0.0, 1 / where(denom == 0, 1.0, denom))
    return (g * b * recip) if n[0] else None, (g * -a * recip) if n[1] else None


def atan2(input, other, *, out=None):
    """The angle of the point (other, input): ``arctan(input / other)`` in the right quadrant."""
    _tensor_only("atan2", other)
    return _out(ATAN2.call(input, other), out)


arctan2 = atan2


def _hypot_fwd(a, b):
    if a.dtype.kind not in "f":
        raise _int_kernel_error("hypot_cpu", a.dtype)
    return np.hypot(a, b)


HYPOT = binary("hypot", _quiet(_hypot_fwd), save=((0, None), (1, None), ("out", None)),
               elementwise=True)


@HYPOT.def_vjp
def _(ctx, g):
    a, b, res = ctx.saved
    n = ctx._next
    return (g * a / res) if n[0] else None, (g * b / res) if n[1] else None


def hypot(input, other, *, out=None):
    """``sqrt(input**2 + other**2)`` without overflow."""
    _tensor_only("hypot", other)
    return _out(HYPOT.call(input, other), out)


def _copysign_vjp(ctx, g):
    a, res = ctx.saved
    n = ctx._next
    ga = None
    if n[0]:
        ratio = where(a == 0, 0.0, res / where(a == 0, 1.0, a))
        ga = g * ratio
    gb = (g * 0) if len(n) > 1 and n[1] else None
    return ga, gb


COPYSIGN = binary("copysign", _guarded("copysign_cpu", np.copysign),
                  save=((0, None), ("out", None)), promote="float", elementwise=True)
COPYSIGN_SCALAR = binary("copysign_scalar", _guarded("copysign_cpu", np.copysign),
                         "CopysignBackward1",
                         save=((0, None), ("out", None)), promote="float", elementwise=True)
COPYSIGN.def_vjp(_copysign_vjp)
COPYSIGN_SCALAR.def_vjp(_copysign_vjp)


def copysign(input, other, *, out=None):
    """Magnitude of `input` with the sign of `other` (sign bit, so -0.0 counts as negative)."""
    op = COPYSIGN if isinstance(other, Tensor) else COPYSIGN_SCALAR
    return _out(op.call(input, other), out)


def _xlogy_fwd(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        res = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), res.dtype), res)


_xlogy_k = _guarded("xlogy_cpu", _xlogy_fwd)
XLOGY = binary("xlogy", _xlogy_k, save=((0, None), (1, None)), promote="float", elementwise=True)
XLOGY_SELF_SCALAR = binary("xlogy_self_scalar", _xlogy_k, "XlogyBackward1",
                           save=((0, None), (1, None)), promote="float", elementwise=True)
XLOGY_OTHER_SCALAR = binary("xlogy_other_scalar", _xlogy_k, "XlogyBackward2",
                            save=((0, None), (1, None)), promote="float", elementwise=True)


def _xlogy_vjp(ctx, g):
    x, y = ctx.saved
    n = ctx._next
    gx = gy = None
    if n[0]:
        # torch: xlogy(grad, other) masked to 0 where self == 0 and other <= 0.
        gx = xlogy(g, y)
        gx = where((x == 0) & (y <= 0), 0.0, gx)
    if n[1]:
        gy = g * x / y
    return gx, gy


for _op in (XLOGY, XLOGY_SELF_SCALAR, XLOGY_OTHER_SCALAR):
    _op.def_vjp(_xlogy_vjp)


def xlogy(input, other, *, out=None):
    """``input * log(other)``, and 0 where ``input == 0`` (unless `other` is NaN)."""
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        op = XLOGY
    elif isinstance(other, Tensor):
        op = XLOGY_SELF_SCALAR
    else:
        op = XLOGY_OTHER_SCALAR
    return _out(op.call(input, other), out)


def _fmod_fwd(a, b):
    if np.asarray(b).dtype.kind in "biu" and np.asarray(a).dtype.kind in "biu" and \
            np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b)


_fmod_k = _guarded("fmod_cpu", _fmod_fwd, bool_ok=False)
FMOD = binary("fmod", _fmod_k, "FmodBackward1", save=((0, 1), (1, 1)), elementwise=True)
FMOD_SCALAR = binary("fmod_scalar", _fmod_k, "FmodBackward0", elementwise=True)


@FMOD.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g if n[0] else None,
            (-g * div(a, b, rounding_mode="trunc")) if n[1] else None)


FMOD_SCALAR.def_vjp(lambda ctx, g: (g, None))


def fmod(input, other, *, out=None):
    """C-style remainder: the result has the sign of the dividend `input`."""
    op = FMOD if isinstance(other, Tensor) else FMOD_SCALAR
    return _out(op.call(input, other), out)


# ----------------------------------------------------------------------------- float_power
def _float_power_dtype(*vals):
    for v in vals:
        if isinstance(v, Tensor) and v._data.dtype.kind == "c" or isinstance(v, complex):
            return _dtype.complex128
    return _dtype.float64


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in double precision (float64, or complex128)."""
    dt = _float_power_dtype(input, exponent)
    if isinstance(input, Tensor):
        base = input.to(dt)
        if isinstance(exponent, Tensor):
            return _out(pow(base, exponent.to(dt)), out)
        exp_ = complex(exponent) if dt is _dtype.complex128 else float(exponent)
        return _out(pow(base, exp_), out)
    if not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected a Tensor as input or exponent")
    base = complex(input) if dt is _dtype.complex128 else float(input)
    return _out(pow(base, exponent.to(dt)), out)


# --------------------------------------------------------------------------- lerp, addcmul, addcdiv
def _broadcast_meta(out, inputs):
    """Let the engine reduce each gradient to its input's shape (and dtype)."""
    node = out._grad_fn
    if node is not None:
        node._meta = _meta_for(inputs, out._data)
    return out


# C++ type names torch prints in dtype-mismatch messages.
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "int64": "long int", "int32": "int"}


def _same_dtype(fname, first, others):
    dt = first._data.dtype
    for argname, t in others:
        if isinstance(t, Tensor) and t._data.dtype != dt:
            want = _CPP_NAMES.get(dt.name, dt.name)
            got = _CPP_NAMES.get(t._data.dtype.name, t._data.dtype.name)
            raise RuntimeError(f"expected dtype {want} for `{argname}` but got dtype {got}")


def _lerp_fwd(s, e, w):
    if s.dtype.kind not in "fc":
        raise _int_kernel_error("lerp_kernel_scalar" if not isinstance(w, np.ndarray)
                                else "lerp_kernel_tensor", s.dtype)
    if s.dtype == np.float16:  # torch computes half lerp in float32
        out = _lerp_fwd(s.astype(np.float32), e.astype(np.float32),
                        w.astype(np.float32) if isinstance(w, np.ndarray) else w)
        return out.astype(np.float16)
    diff = e - s
    # torch's two-sided formula: exact at both ends (w = 0 gives start, w = 1 gives end).
    w = np.asarray(w, dtype=s.dtype) if not isinstance(w, np.ndarray) else w
    return np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w))


LERP = primitive("lerp", lambda s, e, w: _lerp_fwd(s, e, w), "LerpBackward0")
LERP_T = primitive("lerp_tensor", lambda s, e, w, p: _lerp_fwd(s, e, w), "LerpBackward1",
                   save=((0, 2), (1, 2), (2, None)))


@LERP.def_vjp
def _(ctx, g):
    w = ctx._params
    n = ctx._next
    return (g * (1 - w)) if n[0] else None, (g * w) if n[1] else None


@LERP_T.def_vjp
def _(ctx, g):
    s, e, w = ctx.saved
    n = ctx._next
    return ((g * (1 - w)) if n[0] else None, (g * w) if n[1] else None,
            (g * (e - s)) if n[2] else None)


LERP.def_jvp_parts(lambda ctx, ts: ts * (1 - ctx.params), lambda ctx, te: te * ctx.params)
LERP_T.def_jvp_parts(lambda ctx, ts: ts * (1 - ctx.inputs[2]),
                     lambda ctx, te: te * ctx.inputs[2],
                     lambda ctx, tw: tw * (ctx.inputs[1] - ctx.inputs[0]))


def _expand_for(*ts):
    """Common broadcast shape of tensors (error text as torch's)."""
    shapes = [t._data.shape for t in ts if isinstance(t, Tensor)]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise _broadcast_error(ts[0]._data, ts[1]._data) from None


def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)`` (weight a number or a tensor)."""
    _tensor_only("lerp", end, 2, "end")
    _same_dtype("lerp", input, (("end", end), ("weight", weight)))
    _expand_for(input, end, *([weight] if isinstance(weight, Tensor) else []))
    if isinstance(weight, Tensor):
        res = LERP_T.call(input, end, weight)
        return _out(_broadcast_meta(res, (input, end, weight)), out)
    res = LERP.call(input, end, params=weight)
    return _out(_broadcast_meta(res, (input, end)), out)


def _addcmul_fwd(x, a, b, value):
    return x + value * (a * b)


def _addcdiv_fwd(x, a, b, value):
    return x + value * (a / b)


ADDCMUL = primitive("addcmul", _addcmul_fwd, save=((1, 2), (2, 1)))
ADDCDIV = primitive("addcdiv", _addcdiv_fwd, save=((1, 2), (2, None)))


@ADDCMUL.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    v = ctx._params
    n = ctx._next
    return (g if n[0] else None,
            (g * (_conj(b) * v)) if n[1] else None,
            (g * (_conj(a) * v)) if n[2] else None)


@ADDCDIV.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    v = ctx._params
    n = ctx._next
    b = _conj(b)
    return (g if n[0] else None,
            (g * v / b) if n[1] else None,
            (-g * v * _conj(a) / (b * b)) if n[2] else None)


ADDCMUL.def_jvp_parts(_same_tangent, lambda ctx, ta: ta * (ctx.inputs[2] * ctx.params),
                      lambda ctx, tb: tb * (ctx.inputs[1] * ctx.params))
ADDCDIV.def_jvp_parts(_same_tangent, lambda ctx, ta: ta * ctx.params / ctx.inputs[2],
                      lambda ctx, tb: -tb * ctx.params * ctx.inputs[1]
                      / (ctx.inputs[2] * ctx.inputs[2]))


def _addc(op, fname, input, tensor1, tensor2, value):
    for t, nm, pos in ((input, "input", 1), (tensor1, "tensor1", 2), (tensor2, "tensor2", 3)):
        _tensor_only(fname, t, pos, nm)
    _expand_for(input, tensor1, tensor2)
    groups = ([], [], [])
    for t in (input, tensor1, tensor2):
        groups[0 if t._data.ndim else 1].append(t.dtype)
    dt = _dtype.result_type_of(*groups)
    if op is ADDCDIV and tensor1._data.dtype.kind in "biu" and \
            tensor2._data.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    ins = [t if t.dtype is dt else t.to(dt) for t in (input, tensor1, tensor2)]
    value = _cast_value(value, dt)
    res = op.call(*ins, params=value)
    if res._data.dtype != dt.np:
        res._data = res._data.astype(dt.np)
    return _broadcast_meta(res, tuple(ins))


def _cast_value(value, dt):
    """`value` as a Python number of the result dtype's kind (torch truncates a float `value`
    for integer tensors)."""
    if isinstance(value, Tensor):
        value = value.item()
    if dt.np.kind == "b":
        return bool(value)
    return np.asarray(value).astype(dt.np).item()


def addcmul(input, tensor1, tensor2, *legacy, value=1, out=None):
    """``input + value * tensor1 * tensor2``."""
    if legacy:  # the deprecated addcmul(input, value, tensor1, tensor2)
        (input, tensor1, tensor2), kw = scalar_first(
            "addcmul", (input, tensor1, tensor2) + legacy, value != 1)
        value = kw["value"]
    return _out(_addc(ADDCMUL, "addcmul", input, tensor1, tensor2, value), out)


def addcdiv(input, tensor1, tensor2, *legacy, value=1, out=None):
    """``input + value * tensor1 / tensor2``."""
    if legacy:  # the deprecated addcdiv(input, value, tensor1, tensor2)
        (input, tensor1, tensor2), kw = scalar_first(
            "addcdiv", (input, tensor1, tensor2) + legacy, value != 1)
        value = kw["value"]
    return _out(_addc(ADDCDIV, "addcdiv", input, tensor1, tensor2, value), out)


# ----------------------------------------------------------- logaddexp, ldexp, nextafter, heaviside
def _float_kernel(name, fn):
    def kernel(a, b):
        if a.dtype.kind not in "fc":
            raise _int_kernel_error(name, a.dtype)
        with np.errstate(all="ignore"):
            return fn(a, b)
    return kernel


def _logaddexp_fwd(a, b):
    if a.dtype.kind == "c":
        # Shift by the operand with the larger real part; exp never overflows.
        m = np.where(a.real >= b.real, a, b)
        with np.errstate(all="ignore"):
            return m + np.log(np.exp(a - m) + np.exp(b - m))
    return np.logaddexp(a, b)


LOGADDEXP = binary("logaddexp", _float_kernel("logaddexp_cpu", _logaddexp_fwd),
                   save=((0, None), (1, None)), elementwise=True)
LOGADDEXP2 = binary("logaddexp2", _float_kernel("logaddexp2_cpu", np.logaddexp2),
                    save=((0, None), (1, None)), elementwise=True)


@LOGADDEXP.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return ((g / _conj(1 + exp(b - a))) if n[0] else None,
            (g / _conj(1 + exp(a - b))) if n[1] else None)


@LOGADDEXP2.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g / (1 + exp2(b - a))) if n[0] else None, (g / (1 + exp2(a - b))) if n[1] else None


def logaddexp(input, other, *, out=None):
    """``log(exp(input) + exp(other))`` without overflow."""
    _tensor_only("logaddexp", other)
    return _out(LOGADDEXP.call(input, other), out)


def logaddexp2(input, other, *, out=None):
    """``log2(2**input + 2**other)`` without overflow."""
    _tensor_only("logaddexp2", other)
    return _out(LOGADDEXP2.call(input, other), out)


def _ldexp_fwd(a, b):
    with np.errstate(over="ignore"):
        return a * np.exp2(b.astype(a.dtype))


LDEXP = binary("ldexp", _ldexp_fwd, save=((1, None), ("out", 1)), promote="float", elementwise=True)


@LDEXP.def_vjp
def _(ctx, g):
    b, res = ctx.saved
    n = ctx._next
    gx = None
    if n[0]:
        factor = exp2(b)
        if b._data.dtype.kind in "biu":
            # torch forms 2**other in integer arithmetic here: 0 for negative exponents.
            factor = where(b < 0, 0.0, factor)
        gx = g * _conj(factor)  # conjugate Wirtinger: g times the conjugate slope
    return gx, (g * _conj(res * _LN2)) if n[1] else None


def ldexp(input, other, *, out=None):
    """``input * 2 ** other``."""
    _tensor_only("ldexp", other)
    return _out(LDEXP.call(input, other), out)


NEXTAFTER = binary("nextafter", _guarded("nextafter_cpu", _float_kernel("nextafter_cpu",
                                                                         np.nextafter)),
                   save=((0, None), (1, None)), elementwise=True)


@NEXTAFTER.def_vjp
def _(ctx, g):
    # torch: the gradient passes to `input` where it moves (input != other), `other` gets 0.
    x, y = ctx.saved
    n = ctx._next
    return (where(x == y, 0.0, g) if n[0] else None), ((g * 0) if n[1] else None)


def nextafter(input, other, *, out=None):
    """The next representable float after `input` towards `other`."""
    _tensor_only("nextafter", other)
    return _out(NEXTAFTER.call(input, other), out)


def _heaviside_fwd(x, v):
    if x.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if x.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return np.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype)


HEAVISIDE = binary("heaviside", _heaviside_fwd, "torch::autograd::NotImplemented")


@HEAVISIDE.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


def heaviside(input, values, *, out=None):
    """The step function: 0 below zero, 1 above, `values` at zero."""
    _tensor_only("heaviside", values, 2, "values")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _out(HEAVISIDE.call(input, values), out)


# Docstrings with a runnable example (checked by tests/test_pointwise.py via doctest).
_DOCS = {
    'float_power': (
        '``input ** exponent`` computed in double precision (float64, or complex128).',
        'ndgrad.float_power(ndgrad.tensor([2, 3]), 2)',
        'tensor([4., 9.], dtype=torch.float64)'),
    'atan2': (
        'The angle of the point (other, input), in the right quadrant; alias ``arctan2``.',
        'ndgrad.atan2(ndgrad.tensor([1.0, -1.0]), ndgrad.tensor([-1.0, -1.0]))',
        'tensor([ 2.3562, -2.3562])'),
    'hypot': (
        '``sqrt(input**2 + other**2)`` without overflow.',
        'ndgrad.hypot(ndgrad.tensor([3.0]), ndgrad.tensor([4.0]))',
        'tensor([5.])'),
    'copysign': (
        'Magnitude of `input` with the sign of `other` (its sign bit: -0.0 is negative).',
        'ndgrad.copysign(ndgrad.tensor([1.0, 2.0]), -0.0)',
        'tensor([-1., -2.])'),
    'xlogy': (
        '``input * log(other)``, and 0 where ``input == 0`` (unless `other` is NaN).',
        'ndgrad.xlogy(ndgrad.tensor([0.0, 2.0]), ndgrad.tensor([0.0, 3.0]))',
        'tensor([0.0000, 2.1972])'),
    'fmod': (
        'C-style remainder: the result has the sign of the dividend `input`.',
        'ndgrad.fmod(ndgrad.tensor([-3.0, 3.0]), 2)',
        'tensor([-1.,  1.])'),
    'lerp': (
        '``input + weight * (end - input)`` (weight a number or a tensor).',
        'ndgrad.lerp(ndgrad.tensor([0.0, 1.0]), ndgrad.tensor([10.0, 3.0]), 0.5)',
        'tensor([5., 2.])'),
    'addcmul': (
        '``input + value * tensor1 * tensor2``.',
        ('ndgrad.addcmul(ndgrad.tensor([1.0]), ndgrad.tensor([2.0]), ndgrad.tensor([3.0]), '
        'value=0.5)'),
        'tensor([4.])'),
    'addcdiv': (
        '``input + value * tensor1 / tensor2``.',
        ('ndgrad.addcdiv(ndgrad.tensor([1.0]), ndgrad.tensor([2.0]), ndgrad.tensor([4.0]), '
        'value=2)'),
        'tensor([2.])'),
    'logaddexp': (
        '``log(exp(input) + exp(other))`` without overflow.',
        'ndgrad.logaddexp(ndgrad.tensor([1000.0, 0.0]), ndgrad.tensor([1000.0, 0.0]))',
        'tensor([1.0007e+03, 6.9315e-01])'),
    'logaddexp2': (
        '``log2(2**input + 2**other)`` without overflow.',
        'ndgrad.logaddexp2(ndgrad.tensor([1.0]), ndgrad.tensor([1.0]))',
        'tensor([2.])'),
    'ldexp': (
        '``input * 2 ** other``.',
        'ndgrad.ldexp(ndgrad.tensor([1.0, 3.0]), ndgrad.tensor([3, -1]))',
        'tensor([8.0000, 1.5000])'),
    'nextafter': (
        'The next representable float after `input` towards `other`.',
        ('ndgrad.nextafter(ndgrad.tensor([1.0], dtype=ndgrad.float64), ndgrad.tensor([2.0], '
        'dtype=ndgrad.float64)) - 1'),
        'tensor([2.2204e-16], dtype=torch.float64)'),
    'heaviside': (
        'The step function: 0 below zero, 1 above, `values` at zero (not differentiable).',
        'ndgrad.heaviside(ndgrad.tensor([-1.0, 0.0, 2.0]), ndgrad.tensor([0.5, 0.5, 0.5]))',
        'tensor([0.0000, 0.5000, 1.0000])'),
}


def _apply_docs():
    for name, (summary, example, result) in _DOCS.items():
        globals()[name].__doc__ = (f"{summary}\n\n    >>> import ndgrad\n    >>> {example}\n    "
                                   + result.replace("\n", "\n    ") + "\n")


_apply_docs()


# ----------------------------------------------------------------------------- methods
# Tensor methods of this module's functions; methods.py binds them.
def _binary_inplace(fname, pick):
    def method(self, other):
        return apply_inplace(pick(other), self, other)
    method.__name__ = fname + "_"
    return method


def _atan2_(self, other):
    _tensor_only("atan2_", other)
    return apply_inplace(ATAN2, self, other)


def _hypot_(self, other):
    _tensor_only("hypot_", other)
    return apply_inplace(HYPOT, self, other)


def _float_power_(self, exponent):
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{self.dtype._legacy[:-6]} but the operation's result requires "
                           f"dtype {dt._legacy[:-6]}")
    if isinstance(exponent, Tensor):
        return apply_inplace(POW_TENSOR, self, exponent.to(dt))
    return apply_inplace(POW_SCALAR, self, exponent)


def _lerp_(self, end, weight):
    _tensor_only("lerp_", end, 2, "end")
    _same_dtype("lerp_", self, (("end", end), ("weight", weight)))
    if isinstance(weight, Tensor):
        res = apply_inplace(LERP_T, self, end, weight)
    else:
        res = apply_inplace(LERP, self, end, params=weight)
    return res


def _addc_(op, fname):
    def method(self, tensor1, tensor2, *legacy, value=1):
        if legacy:  # the deprecated addcmul_(value, tensor1, tensor2)
            (self, tensor1, tensor2), kw = scalar_first(
                fname, (self, tensor1, tensor2) + legacy, value != 1)
            value = kw["value"]
        for t, nm, pos in ((tensor1, "tensor1", 1), (tensor2, "tensor2", 2)):
            _tensor_only(fname, t, pos, nm)
        if op is ADDCDIV and tensor1._data.dtype.kind in "biu" and \
                tensor2._data.dtype.kind in "biu":
            return addcdiv(self, tensor1, tensor2, value=value)  # raises torch's error
        dt = self.dtype
        return apply_inplace(op, self, tensor1.to(dt), tensor2.to(dt),
                             params=_cast_value(value, dt))
    return method


_METHODS = {
    "float_power": float_power, "atan2": atan2, "arctan2": atan2, "hypot": hypot,
    "copysign": copysign, "xlogy": xlogy, "fmod": fmod, "lerp": lerp, "addcmul": addcmul,
    "addcdiv": addcdiv, "logaddexp": logaddexp, "logaddexp2": logaddexp2, "ldexp": ldexp,
    "nextafter": nextafter, "heaviside": heaviside,
    "square_": lambda self: apply_inplace(POW_SCALAR, self, 2),
    "ldexp_": lambda self, other: apply_inplace(LDEXP, self, other),
    "nextafter_": lambda self, other: apply_inplace(NEXTAFTER, self, other),
    "heaviside_": lambda self, values: apply_inplace(HEAVISIDE, self, values),
    "multiply_": lambda self, other: apply_inplace(MUL, self, other),
    "subtract_": lambda self, other, *, alpha=1: apply_inplace(
        SUB, self, other, params=alpha_param("sub", self, other, alpha)),
    "atan2_": _atan2_, "arctan2_": _atan2_, "hypot_": _hypot_,
    "copysign_": _binary_inplace("copysign", lambda o: COPYSIGN if isinstance(o, Tensor)
                                 else COPYSIGN_SCALAR),
    "xlogy_": _binary_inplace("xlogy", lambda o: XLOGY if isinstance(o, Tensor)
                              else XLOGY_OTHER_SCALAR),
    "fmod_": _binary_inplace("fmod", lambda o: FMOD if isinstance(o, Tensor) else FMOD_SCALAR),
    "float_power_": _float_power_, "lerp_": _lerp_,
    "addcmul_": _addc_(ADDCMUL, "addcmul_"), "addcdiv_": _addc_(ADDCDIV, "addcdiv_"),
}
