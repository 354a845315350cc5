"""Reductions and scans: sum, mean, prod, amax/amin, max/min (all, or per dim with indices),
argmax/argmin, var/std/var_mean/std_mean, logsumexp, all/any/count_nonzero, nansum/nanmean,
cumsum/cumprod/cummax/cummin/logcumsumexp. The vector norms (torch.norm included) are in
``norms.py``.

Dim arguments follow torch: an int, a tuple/list of ints, or None for all dims; negative dims
wrap; out-of-range dims raise IndexError with torch's message; NumPy's ``axis``/``keepdims``
spellings and ``out=`` are accepted (``wrap_dim`` and these conventions live in
``arguments.py``, below every family). var, std and logsumexp are primitives (not
composites) so that grad_fn names and the special points (zero std, -inf rows) follow
torch's own backward formulas. Sorting and selection live in ``sorting.py``.
"""

import builtins

import warnings as _warnings

import numpy as np

from .. import _dtype
from .._creation import arange, ones_like, zeros
from .._tensor import _from_array, Tensor
from .arguments import _numpy_aliases, return_type, wrap_dim
from .comparison import isnan, logical_not, maximum, minimum, where
from .indexing import SCATTER, SCATTER_ADD
from .inplace import apply_inplace
from .joins import cat
from .pointwise import _conj, abs as _abs, exp, log
from .registry import (as_tensor_arg, primitive, raw_view, reads_values, record_input_shape,
                       unrecorded_float, wrap)
from .shape import EXPAND, UNSQUEEZE, movedim
from .vmap_helpers import is_batched, shift

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "dims_of",
    "logcumsumexp",
    "logsumexp",
    "max",
    "mean",
    "min",
    "nanmean",
    "nansum",
    "prod",
    "std",
    "std_mean",
    "sum",
    "var",
    "var_mean",
    "wrap_dim",
]


def dims_of(dim, ndim):
    """Normalise a dim argument to a sorted tuple of dims (None or () -> all dims). A 0-d
    tensor accepts dims 0 and -1 and has no dims to reduce."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        out = []
        for d in dim:
            d = wrap_dim(d, ndim)
            if d in out:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            out.append(d)
        return tuple(sorted(out)) if ndim else ()
    d = wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims (an ExpandBackward0 view)."""
    if not keepdim and dims:
        for d in dims:
            g = g.unsqueeze(d)
    shape = tuple(shape)
    if g._data.shape == shape:
        return g
    return EXPAND.call(g, params=shape)  # the checked public expand() is not needed here


def _raw_expand_back(g, shape, dims, keepdim):
    """``_expand_back`` on raw arrays when nothing needs recording (see
    registry.unrecorded_float), else None. The result is what the unsqueeze and expand ops
    would give: the same array, as a view of `g` with the same replay chain."""
    gd = unrecorded_float(g)
    if gd is None:
        return None
    shape = tuple(shape)
    chain = ()
    arr = gd
    if not keepdim and dims:
        kept = list(gd.shape)
        for d in dims:
            kept.insert(d, 1)
            chain += ((UNSQUEEZE, d, 0),)
        # a view in both branches: reshape of a contiguous array never copies
        arr = gd.reshape(kept) if gd.flags.c_contiguous else np.expand_dims(gd, dims)
    if arr.shape != shape:
        arr = EXPAND.fwd(arr, shape)
        chain += ((EXPAND, shape, 0),)
    if not chain:
        return g
    return raw_view(g, arr, chain)


# --------------------------------------------------------------------------- sum / mean
_add_reduce = np.add.reduce


def _sum_fwd(x, p):
    dims, keepdim, dt = p
    if dt is None and (x.dtype == np.float32 or x.dtype == np.float64):
        # np.sum's own reduction, without its Python-level wrapper (identical values)
        return _add_reduce(x, axis=dims, keepdims=keepdim)
    if dt is None and x.dtype.kind in "biu":
        dt = np.int64
    if x.dtype == np.float16 and dt in (None, np.float16):
        # torch accumulates half precision in float32
        return np.sum(x, axis=dims, keepdims=keepdim, dtype=np.float32).astype(np.float16)
    return np.sum(x, axis=dims, keepdims=keepdim, dtype=dt)


SUM_ALL = primitive("sum", _sum_fwd, "SumBackward0", linear=True)
SUM_DIM = primitive("sum_dim", _sum_fwd, "SumBackward1", linear=True)


def _sum_vjp_generic(ctx, g):
    dims, keepdim, _ = ctx._params
    shape = ctx._shape
    raw = _raw_expand_back(g, shape, dims, keepdim)
    if raw is not None:
        return (raw,)
    return (_expand_back(g, shape, dims, keepdim),)


