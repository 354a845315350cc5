"""Comparisons and what selects by them: eq/ne/lt/le/gt/ge, isclose/allclose/equal, the
predicates (isnan, isinf, isfinite, isposinf, isneginf, isreal), the logical and bitwise ops
(with shifts, gcd and lcm), maximum/minimum/fmax/fmin, clamp (and clamp_min/clamp_max) and
where. Comparison results are bool and carry no gradient; the selecting ops route it.
"""

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .inplace import apply_inplace
from .arguments import _dtype_of, _int_kernel_error, _no_kernel, _out, _tensor_only
from .registry import binary, primitive, reads_values, unary
from .registry import _meta_for, _promote2, as_tensor_arg
from .registry import _broadcast_error
from .vmap_helpers import is_batched

__all__ = [
    "allclose", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "clamp", "clamp_max", "clamp_min", "clip", "eq",
    "equal", "fmax", "fmin", "gcd", "ge", "greater", "greater_equal", "gt", "isclose",
    "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "lcm", "le", "less",
    "less_equal", "logical_and", "logical_not", "logical_or", "logical_xor", "lt", "maximum",
    "minimum", "ne", "not_equal", "where",
]

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


# On a tie of -0.0 and 0.0, torch's maximum/minimum return the first operand below 16
# elements and mostly the second above (its scalar and vector loops differ); NumPy's always
# return the second, which is what ndgrad's give (docs/decisions.md).
MAXIMUM = binary("maximum", _real_only("maximum", np.maximum), save=((0, None), (1, None)))
MINIMUM = binary("minimum", _real_only("minimum", np.minimum), save=((0, None), (1, None)))


def _clamp_lo(x, lo):
    # torch's clamp to a Scalar bound keeps x on a tie at every size (clamp(-0.0, min=0) is
    # -0.0): NumPy's maximum returns its second operand on a tie, so x goes second (both
    # propagate NaN)
    return np.maximum(lo, x)


def _clamp_hi(x, hi):
    return np.minimum(hi, x)


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


def _minmax_tangents(wins):
    """Tangent parts: an input's tangent where it wins, half of it at a tie (torch's rule; with
    a NaN the second input's tangent passes)."""
    def first(ctx, ta):
        a, b = ctx.inputs
        return where(a == b, ta * 0.5, where(wins(a, b), ta, 0.0))

    def second(ctx, tb):
        a, b = ctx.inputs
        return where(a == b, tb * 0.5, where(wins(a, b), 0.0, tb))
    return first, second


MAXIMUM.def_jvp_parts(*_minmax_tangents(lambda a, b: a > b))
MINIMUM.def_jvp_parts(*_minmax_tangents(lambda a, b: a < b))


def maximum(input, other):
    return MAXIMUM.call(input, other)


def minimum(input, other):
    return MINIMUM.call(input, other)


def _clamp_fwd(x, bounds):
    lo, hi = bounds
    out = x
    # (bounds first: a tie keeps x, as torch's clamp; see _clamp_lo)
    if lo is not None:
        out = np.maximum(lo, out)
    if hi is not None:
        out = np.minimum(hi, out)
    return out if out is not x else x.copy()


CLAMP = unary("clamp", _clamp_fwd, "ClampBackward1", save=((0, None),), params=True,
              elementwise=True)


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


def clamp_bounds(min, max, fname="clamp"):
    """torch's overload choice for a tensor bound beside a number bound.

    clamp has a (Tensor min, Tensor max) and a (Number min, Number max) form; a 0-d tensor that
    does not require grad binds as a Number, so ``clamp(x, torch.tensor(0.), 1.5)`` is the
    number form; any other tensor beside a number matches neither and is a TypeError."""
    if isinstance(min, Tensor) == isinstance(max, Tensor) or min is None or max is None:
        return min, max
    bounds = []
    for b in (min, max):
        if isinstance(b, Tensor):
            if b._data.ndim or b.requires_grad:
                got = ", ".join(type(v).__name__ for v in ("", min, max))
                got = got.replace("str", "Tensor", 1)
                raise TypeError(
                    f"{fname}() received an invalid combination of arguments - got ({got}), "
                    f"but expected one of:\n"
                    f" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                    f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)")
            b = b._data.item()
        bounds.append(b)
    return tuple(bounds)


