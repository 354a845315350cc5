"""Indexing: ``x[key]`` (basic indices become a chain of view ops, tensor indices an
IndexBackward0 node), ``x[key] = v`` (a view written in place, or index_put_), and the
index-based primitives gather, scatter, scatter_add, index_select, index_put, masked_fill,
copy, fill, zero and nonzero.
"""

import numpy as np

from .._tensor import Tensor
from .registry import primitive, as_tensor_arg, wrap
from .inplace import apply_inplace
from .reduction import wrap_dim
from . import shape as _shape

__all__ = ["getitem", "setitem", "index_select", "gather", "scatter", "scatter_add",
           "index_put", "masked_fill", "nonzero", "take_along_dim", "index_add"]

_INDEX_TYPES = (Tensor, np.ndarray, list)


def _is_advanced(k):
    return isinstance(k, _INDEX_TYPES) and not (isinstance(k, Tensor) and k._data.ndim == 0
                                                and k._data.dtype.kind in "iu")


def _as_index_array(k):
    if isinstance(k, Tensor):
        arr = k._data
    else:
        arr = np.asarray(k)
        if arr.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if arr.size == 0:
            arr = arr.astype(np.int64)
    if arr.dtype.kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if arr.dtype == np.uint8:
        arr = arr.astype(bool)
    return arr


def _normalize_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    return key


def getitem(x, key):
    """``x[key]`` with torch's semantics and grad_fn chain."""
    key = _normalize_key(key)
    single_slice = len(key) == 1 and isinstance(key[0], slice)
    # Count the dims consumed by the key, for Ellipsis expansion.
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, bool):
            continue
        if isinstance(k, (Tensor, np.ndarray)) and _as_index_array(k).dtype == bool:
            consumed += _as_index_array(k).ndim
        else:
            consumed += 1
    nd = x._data.ndim
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    out = x
    dim = 0
    advanced = []  # (result dim, index array)
    applied = False
    for k in key:
        if k is Ellipsis:
            dim += nd - consumed
            continue
        if k is None:
            out = out.unsqueeze(dim)
            dim += 1
            applied = True
            continue
        if isinstance(k, bool):
            out = out.unsqueeze(dim)
            if not k:
                advanced.append((dim, np.zeros((0,), np.int64)))
            dim += 1
            applied = True
            continue
        if isinstance(k, slice):
            size = out._data.shape[dim]
            start, stop, step = k.start, k.stop, k.step
            if step is not None and int(step) <= 0:
                raise ValueError("step must be greater than zero")
            full = (start in (None, 0)) and (stop is None or (isinstance(stop, int) and
                                                              stop >= size)) and step in (None, 1)
            if not full or single_slice:
                out = _shape.slice_dim(out, dim, _idx(start), _idx(stop), _idx(step) or 1)
                applied = True
            dim += 1
            continue
        if _is_advanced(k):
            arr = _as_index_array(k)
            if arr.dtype == bool:
                for i, sub in enumerate(np.nonzero(arr)):
                    advanced.append((dim + i, sub))
                if arr.ndim == 0:
                    out = out.unsqueeze(dim)
                    advanced[-1:] = [(dim, np.zeros((1 if arr else 0,), np.int64))]
                    dim += 1
                else:
                    dim += arr.ndim
            else:
                advanced.append((dim, arr))
                dim += 1
            continue
        # an integer (Python int, NumPy integer, or 0-d integer tensor)
        try:
            i = int(k)
        except TypeError:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got "
                             f"{type(k).__name__})") from None
        out = _shape.select(out, dim, i)
        applied = True
    if advanced:
        return _index(out, advanced)
    if not applied:
        return _shape.alias(x)
    return out


def _idx(v):
    if v is None:
        return None
    return int(v)


def _full_index(ndim, advanced):
    idx = [slice(None)] * ndim
    for d, arr in advanced:
        idx[d] = arr
    return tuple(idx)


def _index_fwd(x, p):
    try:
        return x[p]
    except IndexError as e:
        raise IndexError(_torch_index_error(x, p, e)) from None


def _torch_index_error(x, idx, e):
    for d, k in enumerate(idx):
        if isinstance(k, np.ndarray) and k.size:
            size = x.shape[d]
            bad = k[(k >= size) | (k < -size)]
            if bad.size:
                return f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {size}"
    return str(e)


INDEX = primitive("index", _index_fwd, linear=True)


@INDEX.def_vjp
def _(ctx, g):
    from .. import zeros
    shape = ctx._extra["shape"]
    z = zeros(shape, dtype=g.dtype)
    return (INDEX_PUT.call(z, g, params=(ctx._params, True)),)


