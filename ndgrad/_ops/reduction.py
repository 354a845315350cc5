"""Reductions of the foundation: sum, mean, amax/amin, max/min (all and per dim, with
indices), argmax/argmin, prod, var/std, logsumexp, all/any, norm.

Dim arguments follow torch: an int, a tuple/list of ints, or None for all dims; negative dims
wrap; out-of-range dims raise IndexError with torch's message.
"""

import builtins
from collections import namedtuple

import numpy as np

from .. import _dtype
from .registry import primitive, as_tensor_arg
from .elementwise import where, _conj, sqrt

__all__ = ["sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "prod", "var",
           "std", "var_mean", "std_mean", "logsumexp", "all", "any", "norm", "dims_of",
           "wrap_dim"]


def wrap_dim(dim, ndim):
    """A non-negative dim index, or IndexError in torch's words."""
    n = ndim if ndim else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def dims_of(dim, ndim):
    """Normalise a dim argument to a sorted tuple of dims (None -> all dims)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        out = tuple(sorted(wrap_dim(d, ndim) for d in dim))
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return out
    return (wrap_dim(dim, ndim),) if ndim else ()


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim and dims:
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(shape)


# --------------------------------------------------------------------------- sum / mean
def _sum_fwd(x, p):
    dims, keepdim, dt = p
    if dt is None and x.dtype.kind in "biu":
        dt = np.int64
    return np.sum(x, axis=dims, keepdims=keepdim, dtype=dt)


SUM_ALL = primitive("sum", _sum_fwd, "SumBackward0", linear=True)
SUM_DIM = primitive("sum_dim", _sum_fwd, "SumBackward1", linear=True)


def _sum_vjp(ctx, g):
    dims, keepdim, _ = ctx._params
    shape, dtype = ctx._sum_shape
    out = _expand_back(g, shape, dims, keepdim)
    return (out,)


def _sum_record_shape(out, x):
    node = out._grad_fn
    if node is not None:
        node._extras()["shape"] = x._data.shape


class _SumCtx:
    pass


def _sum_vjp_generic(ctx, g):
    dims, keepdim, _ = ctx._params
    shape = ctx._extra["shape"]
    return (_expand_back(g, shape, dims, keepdim),)


SUM_ALL.def_vjp(_sum_vjp_generic)
SUM_DIM.def_vjp(_sum_vjp_generic)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over all elements, or over `dim` (an int or tuple)."""
    x = as_tensor_arg(input)
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    if dim is None:
        out = SUM_ALL.call(x, params=(None, False, npdt))
    else:
        out = SUM_DIM.call(x, params=(dims_of(dim, x._data.ndim), keepdim, npdt))
    _sum_record_shape(out, x)
    return out


def _mean_fwd(x, p):
    dims, keepdim, dt = p
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=dt)


MEAN_ALL = primitive("mean", _mean_fwd, "MeanBackward0", linear=True)
MEAN_DIM = primitive("mean_dim", _mean_fwd, "MeanBackward1", linear=True)


def _mean_vjp(ctx, g):
    dims, keepdim, _ = ctx._params
    shape = ctx._extra["shape"]
    n = 1
    for d in (dims if dims is not None else range(len(shape))):
        n *= shape[d]
    return (_expand_back(g, shape, dims, keepdim) / n,)