record_input_shape(SUM_ALL, SUM_DIM)
SUM_ALL.def_vjp(_sum_vjp_generic)
SUM_DIM.def_vjp(_sum_vjp_generic)


def _reduce_dims_vmap(op_dim):
    """The batching rule of a reduction whose params start with ``(dims, keepdim, ...)``:
    the same reduction over the shifted dims (None, all of a sample's dims)."""
    def rule(batched, p, x):
        dims = tuple(range(1, x.dim())) if p[0] is None else shift(p[0])
        return op_dim.call(x, params=(dims,) + tuple(p[1:]))
    return rule


SUM_ALL.def_vmap(_reduce_dims_vmap(SUM_DIM))
SUM_DIM.def_vmap(_reduce_dims_vmap(SUM_DIM))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over all elements, or over `dim` (an int or tuple)."""
    x = as_tensor_arg(input)
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    if dim is None:
        out = SUM_ALL.call(x, params=(None, False, npdt))
    else:
        out = SUM_DIM.call(x, params=(dims_of(dim, x._data.ndim), keepdim, npdt))
    return out


def _mean_fwd(x, p):
    dims, keepdim, dt = p
    if dt is None and (x.dtype == np.float32 or x.dtype == np.float64) and x.size:
        # np.mean's own sum then division, without its Python-level wrapper
        n = x.size if dims is None else int(np.prod([x.shape[d] for d in dims]))
        return np.true_divide(np.add.reduce(x, axis=dims, keepdims=keepdim), n,
                              dtype=x.dtype)
    if x.size == 0:
        # the mean over nothing is NaN, silently as torch's (np.mean warns from NumPy's
        # own frames, which ndgrad's warning filter does not cover)
        with np.errstate(all="ignore"), _warnings.catch_warnings():
            _warnings.simplefilter("ignore", RuntimeWarning)
            return np.mean(x, axis=dims, keepdims=keepdim, dtype=dt)
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=dt)


MEAN_ALL = primitive("mean", _mean_fwd, "MeanBackward0", linear=True)
MEAN_DIM = primitive("mean_dim", _mean_fwd, "MeanBackward1", linear=True)


def _mean_vjp(ctx, g):
    dims, keepdim, _ = ctx._params
    shape = ctx._shape
    n = 1
    for d in (dims if dims is not None else range(len(shape))):
        n *= shape[d]
    raw = _raw_expand_back(g, shape, dims, keepdim)
    if raw is not None:
        # the division op below on the expanded array: a fresh result of g's dtype
        out = raw._data / n
        if out.dtype is not raw._data.dtype:
            out = out.astype(raw._data.dtype)
        return (_from_array(out),)
    return (_expand_back(g, shape, dims, keepdim) / n,)


record_input_shape(MEAN_ALL, MEAN_DIM)
MEAN_ALL.def_vjp(_mean_vjp)
MEAN_DIM.def_vjp(_mean_vjp)
MEAN_ALL.def_vmap(_reduce_dims_vmap(MEAN_DIM))
MEAN_DIM.def_vmap(_reduce_dims_vmap(MEAN_DIM))


def _batched_dims(dims, nd, lead):
    """`dims` of a rank-`nd` input (None: all) as a tuple, shifted by `lead` batch dims."""
    if dims is None:
        return tuple(range(lead, lead + nd))
    return tuple(lead + (d % nd if nd else 0) for d in ((dims,) if isinstance(dims, int)
                                                          else dims))


def _reduce_back_batched(mean):
    """Batched VJP of sum/mean: g (B, *out) expanded back to (B, *input) (divided by n)."""
    def vjp(ctx, g):
        dims, keepdim, _ = ctx._params
        shape = tuple(ctx._shape)
        nd = len(shape)
        dims_t = _batched_dims(dims, nd, 0)
        if not keepdim and nd:
            for d in sorted(dims_t):
                g = g.unsqueeze(1 + d)
        g = g.expand((g._data.shape[0],) + shape)
        if mean:
            n = 1
            for d in dims_t:
                n *= shape[d] if nd else 1
            g = g / n
        return (g,)
    return vjp


def _reduce_batched_jvp(mean):
    """Batched JVP of sum/mean: the same reduction over the dims after the batch one."""
    def jvp(ctx, t):
        dims, keepdim, _ = ctx.params
        dims = _batched_dims(dims, ctx.inputs[0]._data.ndim, 1)
        if not dims:
            return t.clone()
        r = t.mean(dims, keepdim=keepdim) if mean else t.sum(dims, keepdim=keepdim)
        return r.reshape((t._data.shape[0],) + ctx.outputs[0]._data.shape)
    return jvp


for _op, _mean in ((SUM_ALL, False), (SUM_DIM, False), (MEAN_ALL, True), (MEAN_DIM, True)):
    _op.def_batched_vjp(_reduce_back_batched(_mean))
    _op.def_batched_jvp(_reduce_batched_jvp(_mean))


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
    return out


# --------------------------------------------------------------------------- max / min
def _check_nonempty(x, name, dims, hint=True, orig=None):
    if x._data.size == 0:
        shape = x._data.shape
        if dims is None:
            msg = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            if not hint:
                raise IndexError(msg)
            raise RuntimeError(msg + " Specify the reduction dim with the 'dim' argument.")
        for d in dims:
            if shape[d] == 0:
                if orig is not None:  # torch names the dim as the caller wrote it
                    d = next(o for o in (orig if isinstance(orig, (tuple, list)) else (orig,))
                             if shape[wrap_dim(o, len(shape))] == 0)
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _amax_fwd(x, p):
    return np.max(x, axis=p[0], keepdims=p[1])


def _amin_fwd(x, p):
    return np.min(x, axis=p[0], keepdims=p[1])


AMAX = primitive("amax", _amax_fwd, save=((0, None), ("out", None)))
AMIN = primitive("amin", _amin_fwd, save=((0, None), ("out", None)))
MAX_ALL = primitive("max", _amax_fwd, "MaxBackward1", save=((0, None), ("out", None)))
MIN_ALL = primitive("min", _amin_fwd, "MinBackward1", save=((0, None), ("out", None)))


def _even_vjp(ctx, g):
    """amax/amin: the gradient split evenly among the elements equal to the result, written as
    torch's ``(g / count) * mask`` (so a NaN result, equal to nothing, gives NaN gradients)."""
    x, out = ctx.saved
    dims, keepdim = ctx._params
    shape = ctx._shape  # (x's shape, recorded: ndgrad.compile may make it symbolic)
    o = _expand_back(out, shape, dims, keepdim)
    mask = (x == o)
    count = mask.sum(dims, keepdim=True) if dims else mask.sum()
    gg = _expand_back(g, shape, dims, keepdim)
    return ((gg / count.to(g.dtype)) * mask,)