def clamp(input, min=None, max=None):
    """Clamp into [min, max]; bounds may be numbers or tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _refuse_complex_clamp(input)
    min, max = clamp_bounds(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    x = as_tensor_arg(input)
    if x._data.dtype.kind in "biu":  # number bounds promote like scalars: int + 0.5 -> float32
        dt = _dtype.result_type_of([x.dtype], [], [_dtype.scalar_dtype(b)
                                                   for b in (min, max) if b is not None])
        if dt is not x.dtype:
            x = x.to(dt)
    return CLAMP.call(x, (min, max))


def _refuse_complex_clamp(x):
    """torch orders no complex numbers: clamp and its one-sided forms refuse them."""
    if getattr(x, "_data", None) is not None and x._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")


def _clamp_t_fwd(x, lo, hi, _):
    # (tensor bounds: on a -0.0/0.0 tie torch's vector loop returns the bound, like NumPy's
    # maximum/minimum; see MAXIMUM)
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
    # Selected, not multiplied: a NaN or inf in g never reaches the branch not taken (torch's
    # where(cond, grad, 0); masked reductions rely on it).
    return (None,
            where(cond, g, 0.0) if n[1] else None,
            where(cond, 0.0, g) if n[2] else None)


WHERE.batch_transparent = True  # its VJP is elementwise in g: a leading batch dim broadcasts
WHERE.def_jvp_parts(None, lambda ctx, ta: where(ctx.inputs[0], ta, 0.0),
                    lambda ctx, tb: where(ctx.inputs[0], 0.0, tb))


def _check_where_shapes(c, a, b):
    """torch's broadcast error for where, naming the first pair (condition with input, then
    their broadcast with other) that does not broadcast; nothing is computed before it."""
    try:
        ca = np.broadcast_shapes(c.shape, a.shape)
    except ValueError:
        raise _broadcast_error(c, a) from None
    try:
        np.broadcast_shapes(ca, b.shape)
    except ValueError:
        raise _broadcast_error(np.empty(ca, dtype=bool), b) from None


def where(condition, input=None, other=None):
    """Elements of `input` where `condition`, else of `other` (numbers allowed)."""
    if input is None and other is None:
        # torch.where(condition) is nonzero(as_tuple=True) (indexing.py sits above this module)
        return as_tensor_arg(condition).nonzero(as_tuple=True)
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
    _check_where_shapes(cond._data, a._data, b._data)
    out = WHERE.call(cond, a, b)
    node = out._grad_fn
    if node is not None and node._meta is None:
        shape = out._data.shape
        if a._data.shape != shape or b._data.shape != shape:
            node._meta = (None, (a._data.shape, a._data.dtype), (b._data.shape, b._data.dtype))
    return out


def _fminmax(name, fn, cmp):
    op = binary(name, fn, save=((0, None), (1, None)), elementwise=True)

    @op.def_vjp
    def _(ctx, g):
        a, b = ctx.saved
        n = ctx._next
        # The first argument wins ties and whenever the second is NaN (torch's rule).
        first = cmp(a, b) | isnan(b)
        return (where(first, g, 0.0) if n[0] else None,
                where(first, 0.0, g) if n[1] else None)
    return op


def _complex_guard(name, fn):
    def kernel(a, b):
        if a.dtype.kind == "c":
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return fn(a, b)
    return kernel


def _first_on_tie(fn):
    """torch's fmax/fmin keep the first operand on a tie at every size (fmax(-0.0, 0.0) is
    -0.0); NumPy's tie rule for them depends on the array's length (its vector and scalar
    loops differ)."""
    def kernel(a, b):
        out = fn(a, b)
        return np.where(np.equal(a, b), a, out).astype(out.dtype, copy=False)
    return kernel


FMAX = _fminmax("fmax", _complex_guard("fmax", _first_on_tie(np.fmax)), lambda a, b: a >= b)
FMIN = _fminmax("fmin", _complex_guard("fmin", _first_on_tie(np.fmin)), lambda a, b: a <= b)


def fmax(input, other, *, out=None):
    """Elementwise maximum ignoring NaN (NaN only where both are NaN)."""
    _tensor_only("fmax", other)
    return _out(FMAX.call(input, other), out)


def fmin(input, other, *, out=None):
    """Elementwise minimum ignoring NaN."""
    _tensor_only("fmin", other)
    return _out(FMIN.call(input, other), out)


def _clamp_one(name, scalar_fn, tensor_fn, keep):
    """clamp_min/clamp_max: Scalar bound (...Backward0) and Tensor bound (...Backward1)."""
    scalar_op = binary(name + "_scalar", scalar_fn, _node_name_of(name, 0),
                       save=((0, None), (1, None)), elementwise=True)
    tensor_op = binary(name, tensor_fn, _node_name_of(name, 1), save=((0, None), (1, None)),
                       elementwise=True)

    def vjp(ctx, g):
        x, b = ctx.saved
        n = ctx._next
        kept = keep(x, b)  # where the input passes through (ties included)
        gx = where(kept, g, 0.0) if n[0] else None
        gb = where(kept, 0.0, g) if len(n) > 1 and n[1] else None
        return gx, gb
    scalar_op.def_vjp(vjp)
    tensor_op.def_vjp(vjp)
    return scalar_op, tensor_op


def _node_name_of(name, k):
    return "".join(p.capitalize() for p in name.split("_")) + f"Backward{k}"


CLAMP_MIN, CLAMP_MIN_T = _clamp_one("clamp_min", _clamp_lo, np.maximum, lambda x, b: x >= b)
CLAMP_MAX, CLAMP_MAX_T = _clamp_one("clamp_max", _clamp_hi, np.minimum, lambda x, b: x <= b)


def clamp_min(input, min, *, out=None):
    """``clamp(input, min=min)`` with torch's ClampMin nodes."""
    _refuse_complex_clamp(input)
    op = CLAMP_MIN_T if isinstance(min, Tensor) else CLAMP_MIN
    return _out(op.call(input, min), out)