MEAN_ALL.def_vjp(_mean_vjp)
MEAN_DIM.def_vjp(_mean_vjp)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean; integer inputs need a floating `dtype`, as in torch."""
    x = as_tensor_arg(input)
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    kind = (npdt or x._data.dtype).kind
    if kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_dtype.from_np(x._data.dtype)._legacy[:-6]}")
    if dim is None:
        out = MEAN_ALL.call(x, params=(None, False, npdt))
    else:
        out = MEAN_DIM.call(x, params=(dims_of(dim, x._data.ndim), keepdim, npdt))
    _sum_record_shape(out, x)
    return out


# --------------------------------------------------------------------------- max / min
def _check_nonempty(x, name, dims):
    if x._data.size == 0:
        shape = x._data.shape
        if dims is None or builtins.any(shape[d] == 0 for d in dims):
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                             "== 0. Specify the reduction dim with the 'dim' argument."
                             if dims is None else
                             f"{name}(): Expected reduction dim {dims[0]} to have non-zero size.")


def _amax_fwd(x, p):
    return np.max(x, axis=p[0], keepdims=p[1])


def _amin_fwd(x, p):
    return np.min(x, axis=p[0], keepdims=p[1])


AMAX = primitive("amax", _amax_fwd, save=((0, None), ("out", None)))
AMIN = primitive("amin", _amin_fwd, save=((0, None), ("out", None)))
MAX_ALL = primitive("max", _amax_fwd, "MaxBackward1", save=((0, None), ("out", None)))
MIN_ALL = primitive("min", _amin_fwd, "MinBackward1", save=((0, None), ("out", None)))


def _even_vjp(ctx, g):
    """Gradient of an extremum split evenly among the elements that attain it."""
    x, out = ctx.saved
    dims, keepdim = ctx._params
    shape = x._data.shape
    o = _expand_back(out, shape, dims, keepdim)
    mask = (x == o)
    count = mask.sum(dims, keepdim=True) if dims else mask.sum()
    gg = _expand_back(g, shape, dims, keepdim)
    return (where(mask, gg / count.to(g.dtype) if dims else gg / count.item(), 0.0),)


for _op in (AMAX, AMIN, MAX_ALL, MIN_ALL):
    _op.def_vjp(_even_vjp)


def amax(input, dim=(), keepdim=False):
    x = as_tensor_arg(input)
    dims = dims_of(dim, x._data.ndim)
    _check_nonempty(x, "amax", dims)
    return AMAX.call(x, params=(dims, keepdim))


def amin(input, dim=(), keepdim=False):
    x = as_tensor_arg(input)
    dims = dims_of(dim, x._data.ndim)
    _check_nonempty(x, "amin", dims)
    return AMIN.call(x, params=(dims, keepdim))


return_types_max = namedtuple("max", ["values", "indices"])
return_types_min = namedtuple("min", ["values", "indices"])


def _max_dim_fwd(x, p):
    dim, keepdim, is_max = p
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    if is_max:
        # torch propagates NaN: the first NaN wins.
        idx = np.argmax(np.where(np.isnan(x), np.inf, x) if x.dtype.kind in "fc" else x,
                        axis=dim)
        if x.dtype.kind in "fc":
            nan_any = np.isnan(x).any(axis=dim)
            if nan_any.any():
                idx = np.where(nan_any, np.argmax(np.isnan(x), axis=dim), idx)
    else:
        idx = np.argmin(np.where(np.isnan(x), -np.inf, x) if x.dtype.kind in "fc" else x,
                        axis=dim)
        if x.dtype.kind in "fc":
            nan_any = np.isnan(x).any(axis=dim)
            if nan_any.any():
                idx = np.where(nan_any, np.argmax(np.isnan(x), axis=dim), idx)
    idx = np.asarray(idx, np.int64)
    vals = np.take_along_axis(x, np.expand_dims(idx, dim), axis=dim)
    if keepdim:
        return vals, np.expand_dims(idx, dim)
    return np.squeeze(vals, axis=dim), idx


MAX_DIM = primitive("max_dim", _max_dim_fwd, "MaxBackward0", save=(("out1", None),), n_out=2,
                    diff_outs=(True, False))
MIN_DIM = primitive("min_dim", _max_dim_fwd, "MinBackward0", save=(("out1", None),), n_out=2,
                    diff_outs=(True, False))


def _select_vjp(ctx, gs):
    g = gs[0]
    (idx,) = ctx.saved
    dim, keepdim, _ = ctx._params
    shape = ctx._extra["shape"]
    return (_index_grad(g, idx, dim, keepdim, shape),)


def _index_grad(g, idx, dim, keepdim, shape):
    """Scatter `g` into zeros of `shape` at `idx` along `dim` (value-selecting reductions)."""
    from .. import zeros
    if len(shape) == 0:
        return g
    if not keepdim:
        g = g.unsqueeze(dim)
        idx = idx.unsqueeze(dim)
    return zeros(shape, dtype=g.dtype).scatter(dim, idx, g)


MAX_DIM.def_vjp(_select_vjp)
MIN_DIM.def_vjp(_select_vjp)


def _minmax(input, dim, keepdim, other, is_max):
    from .elementwise import maximum, minimum
    from .._tensor import Tensor
    x = as_tensor_arg(input)
    name = "max" if is_max else "min"
    if isinstance(dim, Tensor):
        return maximum(x, dim) if is_max else minimum(x, dim)
    if dim is None:
        _check_nonempty(x, name, None)
        return (MAX_ALL if is_max else MIN_ALL).call(x, params=(None, False))
    d = wrap_dim(dim, x._data.ndim)
    _check_nonempty(x, name, (d,))
    vals, idx = (MAX_DIM if is_max else MIN_DIM).call(x, params=(d, keepdim, is_max))
    if vals._grad_fn is not None:
        vals._grad_fn._extras()["shape"] = x._data.shape
    return (return_types_max if is_max else return_types_min)(vals, idx)


def max(input, dim=None, keepdim=False, *, out=None):
    """The largest element, or (values, indices) along `dim`, or elementwise max of two."""
    return _minmax(input, dim, keepdim, None, True)


def min(input, dim=None, keepdim=False, *, out=None):
    return _minmax(input, dim, keepdim, None, False)


def argmax(input, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    if dim is None:
        return max(x.reshape(-1), 0)[1].reshape(()) if not keepdim else \
            max(x.reshape(-1), 0)[1].reshape((1,) * x._data.ndim)
    return max(x, dim, keepdim)[1]


def argmin(input, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    if dim is None:
        return min(x.reshape(-1), 0)[1].reshape(()) if not keepdim else \
            min(x.reshape(-1), 0)[1].reshape((1,) * x._data.ndim)
    return min(x, dim, keepdim)[1]


# --------------------------------------------------------------------------- prod
def _prod_fwd(x, p):
    dims, keepdim, dt = p
    if dt is None and x.dtype.kind in "biu":
        dt = np.int64
    return np.prod(x, axis=dims, keepdims=keepdim, dtype=dt)


PROD_ALL = primitive("prod", _prod_fwd, "ProdBackward0", save=((0, None), ("out", None)))
PROD_DIM = primitive("prod_dim", _prod_fwd, "ProdBackward1", save=((0, None), ("out", None)))


def _prod_vjp(ctx, g):
    x, out = ctx.saved
    dims, keepdim, _ = ctx._params
    shape = x._data.shape
    dims_t = dims if dims is not None else tuple(range(len(shape)))
    gg = _expand_back(g, shape, dims_t, keepdim)
    o = _expand_back(out, shape, dims_t, keepdim)
    zero = x == 0
    if not zero._data.any():
        return (gg * _conj(o / x),)
    # With zeros: the product of the others, computed without dividing.
    from .shape import movedim
    if dims is None:
        flat = x.reshape(-1)
        d = 0
    else:
        if len(dims_t) != 1:
            raise RuntimeError("prod backward with zeros supports one reduced dim")
        flat, d = x, dims_t[0]
    moved = movedim(flat, d, -1)
    n = moved._data.shape[-1]
    from .. import ones_like, cat
    ones = ones_like(moved.narrow(-1, 0, 1))
    left = cat([ones, moved.narrow(-1, 0, n - 1).cumprod(-1)], -1) if n > 1 else ones
    rev = moved.flip(-1)
    right = cat([ones, rev.narrow(-1, 0, n - 1).cumprod(-1)], -1).flip(-1) if n > 1 else ones
    others = movedim(left * right, -1, d).reshape(shape)
    return (gg * _conj(others),)


PROD_ALL.def_vjp(_prod_vjp)
PROD_DIM.def_vjp(_prod_vjp)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    x = as_tensor_arg(input)
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    if dim is None:
        return PROD_ALL.call(x, params=(None, False, npdt))
    return PROD_DIM.call(x, params=((wrap_dim(dim, x._data.ndim),), keepdim, npdt))


# --------------------------------------------------------------------------- composites
def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance with Bessel's `correction` (default 1), as a composite of primitives."""
    x = as_tensor_arg(input)
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    dims = dims_of(dim, x._data.ndim)
    n = 1
    for d in dims:
        n *= x._data.shape[d]
    mu = x.mean(dims, keepdim=True) if dims else x
    diff = x - mu
    sq = (diff * _conj(diff)).real if x._data.dtype.kind == "c" else diff * diff
    return sq.sum(dims, keepdim=keepdim) / builtins.max(n - c, 0)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return sqrt(var(input, dim, unbiased, keepdim, correction=correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    x = as_tensor_arg(input)
    return (var(x, dim, unbiased, keepdim, correction=correction),
            mean(x, dim if dim is not None else None, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    x = as_tensor_arg(input)
    return (std(x, dim, unbiased, keepdim, correction=correction),
            mean(x, dim if dim is not None else None, keepdim))


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) computed stably; -inf rows give -inf, +inf gives +inf."""
    from .elementwise import log, exp
    x = as_tensor_arg(input)
    if x._data.dtype.kind not in "fc":
        x = x.to(_dtype.get_default_dtype())
    dims = dims_of(dim, x._data.ndim)
    if x._data.size == 0:
        return log(exp(x).sum(dims, keepdim))
    m = x.detach().amax(dims, keepdim=True)
    m = where(m.isinf(), 0.0, m)
    out = log(exp(x - m).sum(dims, keepdim=True)) + m
    if not keepdim:
        out = out.squeeze(dims) if dims else out
    return out


def all(input, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    from .registry import wrap
    if dim is None:
        return wrap(np.all(x._data))
    return wrap(np.all(x._data, axis=dims_of(dim, x._data.ndim), keepdims=keepdim))


def any(input, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    from .registry import wrap
    if dim is None:
        return wrap(np.any(x._data))
    return wrap(np.any(x._data, axis=dims_of(dim, x._data.ndim), keepdims=keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over `dim` (all elements by default); "fro" is the 2-norm."""
    from .elementwise import abs as _abs
    x = as_tensor_arg(input)
    if p == "fro" or p is None:
        p = 2
    dims = dims_of(dim, x._data.ndim)
    a = _abs(x) if (x._data.dtype.kind == "c" or p != 2) else x
    if p == float("inf"):
        return a.amax(dims, keepdim)
    if p == float("-inf"):
        return a.amin(dims, keepdim)
    if p == 0:
        return (a != 0).to(a.dtype).sum(dims, keepdim)
    if p == 2:
        sq = a * a if a._data.dtype.kind != "c" else (a * _conj(a)).real
        s = sq.sum(dims, keepdim)
        return _norm2(s)
    return (a ** p).sum(dims, keepdim) ** (1.0 / p)


def _norm2(s):
    """sqrt with a zero (not NaN) subgradient at 0, as torch's norm backward."""
    from .registry import unary
    return _SAFE_SQRT.call(s)


def _safe_sqrt_fwd(x):
    return np.sqrt(x)


from .registry import unary as _unary  # noqa: E402

_SAFE_SQRT = _unary("norm_sqrt", _safe_sqrt_fwd, "NormBackward1", save=(("out", None),))


@_SAFE_SQRT.def_vjp
def _(ctx, g):
    (out,) = ctx.saved
    return (where(out == 0, 0.0, g / (2 * out)),)