def _even_all_vjp(ctx, g):
    """max()/min() over everything: torch's evenly_distribute_backward (a NaN result shares
    its gradient among the NaNs)."""
    x, out = ctx.saved
    xd = x.detach()
    od = out.detach()
    # The mask and the count are ops on the values, never values read into Python: a
    # compiled backward replays them for any values (the quotient is g / float(count), as
    # with a Python int count).
    if od._data.dtype.kind in "fc":
        mask = where(isnan(od), isnan(xd), xd == od)
    else:
        mask = xd == od
    return (where(mask, g / mask.sum(), 0.0).to(g.dtype),)


record_input_shape(AMAX, AMIN)
for _op in (AMAX, AMIN):
    _op.def_vjp(_even_vjp)
for _op in (MAX_ALL, MIN_ALL):
    _op.def_vjp(_even_all_vjp)
AMAX.def_vmap(_reduce_dims_vmap(AMAX))
AMIN.def_vmap(_reduce_dims_vmap(AMIN))
MAX_ALL.def_vmap(_reduce_dims_vmap(AMAX))
MIN_ALL.def_vmap(_reduce_dims_vmap(AMIN))


def _complex_name(x):
    """torch's ScalarType name of a complex tensor, or None for a real one."""
    kind = x._data.dtype
    if kind.kind != "c":
        return None
    return "ComplexFloat" if kind == np.complex64 else "ComplexDouble"


def _refuse_complex_kernel(x, kernel):
    name = _complex_name(x)
    if name is not None:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def amax(input, dim=(), keepdim=False):
    x = as_tensor_arg(input)
    _refuse_complex_kernel(x, "max_values_cpu")
    if x._data.size == 0 and isinstance(dim, (tuple, list)) and dim:
        # torch reports an empty reduced dim before a repeated one
        _check_nonempty(x, "amax", tuple(wrap_dim(d, x._data.ndim) for d in dim), orig=dim)
    dims = dims_of(dim, x._data.ndim)
    _check_nonempty(x, "amax", dims if dim not in ((), [], None) else None, orig=dim)
    return AMAX.call(x, params=(dims, keepdim))


def amin(input, dim=(), keepdim=False):
    x = as_tensor_arg(input)
    _refuse_complex_kernel(x, "min_values_cpu")
    if x._data.size == 0 and isinstance(dim, (tuple, list)) and dim:
        # torch reports an empty reduced dim before a repeated one
        _check_nonempty(x, "amin", tuple(wrap_dim(d, x._data.ndim) for d in dim), orig=dim)
    dims = dims_of(dim, x._data.ndim)
    _check_nonempty(x, "amin", dims if dim not in ((), [], None) else None, orig=dim)
    return AMIN.call(x, params=(dims, keepdim))