def _index(x, advanced):
    idx = _full_index(x._data.ndim, advanced)
    out = INDEX.call(x, params=idx)
    if out._grad_fn is not None:
        out._grad_fn._extras()["shape"] = x._data.shape
    return out


def _index_put_fwd(base, values, p):
    idx, accumulate = p
    out = base.copy()
    vals = np.asarray(values, dtype=base.dtype)
    if accumulate:
        target_shape = out[idx].shape
        np.add.at(out, idx, np.broadcast_to(vals, target_shape))
    else:
        out[idx] = vals
    return out


INDEX_PUT = primitive("index_put", _index_put_fwd, "IndexPutBackward0", linear=True)


@INDEX_PUT.def_vjp
def _(ctx, g):
    idx, accumulate = ctx._params
    n = ctx._next
    gb = None
    if n[0]:
        gb = g if accumulate else INDEX_PUT.call(g, _zeros_like_index(g, idx),
                                                 params=(idx, False))
    gv = INDEX.call(g, params=idx) if n[1] else None
    return gb, gv


def _zeros_like_index(g, idx):
    from .. import zeros
    return zeros(g._data[idx].shape, dtype=g.dtype)


def index_put(input, indices, values, accumulate=False):
    x = as_tensor_arg(input)
    idx = _full_index(x._data.ndim, [(d, _as_index_array(i)) for d, i in enumerate(indices)
                                     if i is not None])
    v = as_tensor_arg(values)
    return INDEX_PUT.call(x, v.to(x.dtype) if v._data.dtype != x._data.dtype else v,
                          params=(idx, accumulate))


def index_put_(input, indices, values, accumulate=False):
    x = input
    idx = _full_index(x._data.ndim, [(d, _as_index_array(i)) for d, i in enumerate(indices)
                                     if i is not None])
    v = as_tensor_arg(values)
    _check_values_shape(x, idx, v)
    return apply_inplace(INDEX_PUT, x, v, params=(idx, accumulate))


def _check_values_shape(x, idx, v):
    target = x._data[idx].shape
    try:
        np.broadcast_shapes(v._data.shape, target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v._data.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}") from None


def setitem(x, key, value):
    """``x[key] = value``: copy into a view of `x`, or index_put_ for tensor indices."""
    key = _normalize_key(key)
    has_adv = any(_is_advanced(k) for k in key)
    if not has_adv:
        view = getitem(x, key)
        if view is x or (view._base is None):
            raise RuntimeError("setitem expected a view")
        copy_(view, value)
        return
    # Apply the basic part as a view, then index_put_ the advanced part into it.
    basic = []
    dim = 0
    advanced = []
    nd = x._data.ndim
    consumed = sum(0 if (k is None or k is Ellipsis) else
                   (_as_index_array(k).ndim if _is_advanced(k) and
                    _as_index_array(k).dtype == bool else 1) for k in key)
    for k in key:
        if k is Ellipsis:
            basic.append(k)
            dim += nd - consumed
        elif _is_advanced(k):
            arr = _as_index_array(k)
            basic.append(slice(None))
            if arr.dtype == bool:
                for i, sub in enumerate(np.nonzero(arr)):
                    advanced.append((dim + i, sub))
                basic.extend([slice(None)] * (arr.ndim - 1))
                dim += arr.ndim
            else:
                advanced.append((dim, arr))
                dim += 1
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k._data.ndim == 0):
            basic.append(k)
            advanced = [(d - 1 if d > dim else d, a) for d, a in advanced]
        else:
            basic.append(k)
            dim += 0 if k is None else 1
    target = x
    if any(not (isinstance(k, slice) and k == slice(None)) for k in basic):
        target = getitem(x, tuple(basic))
    idx = _full_index(target._data.ndim, advanced)
    v = as_tensor_arg(value) if not isinstance(value, Tensor) else value
    if v._data.dtype != target._data.dtype:
        v = v.to(target.dtype)
    _check_values_shape(target, idx, v)
    apply_inplace(INDEX_PUT, target, v, params=(idx, False))


# --------------------------------------------------------------------------- copy / fill
def _copy_fwd(a, b, p):
    return np.array(np.broadcast_to(b, a.shape), dtype=a.dtype)


COPY = primitive("copy_", _copy_fwd, "CopyBackwards", linear=True)


@COPY.def_vjp
def _(ctx, g):
    n = ctx._next
    return (g * 0 if n[0] else None), (g if n[1] else None)