def clamp_max(input, max, *, out=None):
    """``clamp(input, max=max)`` with torch's ClampMax nodes."""
    _refuse_complex_clamp(input)
    op = CLAMP_MAX_T if isinstance(max, Tensor) else CLAMP_MAX
    return _out(op.call(input, max), out)


def _int_only(name, fn):
    def kernel(a, b):
        for v in (a, b):
            if np.asarray(v).dtype.kind not in "iu":
                raise _int_kernel_error(name, np.asarray(v).dtype)
        return fn(a, b)
    return binary(name.replace("_cpu", ""), kernel)


GCD = _int_only("gcd_cpu", np.gcd)
LCM = _int_only("lcm_cpu", np.lcm)


def gcd(input, other, *, out=None):
    return _out(GCD.call(input, other), out)


def lcm(input, other, *, out=None):
    return _out(LCM.call(input, other), out)


def isposinf(input, *, out=None):
    return _out(Tensor(np.asarray(np.isposinf(input._data) if input._data.dtype.kind == "f"
                                    else np.zeros(input._data.shape, bool))), out)


def isneginf(input, *, out=None):
    return _out(Tensor(np.asarray(np.isneginf(input._data) if input._data.dtype.kind == "f"
                                    else np.zeros(input._data.shape, bool))), out)


def isreal(input):
    d = input._data
    return Tensor(np.asarray(d.imag == 0) if d.dtype.kind == "c" else np.ones(d.shape, bool))


def bitwise_left_shift(input, other, *, out=None):
    return _out(LSHIFT.call(input, other), out)