return_types_max = return_type("max")
return_types_min = return_type("min")


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
    shape = ctx._shape
    return (_index_grad(g, idx, dim, keepdim, shape),)


def _index_grad(g, idx, dim, keepdim, shape):
    """Scatter `g` into zeros of `shape` at `idx` along `dim` (value-selecting reductions)."""
    if len(shape) == 0:
        return g
    if not keepdim:
        g = g.unsqueeze(dim)
        idx = idx.unsqueeze(dim)
    # indices come from the forward: no public checks needed
    return SCATTER.call(zeros(shape, dtype=g.dtype), idx, g, params=(dim, None))


record_input_shape(MAX_DIM, MIN_DIM)
MAX_DIM.def_vjp(_select_vjp)
MIN_DIM.def_vjp(_select_vjp)


def _select_jvp(ctx, t):
    """The tangent at the selected positions (the indices output has none)."""
    idx = ctx.outputs[1]
    dim, keepdim, _ = ctx.params
    if t._data.ndim == 0:
        return (t.clone(), None)
    if keepdim:
        return (t.gather(dim, idx), None)
    return (t.gather(dim, idx.unsqueeze(dim)).squeeze(dim), None)


MAX_DIM.def_jvp(_select_jvp)
MIN_DIM.def_jvp(_select_jvp)


def _minmax(input, dim, keepdim, other, is_max):
    x = as_tensor_arg(input)
    name = "max" if is_max else "min"
    if isinstance(dim, Tensor):
        return maximum(x, dim) if is_max else minimum(x, dim)
    if dim is None:
        _check_nonempty(x, name, None)
        _refuse_complex_kernel(x, f"{name}_all")
        return (MAX_ALL if is_max else MIN_ALL).call(x, params=(None, False))
    d = wrap_dim(dim, x._data.ndim)
    if _complex_name(x):
        raise RuntimeError(f"{name}(): does not support complex input")
    _check_nonempty(x, name, (d,))
    vals, idx = (MAX_DIM if is_max else MIN_DIM).call(x, params=(d, keepdim, is_max))
    return (return_types_max if is_max else return_types_min)(vals, idx)


def max(input, dim=None, keepdim=False):
    """The largest element, or (values, indices) along `dim`, or elementwise max of two."""
    return _minmax(input, dim, keepdim, None, True)


def min(input, dim=None, keepdim=False):
    return _minmax(input, dim, keepdim, None, False)