def copy_(self, src, non_blocking=False):
    """Copy `src` (broadcast, cast) into `self` in place."""
    src = as_tensor_arg(src)
    try:
        np.broadcast_shapes(src._data.shape, self._data.shape)
        if len(src._data.shape) > len(self._data.shape) and np.broadcast_shapes(
                src._data.shape, self._data.shape) != self._data.shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self._data.shape[-1] if self._data.ndim else 1}"
                           f") must match the size of tensor b ({src._data.shape[-1]}) at "
                           f"non-singleton dimension {max(self._data.ndim - 1, 0)}") from None
    # copy_ ignores the dtype category rule of other in-place ops: any dtype may be copied
    # into any other (the kernel returns self's dtype).
    return apply_inplace(COPY, self, src)


def _fill_fwd(x, value):
    return np.full(x.shape, value, dtype=x.dtype)


FILL = primitive("fill", _fill_fwd, linear=True)
FILL.def_vjp(lambda ctx, g: (g * 0,))
FILL_T = primitive("fill_tensor", lambda x, v, p: np.full(x.shape, v, dtype=x.dtype),
                   "FillBackward1", linear=True)
FILL_T.def_vjp(lambda ctx, g: (g * 0 if ctx._next[0] else None,
                               g.sum() if ctx._next[1] else None))
ZERO = primitive("zero", lambda x, p: np.zeros_like(x), linear=True)
ZERO.def_vjp(lambda ctx, g: (g * 0,))


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return apply_inplace(FILL_T, self, value)
    return apply_inplace(FILL, self, params=value)


def zero_(self):
    return apply_inplace(ZERO, self)


def _masked_fill_fwd(x, mask, p):
    return np.where(mask, np.asarray(p, dtype=x.dtype), x)


MASKED_FILL = primitive("masked_fill", _masked_fill_fwd, save=((1, None),), linear=True)


@MASKED_FILL.def_vjp
def _(ctx, g):
    (mask,) = ctx.saved
    from .elementwise import where
    return where(mask, 0.0, g), None


def _mask_arg(mask):
    m = as_tensor_arg(mask)
    if m._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{m.dtype}")
    return m


def masked_fill(input, mask, value):
    if isinstance(value, Tensor):
        value = value.item()
    x = as_tensor_arg(input)
    return MASKED_FILL.call(x, _mask_arg(mask), params=value)


def masked_fill_(self, mask, value):
    if isinstance(value, Tensor):
        value = value.item()
    return apply_inplace(MASKED_FILL, self, _mask_arg(mask), params=value)


# --------------------------------------------------------------------------- gather / scatter
def _check_index(index, name):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")


def _gather_fwd(x, idx, dim):
    if idx.size and (idx.max() >= x.shape[dim] or idx.min() < -x.shape[dim]):
        bad = idx[(idx >= x.shape[dim]) | (idx < -x.shape[dim])].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{x.shape[dim]}")
    sl = tuple(slice(0, s) for s in idx.shape)
    return np.take_along_axis(x[sl[:dim] + (slice(None),) + sl[dim + 1:]], idx, axis=dim)


GATHER = primitive("gather", _gather_fwd, save=((1, None),), linear=True)


@GATHER.def_vjp
def _(ctx, g):
    from .. import zeros
    (idx,) = ctx.saved
    shape = ctx._extra["shape"]
    return scatter_add(zeros(shape, dtype=g.dtype), ctx._params, idx, g), None


def gather(input, dim, index, *, sparse_grad=False):
    x = as_tensor_arg(input)
    _check_index(index, "gather")
    d = wrap_dim(dim, x._data.ndim)
    out = GATHER.call(x, index, params=d)
    if out._grad_fn is not None:
        out._grad_fn._extras()["shape"] = x._data.shape
    return out


def take_along_dim(input, indices, dim=None):
    x = as_tensor_arg(input)
    if dim is None:
        return gather(x.reshape(-1), 0, indices.reshape(-1))
    d = wrap_dim(dim, x._data.ndim)
    shape = list(np.broadcast_shapes(x._data.shape[:d] + (1,) + x._data.shape[d + 1:],
                                     indices._data.shape[:d] + (1,) + indices._data.shape[d + 1:]))
    xs = list(shape)
    xs[d] = x._data.shape[d]
    ish = list(shape)
    ish[d] = indices._data.shape[d]
    return gather(x.expand(xs), d, indices.expand(ish))


def _scatter_idx(idx, dim):
    grids = np.indices(idx.shape, sparse=True)
    full = list(grids)
    full[dim] = idx
    return tuple(full)