def bitwise_right_shift(input, other, *, out=None):
    return _out(RSHIFT.call(input, other), out)


def _cmp_inplace(name, fn):
    """eq_/lt_/...: the comparison written into self's dtype; torch records EqBackward0 etc.
    with zero gradients."""
    def make(k):
        op = binary(f"{name}_inplace{k}", lambda a, b: fn(a, b), _node_name_of(name, k))
        op.def_vjp(lambda ctx, g: ((g * 0) if ctx._next[0] else None,
                                   (g * 0) if ctx._next[1] else None))
        return op
    # torch's nodes: a Scalar other records <Op>Backward0, a Tensor other <Op>Backward1
    scalar_op, tensor_op = make(0), make(1)
    return lambda self, other: apply_inplace(
        tensor_op if isinstance(other, Tensor) else scalar_op, self, other)


# ----------------------------------------------------------------------------- closeness
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities count)."""
    _tensor_only("isclose", other)
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"{_dtype.from_np(a.dtype)._legacy[:-6]} did not match "
                           f"{_dtype.from_np(b.dtype)._legacy[:-6]}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    if is_batched(input, other):  # under vmap: in ops (the raw data is a placeholder)
        return _isclose_ops(input, other, rtol, atol, equal_nan)
    if a.dtype.kind == "b":
        return Tensor(np.asarray(a == b))
    with np.errstate(all="ignore"):
        if a.dtype.kind in "iu":
            x, y = a.astype(np.float64), b.astype(np.float64)
        elif a.dtype == np.float16:
            x, y = a.astype(np.float32), b.astype(np.float32)
        else:
            x, y = a, b
        close = x == y
        if equal_nan:
            close = close | (np.isnan(x) & np.isnan(y))
        finite = np.isfinite(x) & np.isfinite(y)
        close = close | (finite & (np.abs(x - y) <= atol + rtol * np.abs(y)))
    return Tensor(np.asarray(close))


def _isclose_ops(x, y, rtol, atol, equal_nan):
    if x.dtype.is_floating_point is False and x.dtype.is_complex is False:
        if x.dtype == _dtype.bool:
            return x == y
        x, y = x.double(), y.double()
    elif x.dtype == _dtype.float16:
        x, y = x.float(), y.float()
    close = x == y
    if equal_nan:
        close = close | (isnan(x) & isnan(y))
    finite = isfinite(x) & isfinite(y)
    return close | (finite & ((x - y).abs() <= atol + rtol * y.abs()))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element ``isclose`` (a Python bool)."""
    if is_batched(input, other):
        raise RuntimeError("vmap over torch.allclose isn't supported yet. Please file an issue "
                           "at https://github.com/pytorch/pytorch/issues if you need this "
                           "feature.")
    reads_values("allclose()")
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """True when both tensors have the same shape and elements (dtypes are promoted)."""
    _tensor_only("equal", other)
    if is_batched(input, other):
        raise RuntimeError("Batching rule not implemented for aten::equal. We could not "
                           "generate a fallback.")
    a, b = input._data, other._data
    if a.shape != b.shape:
        return False
    reads_values("equal()")
    return bool(np.array_equal(a, b))