def argmax(input, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    if x._data.dtype == np.bool_:
        raise RuntimeError("argmax(): does not support bool input")
    if _complex_name(x):
        raise RuntimeError("argmax(): does not support complex input")
    _check_nonempty(x, "argmax", None if dim is None else (wrap_dim(dim, x._data.ndim),), False)
    if dim is None:
        return max(x.reshape(-1), 0)[1].reshape(()) if not keepdim else \
            max(x.reshape(-1), 0)[1].reshape((1,) * x._data.ndim)
    return max(x, dim, keepdim)[1]


def argmin(input, dim=None, keepdim=False):
    x = as_tensor_arg(input)
    if x._data.dtype == np.bool_:
        raise RuntimeError("argmin(): does not support bool input")
    if _complex_name(x):
        raise RuntimeError("argmin(): does not support complex input")
    _check_nonempty(x, "argmin", None if dim is None else (wrap_dim(dim, x._data.ndim),), False)
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
    reads_values("prod's backward (whether the input holds a zero)")
    if not zero._data.any():
        return (gg * _conj(o / x),)
    # With zeros: the product of the others, computed without dividing.
    if dims is None:
        flat = x.reshape(-1)
        d = 0
    else:
        if len(dims_t) != 1:
            raise RuntimeError("prod backward with zeros supports one reduced dim")
        flat, d = x, dims_t[0]
    moved = movedim(flat, d, -1)
    n = moved._data.shape[-1]
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
    return PROD_DIM.call(x, params=(dims_of(dim, x._data.ndim), keepdim, npdt))


# --------------------------------------------------------------------------- var / std
def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _numel_over(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _var_args(input, dim, unbiased, correction, name):
    x = as_tensor_arg(input)
    if x._data.dtype.kind not in "fc":
        what = "std and var" if name in ("std", "var") else name
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    dims = dims_of(dim, x._data.ndim)
    n = _numel_over(x._data.shape, dims)
    if n - c <= 0:
        import warnings
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return x, dims, c, n


def _var_np(x, dims, c, keepdim):
    n = _numel_over(x.shape, dims)
    mu = np.mean(x, axis=dims, keepdims=True) if n else np.zeros((), x.dtype)
    d = x - mu
    sq = (d.real * d.real + d.imag * d.imag) if x.dtype.kind == "c" else d * d
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(sq, axis=dims, keepdims=keepdim) / sq.dtype.type(builtins.max(n - c, 0))


def _var_fwd(x, p):
    dims, c, keepdim = p
    return _var_np(x, dims, c, keepdim)


def _std_fwd(x, p):
    dims, c, keepdim = p
    return np.sqrt(_var_np(x, dims, c, keepdim))


def _var_mean_fwd(x, p):
    dims, c, keepdim = p
    with np.errstate(divide="ignore", invalid="ignore"):
        return _var_np(x, dims, c, keepdim), np.mean(x, axis=dims, keepdims=keepdim)


def _std_mean_fwd(x, p):
    v, m = _var_mean_fwd(x, p)
    return np.sqrt(v), m


VAR = primitive("var", _var_fwd, save=((0, None),))
STD = primitive("std", _std_fwd, save=((0, None), ("out", None)))
VAR_MEAN = primitive("var_mean", _var_mean_fwd, save=((0, None),), n_out=2)
STD_MEAN = primitive("std_mean", _std_mean_fwd, save=((0, None), ("out", None)), n_out=2)


def _unsqueeze_dims(g, dims, keepdim):
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g


def _var_grad(g, x, dims, c, keepdim):
    """d var / dx = 2 (x - mean) / (n - c), times the (broadcast) output gradient."""
    n = _numel_over(x._data.shape, dims)
    factor = 2.0 / (n - c) if n != c else float("inf")
    gg = _unsqueeze_dims(g, dims, keepdim)
    return gg * (x - x.mean(dims, keepdim=True)) * factor


def _std_grad(g, x, out, dims, c, keepdim):
    # torch masks the 0/0 at a zero standard deviation to a zero gradient
    gv = where(out == 0, 0.0, g / (out * 2))
    return _var_grad(gv, x, dims, c, keepdim)


def _mean_grad(g, x, dims, keepdim):
    n = _numel_over(x._data.shape, dims)
    return _unsqueeze_dims(g, dims, keepdim).expand(x._data.shape) / n


@VAR.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    return (_var_grad(g, x, *ctx._params),)


@STD.def_vjp
def _(ctx, g):
    x, out = ctx.saved
    return (_std_grad(g, x, out, *ctx._params),)


@VAR_MEAN.def_vjp
def _(ctx, gs):
    gs = tuple(gs) + (None,) * (2 - len(gs))
    (x,) = ctx.saved
    dims, c, keepdim = ctx._params
    gx = None
    if gs[0] is not None:
        gx = _var_grad(gs[0], x, dims, c, keepdim)
    if gs[1] is not None:
        gm = _mean_grad(gs[1], x, dims, keepdim)
        gx = gm if gx is None else gx + gm
    return (gx,)


@STD_MEAN.def_vjp
def _(ctx, gs):
    gs = tuple(gs) + (None,) * (2 - len(gs))
    x, out = ctx.saved
    dims, c, keepdim = ctx._params
    gx = None
    if gs[0] is not None:
        gx = _std_grad(gs[0], x, out, dims, c, keepdim)
    if gs[1] is not None:
        gm = _mean_grad(gs[1], x, dims, keepdim)
        gx = gm if gx is None else gx + gm
    return (gx,)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over `dim` with Bessel's `correction` (default 1; ``unbiased=False`` -> 0)."""
    x, dims, c, _ = _var_args(input, dim, unbiased, correction, "var")
    return VAR.call(x, params=(dims, c, keepdim))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: the square root of :func:`var` (zero gradient where it is 0)."""
    x, dims, c, _ = _var_args(input, dim, unbiased, correction, "std")
    return STD.call(x, params=(dims, c, keepdim))


return_types_var_mean = tuple


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over `dim` in one node (VarMeanBackward0)."""
    x, dims, c, _ = _var_args(input, dim, unbiased, correction, "var_mean")
    return tuple(VAR_MEAN.call(x, params=(dims, c, keepdim)))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over `dim` in one node (StdMeanBackward0)."""
    x, dims, c, _ = _var_args(input, dim, unbiased, correction, "std_mean")
    return tuple(STD_MEAN.call(x, params=(dims, c, keepdim)))


# --------------------------------------------------------------------------- logsumexp
def _lse_np(x, dims, keepdim):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if x.size == 0:
            return np.log(np.sum(np.exp(x), axis=dims, keepdims=keepdim))
        # The shift is real (the largest real part, as torch): the log of the shifted sum is
        # then on the principal branch, so a complex result's imaginary part is in (-pi, pi].
        m = np.max(x.real, axis=dims, keepdims=True)
        # A row of -inf (or +inf) would give inf - inf; shifting by 0 keeps -inf / +inf exact.
        m = np.where(np.isinf(m), np.zeros((), m.dtype), m)
        out = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        out = np.squeeze(out, axis=dims)
    return out


LOGSUMEXP = primitive("logsumexp", lambda x, p: _lse_np(x, *p), save=((0, None), ("out", None)))


@LOGSUMEXP.def_vjp
def _(ctx, g):
    x, out = ctx.saved
    dims, keepdim = ctx._params
    return (_unsqueeze_dims(g, dims, keepdim) *
            _conj(exp(x - _unsqueeze_dims(out, dims, keepdim))),)


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(x), dim))`` computed stably: -inf rows give -inf, +inf gives +inf."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind not in "fc":
        x = x.to(_dtype.get_default_dtype())
    dims = dims_of(dim, x._data.ndim)
    return LOGSUMEXP.call(x, params=(dims, keepdim))


# --------------------------------------------------------------------------- all / any
def _bool_reduce(fn, input, dim, keepdim):
    x = as_tensor_arg(input)
    if is_batched(x):  # under vmap: in ops (the raw data is a placeholder)
        return _bool_reduce_batched(fn is np.all, x, dim, keepdim)
    d = x._data
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        axis = ()  # an empty dim list reduces nothing here (unlike sum)
    else:
        axis = None if dim is None else dims_of(dim, d.ndim)
    out = np.asarray(fn(d, axis=axis, keepdims=keepdim if axis is not None else False))
    if d.dtype == np.uint8:
        out = out.astype(np.uint8)
    return wrap(out)


def _bool_reduce_batched(every, x, dim, keepdim):
    hit = (x == 0) if every else (x != 0)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        out = hit
    else:
        n = hit.sum() if dim is None else hit.sum(dim, keepdim=keepdim)
        out = (n == 0) if every else (n > 0)
    return out.to(x.dtype) if x.dtype == _dtype.uint8 else out


def all(input, dim=None, keepdim=False):
    """True where every element (over `dim`) is non-zero; uint8 input gives uint8, as torch."""
    return _bool_reduce(np.all, input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    """True where some element (over `dim`) is non-zero; uint8 input gives uint8, as torch."""
    return _bool_reduce(np.any, input, dim, keepdim)


def count_nonzero(input, dim=None):
    """Number of non-zero elements (over `dim`) as int64."""
    x = as_tensor_arg(input)
    if is_batched(x):
        return (x != 0).sum() if dim is None else (x != 0).sum(dim)
    d = x._data
    axis = None if dim is None else dims_of(dim, d.ndim)
    return wrap(np.asarray(np.count_nonzero(d, axis=axis), dtype=np.int64))


# --------------------------------------------------------------------------- nan-reductions
def _nansum_fwd(x, p):
    dims, keepdim, dt = p
    if dt is None and x.dtype.kind in "biu":
        dt = np.int64
    return np.asarray(np.nansum(x, axis=dims, keepdims=keepdim, dtype=dt))


NANSUM = primitive("nansum", _nansum_fwd, save=((0, None),))


@NANSUM.def_vjp
def _(ctx, g):
    (x,) = ctx.saved
    dims, keepdim, _ = ctx._params
    dims = dims if dims is not None else tuple(range(x._data.ndim))
    gg = _unsqueeze_dims(g, dims, keepdim).expand(x._data.shape)
    # a product (not a select) so that an infinite gradient gives NaN at NaNs, as torch
    return (gg * logical_not(isnan(x.detach())),)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero (NansumBackward0: no gradient to the NaNs)."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    dims = None if dim is None else dims_of(dim, x._data.ndim)
    return NANSUM.call(x, params=(dims, keepdim, npdt))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements (a composite: nansum / count, DivBackward0 as torch)."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind not in "fc":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtype.from_np(x._data.dtype)._legacy[:-6]}")
    if dtype is not None:
        x = x.to(dtype)
    notnan = logical_not(isnan(x.detach()))
    cnt = notnan.sum(dim, keepdim) if dim is not None else notnan.sum()
    return nansum(x, dim, keepdim) / cnt


# --------------------------------------------------------------------------- scans
def _scan_prepare(x, dim, dt, name):
    if dt is None and x.dtype.kind in "biu":
        dt = np.int64
    if dt is not None and x.dtype != dt:
        x = x.astype(dt)
    return x


def _cumsum_fwd(x, p):
    dim, dt = p
    x = _scan_prepare(x, dim, dt, "cumsum")
    if x.ndim == 0:
        return x.copy()
    if x.dtype == np.float16:  # accumulated in float32, as torch
        return np.cumsum(x, axis=dim, dtype=np.float32).astype(np.float16)
    return np.cumsum(x, axis=dim)


def _cumprod_fwd(x, p):
    dim, dt = p
    x = _scan_prepare(x, dim, dt, "cumprod")
    if x.ndim == 0:
        return x.copy()
    return np.cumprod(x, axis=dim)


CUMSUM = primitive("cumsum", _cumsum_fwd, linear=True)
CUMPROD = primitive("cumprod", _cumprod_fwd, save=((0, None), ("out", None)))


def _rev_cumsum(t, dim):
    return t.flip(dim).cumsum(dim).flip(dim)


@CUMSUM.def_vjp
def _(ctx, g):
    dim, _ = ctx._params
    if g._data.ndim == 0:
        return (g,)
    return (_rev_cumsum(g, dim),)


@CUMPROD.def_vjp
def _(ctx, g):
    x, out = ctx.saved
    dim, _ = ctx._params
    if x._data.ndim == 0:
        return (g,)
    reads_values("cumprod's backward (whether the input holds a zero)")
    if not (x._data == 0).any():
        return (_rev_cumsum(g * _conj(out), dim) / _conj(x),)
    # With zeros there is no division: d out_j / d x_k = prod_{i <= j, i != k} x_i, built one
    # position at a time (O(n) scans of length n along `dim`; only taken when a zero is present).
    n = x._data.shape[dim]
    shape = [1] * x._data.ndim
    shape[dim] = n
    pos = arange(n).reshape(shape)
    parts = []
    for k in range(n):
        others = where(pos == k, 1.0, x).to(x.dtype).cumprod(dim)
        parts.append((g * _conj(others)).narrow(dim, k, n - k).sum(dim, keepdim=True))
    return (cat(parts, dim),)


def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along `dim` (integers accumulate in int64 unless `dtype` says)."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    return CUMSUM.call(x, params=(d, npdt))


def cumprod(input, dim, *, dtype=None):
    """Cumulative product along `dim`; the gradient is exact with zeros in the input."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    npdt = _dtype.to_np(dtype) if dtype is not None else None
    return CUMPROD.call(x, params=(d, npdt))


def _cumext_fwd(x, p):
    dim, is_max = p
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    if x.size == 0:
        return x.copy(), np.zeros(x.shape, np.int64)
    xm = np.moveaxis(x, dim, -1)
    vals = np.empty_like(xm)
    idx = np.empty(xm.shape, np.int64)
    best = xm[..., 0].copy()
    bi = np.zeros(best.shape, np.int64)
    isf = x.dtype.kind in "fc"
    for i in range(xm.shape[-1]):
        v = xm[..., i]
        # torch: keep a NaN once seen; otherwise ties move the index forward (>= / <=).
        take = (v >= best) if is_max else (v <= best)
        if isf:
            take = ~np.isnan(best) & (np.isnan(v) | take)
        best = np.where(take, v, best)
        bi = np.where(take, i, bi)
        vals[..., i] = best
        idx[..., i] = bi
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


CUMMAX = primitive("cummax", _cumext_fwd, save=(("out1", None),), n_out=2,
                   diff_outs=(True, False))
CUMMIN = primitive("cummin", _cumext_fwd, save=(("out1", None),), n_out=2,
                   diff_outs=(True, False))


def _cumext_vjp(ctx, gs):
    g = gs[0]
    (idx,) = ctx.saved
    dim, _ = ctx._params
    if g._data.ndim == 0:
        return (g,)
    return (SCATTER_ADD.call(zeros(g.shape, dtype=g.dtype), idx, g, params=(dim, "add")),)


CUMMAX.def_vjp(_cumext_vjp)
CUMMIN.def_vjp(_cumext_vjp)

return_types_cummax = return_type("cummax")
return_types_cummin = return_type("cummin")


def _check_scalar_dim(x, dim, name):
    if x._data.ndim == 0 and dim not in (0, -1):
        raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")


def cummax(input, dim):
    """Running maximum along `dim` and the index where it was attained (latest on ties)."""
    x = as_tensor_arg(input)
    _check_scalar_dim(x, dim, "cummax")
    d = wrap_dim(dim, x._data.ndim)
    return return_types_cummax(*CUMMAX.call(x, params=(d, True)))


def cummin(input, dim):
    """Running minimum along `dim` and the index where it was attained (latest on ties)."""
    x = as_tensor_arg(input)
    _check_scalar_dim(x, dim, "cummin")
    d = wrap_dim(dim, x._data.ndim)
    return return_types_cummin(*CUMMIN.call(x, params=(d, False)))


def _lcse_fwd(x, dim):
    if x.ndim == 0:
        return x.copy()
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if x.dtype.kind == "c":
            return _lcse_complex(x, dim)
        return np.logaddexp.accumulate(x, axis=dim)


def _lcse_complex(x, dim):
    """torch's complex running log-add-exp: acc = big + log1p(exp(small - big)), where big
    and small are the two operands ordered by real part (so the imaginary part accumulates,
    it is not reduced to the principal branch); a NaN real part gives NaN, two equal
    infinite real parts the plain log(exp(a) + exp(b))."""
    x = np.moveaxis(x, dim, 0)
    out = np.empty_like(x)
    acc = x[0] if len(x) else None
    for k in range(len(x)):
        if k:
            a, b = acc, x[k]
            first = a.real >= b.real
            big, small = np.where(first, a, b), np.where(first, b, a)
            acc = big + np.log1p(np.exp(small - big))
            same_inf = ~np.isfinite(small.real) & (small.real == big.real)
            acc = np.where(same_inf, np.log(np.exp(a) + np.exp(b)), acc)
            acc = np.where(np.isnan(a.real) | np.isnan(b.real), complex(np.nan, np.nan), acc)
        out[k] = acc
    return np.moveaxis(out, 0, dim)


LOGCUMSUMEXP = primitive("logcumsumexp", _lcse_fwd, save=((0, None), ("out", None)))


@LOGCUMSUMEXP.def_vjp
def _(ctx, g):
    # grad_k = sum_{j >= k} g_j exp(x_k - out_j), split by the sign of g so that every term is
    # a logcumsumexp of logs (stable for large |x|; TensorFlow's formulation, as torch). The
    # "log of zero" is the dtype's lowest finite value, not -inf, so no inf - inf appears.
    x, out = ctx.saved
    dim = ctx._params
    if x._data.ndim == 0 or x._data.size == 0:
        return (g,)
    if x._data.dtype.kind == "c":
        # grad_k = sum_{j >= k} g_j conj(exp(x_k - out_j)): one reversed logcumsumexp of
        # log(conj g) - out, no sign split needed (log of a complex zero is -inf).
        rev = (log(_conj(g)) - out).flip(dim).logcumsumexp(dim).flip(dim)
        return (_conj(exp(rev + x)),)
    lowest = float(np.finfo(x._data.dtype).min)
    log_abs = log(_abs(g))

    def part(mask):
        lg = where(mask, log_abs, lowest)
        return exp((lg - out).flip(dim).logcumsumexp(dim).flip(dim) + x)

    return (part(g > 0) - part(g < 0),)


@LOGCUMSUMEXP.def_jvp_parts
def _(ctx, t):
    """torch's tangent: cumsum(e * t) / (cumsum(e) + 1e-13) with e = exp(x - max over dim)
    (exp(x) for complex inputs); torch's guard 1e-13 included, so tangents where the shifted
    exponentials are tiny are torch's."""
    x = ctx.inputs[0]
    dim = ctx.params
    if x._data.ndim == 0:
        return t
    e = exp(x) if x._data.dtype.kind == "c" else exp(x - x.amax(dim, keepdim=True))
    return (e * t).cumsum(dim) / (e.cumsum(dim) + 1e-13)


def _not_implemented(kernel, x):
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{_dtype.from_np(x._data.dtype)._legacy[:-6]}'")


def logcumsumexp(input, dim):
    """``log(cumsum(exp(x), dim))`` computed stably."""
    x = as_tensor_arg(input)
    if x._data.dtype.kind not in "fc":
        raise _not_implemented("logcumsumexp_out_cpu", x)
    return LOGCUMSUMEXP.call(x, params=wrap_dim(dim, x._data.ndim))


# --------------------------------------------------------------------------- NumPy spellings
for _name in ("sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var",
              "std", "var_mean", "std_mean", "logsumexp", "all", "any", "count_nonzero",
              "nansum", "nanmean", "cumsum", "cumprod", "cummax", "cummin",
              "logcumsumexp"):
    globals()[_name] = _numpy_aliases(globals()[_name])


def _scan_(op, name):
    def method(self, dim, *, dtype=None):
        npdt = _dtype.to_np(dtype) if dtype is not None else None
        return apply_inplace(op, self, params=(wrap_dim(dim, self._data.ndim), npdt))
    method.__name__ = name
    return method


def _bind_inplace():
    for name, fn in (("cumsum_", _scan_(CUMSUM, "cumsum_")),
                     ("cumprod_", _scan_(CUMPROD, "cumprod_"))):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


_bind_inplace()