def _scatter_fwd(x, idx, src, p):
    dim, reduce = p
    out = x.copy()
    full = _scatter_idx(idx, dim)
    s = np.asarray(src, dtype=x.dtype)
    if s.ndim:
        s = s[tuple(slice(0, n) for n in idx.shape)]
    else:
        s = np.broadcast_to(s, idx.shape)
    if reduce == "add":
        np.add.at(out, full, s)
    elif reduce == "multiply":
        np.multiply.at(out, full, s)
    else:
        out[full] = s
    return out


SCATTER = primitive("scatter", _scatter_fwd, "ScatterBackward0", save=((1, None),),
                    linear=True)
SCATTER_ADD = primitive("scatter_add", _scatter_fwd, save=((1, None),), linear=True)


@SCATTER.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim, _ = ctx._params
    n = ctx._next
    gx = scatter(g, dim, idx, 0.0) if n[0] else None
    gs = g.gather(dim, idx) if len(n) > 2 and n[2] else None
    return gx, None, gs


@SCATTER_ADD.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim, _ = ctx._params
    n = ctx._next
    return (g if n[0] else None), None, (g.gather(dim, idx) if n[2] else None)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    x = as_tensor_arg(input)
    _check_index(index, "scatter")
    d = wrap_dim(dim, x._data.ndim)
    if src is None:
        src = value
    if not isinstance(src, Tensor):
        return SCATTER.call(x, index, src, params=(d, reduce))
    return SCATTER.call(x, index, src, params=(d, reduce))


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    _check_index(index, "scatter_")
    d = wrap_dim(dim, self._data.ndim)
    return apply_inplace(SCATTER, self, index, src if src is not None else value,
                         params=(d, reduce))


def scatter_add(input, dim, index, src):
    x = as_tensor_arg(input)
    _check_index(index, "scatter_add")
    d = wrap_dim(dim, x._data.ndim)
    return SCATTER_ADD.call(x, index, src, params=(d, "add"))


def scatter_add_(self, dim, index, src):
    d = wrap_dim(dim, self._data.ndim)
    return apply_inplace(SCATTER_ADD, self, index, src, params=(d, "add"))


def _index_select_fwd(x, idx, dim):
    return np.take(x, idx, axis=dim)


INDEX_SELECT = primitive("index_select", _index_select_fwd, save=((1, None),), linear=True)


@INDEX_SELECT.def_vjp
def _(ctx, g):
    from .. import zeros
    (idx,) = ctx.saved
    dim = ctx._params
    shape = ctx._extra["shape"]
    return index_add(zeros(shape, dtype=g.dtype), dim, idx, g), None


def index_select(input, dim, index):
    x = as_tensor_arg(input)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d] if x._data.ndim else 1
    if index._data.size and (index._data.max() >= size or index._data.min() < -size):
        raise IndexError("index out of range in self")
    xx = x if x._data.ndim else x.reshape(1)
    out = INDEX_SELECT.call(xx, index.reshape(-1), params=d)
    if out._grad_fn is not None:
        out._grad_fn._extras()["shape"] = xx._data.shape
    return out if x._data.ndim else out.reshape(())


def _index_add_fwd(x, idx, src, p):
    dim, alpha = p
    out = x.copy()
    moved = np.moveaxis(out, dim, 0)
    s = np.moveaxis(np.asarray(src, dtype=x.dtype), dim, 0)
    np.add.at(moved, idx, s if alpha == 1 else s * alpha)
    return out


INDEX_ADD = primitive("index_add", _index_add_fwd, save=((1, None),), linear=True)


@INDEX_ADD.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim, alpha = ctx._params
    n = ctx._next
    gs = g.index_select(dim, idx) if n[2] else None
    if gs is not None and alpha != 1:
        gs = gs * alpha
    return (g if n[0] else None), None, gs


def index_add(input, dim, index, source, *, alpha=1):
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    return INDEX_ADD.call(x, index, source, params=(d, alpha))


def index_add_(self, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, self._data.ndim)
    return apply_inplace(INDEX_ADD, self, index, source, params=(d, alpha))


def nonzero(input, *, as_tuple=False):
    x = as_tensor_arg(input)
    nz = np.nonzero(x._data) if x._data.ndim else np.nonzero(x._data.reshape(1))
    if as_tuple:
        return tuple(wrap(np.asarray(a, np.int64)) for a in nz)
    if x._data.ndim == 0:
        return wrap(np.zeros((len(nz[0]), 0), np.int64))
    return wrap(np.stack(nz, axis=1).astype(np.int64) if nz else
                np.zeros((0, 0), np.int64))