# Docstrings with a runnable example (checked by tests/test_pointwise.py via doctest).
_DOCS = {
    'fmax': (
        'Elementwise maximum ignoring NaN (NaN only where both are NaN).',
        "ndgrad.fmax(ndgrad.tensor([1.0, float('nan')]), ndgrad.tensor([2.0, 0.5]))",
        'tensor([2.0000, 0.5000])'),
    'fmin': (
        'Elementwise minimum ignoring NaN.',
        "ndgrad.fmin(ndgrad.tensor([1.0, float('nan')]), ndgrad.tensor([2.0, 0.5]))",
        'tensor([1.0000, 0.5000])'),
    'isclose': (
        '``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities count).',
        'ndgrad.isclose(ndgrad.tensor([1.0, 1.1]), ndgrad.tensor([1.0 + 1e-9, 1.0]))',
        'tensor([ True, False])'),
    'allclose': (
        'True when every element ``isclose`` (a Python bool).',
        'ndgrad.allclose(ndgrad.tensor([1.0]), ndgrad.tensor([1.0 + 1e-9]))',
        'True'),
    'equal': (
        'True when both tensors have the same shape and elements.',
        'ndgrad.equal(ndgrad.tensor([1, 2]), ndgrad.tensor([1, 2]))',
        'True'),
    'clamp_min': (
        "``clamp(input, min=min)`` (torch's ClampMin nodes).",
        'ndgrad.clamp_min(ndgrad.tensor([-1.0, 2.0]), 0.0)',
        'tensor([0., 2.])'),
    'clamp_max': (
        "``clamp(input, max=max)`` (torch's ClampMax nodes).",
        'ndgrad.clamp_max(ndgrad.tensor([-1.0, 2.0]), 0.0)',
        'tensor([-1.,  0.])'),
    'gcd': (
        'Greatest common divisor of integer tensors.',
        'ndgrad.gcd(ndgrad.tensor([4, 6]), ndgrad.tensor([6, 9]))',
        'tensor([2, 3])'),
    'lcm': (
        'Least common multiple of integer tensors.',
        'ndgrad.lcm(ndgrad.tensor([4, 6]), ndgrad.tensor([6, 9]))',
        'tensor([12, 18])'),
    'isposinf': (
        'True where the element is +inf.',
        "ndgrad.isposinf(ndgrad.tensor([float('inf'), -float('inf'), 1.0]))",
        'tensor([ True, False, False])'),
    'isneginf': (
        'True where the element is -inf.',
        "ndgrad.isneginf(ndgrad.tensor([float('inf'), -float('inf'), 1.0]))",
        'tensor([False,  True, False])'),
    'isreal': (
        'True where the imaginary part is 0 (always, for real tensors).',
        'ndgrad.isreal(ndgrad.tensor([1 + 0j, 1j]))',
        'tensor([ True, False])'),
    'bitwise_left_shift': (
        '``input << other`` for integer tensors.',
        'ndgrad.bitwise_left_shift(ndgrad.tensor([1, 2]), 2)',
        'tensor([4, 8])'),
    'bitwise_right_shift': (
        '``input >> other`` for integer tensors.',
        'ndgrad.bitwise_right_shift(ndgrad.tensor([8, 5]), 1)',
        'tensor([4, 2])'),
}


def _apply_docs():
    for name, (summary, example, result) in _DOCS.items():
        globals()[name].__doc__ = (f"{summary}\n\n    >>> import ndgrad\n    >>> {example}\n    "
                                   + result.replace("\n", "\n    ") + "\n")


_apply_docs()


# ----------------------------------------------------------------------------- methods
# Tensor methods of this module's functions; methods.py binds them.
_METHODS = {
    "fmax": fmax, "fmin": fmin, "isclose": isclose, "allclose": allclose, "equal": equal,
    "clamp_min": clamp_min, "clamp_max": clamp_max, "gcd": gcd, "lcm": lcm,
    "isposinf": isposinf, "isneginf": isneginf, "isreal": isreal,
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    "clamp_min_": lambda self, min: apply_inplace(
        CLAMP_MIN_T if isinstance(min, Tensor) else CLAMP_MIN, self, min),
    "clamp_max_": lambda self, max: apply_inplace(
        CLAMP_MAX_T if isinstance(max, Tensor) else CLAMP_MAX, self, max),
    "gcd_": lambda self, other: apply_inplace(GCD, self, other),
    "lcm_": lambda self, other: apply_inplace(LCM, self, other),
    "eq_": _cmp_inplace("eq", np.equal), "ne_": _cmp_inplace("ne", np.not_equal),
    "lt_": _cmp_inplace("lt", np.less), "le_": _cmp_inplace("le", np.less_equal),
    "gt_": _cmp_inplace("gt", np.greater), "ge_": _cmp_inplace("ge", np.greater_equal),
}
