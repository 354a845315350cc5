"""Indexing: ``x[key]`` (basic indices become a chain of view ops, tensor/list/bool indices
one IndexBackward0 node), ``x[key] = v`` (a view written in place, index_put_, or fill_), and
the index-based ops: gather, take, take_along_dim, index_select, scatter (src, value, reduce),
scatter_add, scatter_reduce, index_add, index_copy, index_fill, index_put, masked_fill,
masked_select, masked_scatter, nonzero/argwhere, and copy_/fill_/zero_.

Keys are parsed as torch does: basic indices first (in key order), then mask-shape and
broadcast checks of the advanced part, then bounds (only when something is selected).
"""

import builtins

import numpy as np

from .._tensor import Tensor
from . import shape as _shape
from .inplace import apply_inplace
from .arguments import wrap_dim
from .registry import record_input_shape
from .registry import as_tensor_arg, primitive, reads_values, sizes_decide, wrap
from .. import _dtype
from .._creation import ones_like, zeros, zeros_like
from .broadcast import sum_to
from .comparison import where
from .joins import cat
from .._tensor import _c_name
from .registry import _broadcast_error
from .vmap_helpers import is_batched

__all__ = [
    "argwhere",
    "gather",
    "getitem",
    "index_add",
    "index_copy",
    "index_fill",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_scatter",
    "masked_select",
    "nonzero",
    "put",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "setitem",
    "take",
    "take_along_dim",
]

_INDEX_TYPES = (Tensor, np.ndarray, list)


def _is_advanced(k):
    return isinstance(k, _INDEX_TYPES) and not (isinstance(k, Tensor) and k._data.ndim == 0
                                                and k._data.dtype.kind in "iu")


def _as_index_array(k):
    if isinstance(k, Tensor):
        arr = k._data
    else:
        arr = np.asarray(k)
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if arr.dtype.kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if arr.dtype == np.uint8:
        arr = arr.astype(bool)
    return arr


def _normalize_key(key):
    if isinstance(key, list) and len(key) < 32 and any(
            k is None or k is Ellipsis or isinstance(k, (list, tuple, slice, Tensor))
            for k in key):
        # torch (like old NumPy) reads such a list as a tuple of indices: x[[[0, 1]]] is
        # x[[0, 1]]
        return tuple(key)
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _int_index(k):
    """`k` as a Python int when it is an integer index, else None."""
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        return int(k)
    if isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu":
        reads_values("a 0-d tensor used as an index")
        return int(k._data)
    return None


def _bad_index(k):
    if isinstance(k, str):
        return TypeError(f"new(): invalid data type '{type(k).__name__}'")
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                      f"Variables are valid indices (got {type(k).__name__})")


def _parse(x, key, for_set=False):
    """Apply the basic part of `key` (ints, slices, None, Ellipsis) as view ops, in torch's
    order, and collect the advanced part: returns (view, [(dim, index array)], applied).
    `applied` is False when no view op was needed (the key selects all of `x`)."""
    key = _normalize_key(key)
    # x[:] is a SliceBackward0 view for reading; writing x[:] = v copies into x itself.
    single_slice = len(key) == 1 and isinstance(key[0], slice) and not for_set
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
    dim = 0   # position in `out`, the result so far
    orig = 0  # position in `x`, for error messages
    advanced = []  # (result dim, index array)
    masks = []
    applied = False
    ellipsis_dims = nd - consumed
    for pos, k in enumerate(key):
        if k is Ellipsis:
            # torch expands the first Ellipsis; any later one stands for no dims
            dim += ellipsis_dims
            orig += ellipsis_dims
            ellipsis_dims = 0
            continue
        if k is None:
            out = out.unsqueeze(dim)
            dim += 1
            applied = True
            continue
        if isinstance(k, bool):
            # torch: unsqueeze, then index the new dim with [0] (True) or [] (False)
            out = out.unsqueeze(dim)
            advanced.append((dim, np.zeros((1 if k else 0,), np.int64)))
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
            orig += 1
            continue
        if _is_advanced(k):
            arr = _as_index_array(k)
            if arr.dtype == bool:
                if arr.ndim == 0:  # as a Python bool: a new dim indexed by [0] or []
                    out = out.unsqueeze(dim)
                    advanced.append((dim, np.zeros((1 if arr else 0,), np.int64)))
                    dim += 1
                    applied = True  # setitem writes through the unsqueezed view
                    continue
                masks.append((dim, arr))  # checked once the basic indices are applied
                for j, sub in enumerate(np.nonzero(arr)):
                    advanced.append((dim + j, sub))
                dim += arr.ndim
                orig += arr.ndim
            else:
                advanced.append((dim, arr))
                dim += 1
                orig += 1
            continue
        i = _int_index(k)
        if i is None:
            if hasattr(k, "__index__") and not isinstance(k, (float, Tensor)):
                i = k.__index__()
            else:
                raise _bad_index(k)
        if dim >= out._data.ndim:
            raise IndexError(f"too many indices for tensor of dimension {nd}")
        size = out._data.shape[dim]
        if not -size <= i < size:
            # torch names the position of the index in the key
            raise IndexError(f"index {i} is out of bounds for dimension {pos} with size {size}")
        out = _shape.select(out, dim, i)
        orig += 1
        applied = True
    for d, arr in masks:
        for j in range(arr.ndim):
            if arr.shape[j] != out._data.shape[d + j]:
                raise IndexError(
                    f"The shape of the mask {list(arr.shape)} at index {j} does not match the "
                    f"shape of the indexed tensor {list(out._data.shape)} at index {d + j}")
    if advanced:
        _check_broadcast([a for _, a in advanced])
    return out, advanced, applied


def getitem(x, key):
    """``x[key]`` with torch's semantics and grad_fn chain: integers become SelectBackward0,
    slices SliceBackward0, None UnsqueezeBackward0 views; tensor/list/bool indices one
    IndexBackward0 node (whose backward accumulates repeated indices); ``x[...]`` an alias."""
    if type(key) is int and x._data.ndim:  # x[i], the most common key: straight to select
        size = x._data.shape[0]
        if -size <= key < size:
            return _shape.select(x, 0, key)
    out, advanced, applied = _parse(x, key)
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
        # torch checks bounds only when the result has elements
        clipped = tuple(np.clip(k, -n, n - 1) if isinstance(k, np.ndarray) and n else k
                        for k, n in zip(p, x.shape))
        try:
            res = x[clipped]
        except IndexError:
            res = None
        if res is not None and res.size == 0:
            return res
        raise IndexError(_torch_index_error(x, p, e)) from None


def _torch_index_error(x, idx, e):
    # torch numbers an out-of-range advanced index by its position among the index tensors
    pos = 0
    for d, k in enumerate(idx):
        if isinstance(k, np.ndarray):
            if k.size:
                size = x.shape[d]
                bad = k[(k >= size) | (k < -size)]
                if bad.size:
                    if size == 0:
                        return "index is out of bounds for dimension with size 0"
                    return (f"index {int(bad.flat[0])} is out of bounds for dimension {pos} with "
                            f"size {size}")
            pos += 1
    return str(e)


INDEX = primitive("index", _index_fwd, linear=True)
record_input_shape(INDEX)


@INDEX.def_vjp
def _(ctx, g):
    shape = ctx._shape
    z = zeros(shape, dtype=g.dtype)
    return (INDEX_PUT.call(z, g, params=(ctx._params, True)),)


def _check_broadcast(arrays):
    try:
        np.broadcast_shapes(*[a.shape for a in arrays])
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None


def _index(x, advanced):
    _check_broadcast([a for _, a in advanced])
    idx = _full_index(x._data.ndim, advanced)
    out = INDEX.call(x, params=idx)
    return out


def _index_put_fwd(base, values, p):
    idx, accumulate = p[:2]
    for d, k in enumerate(idx):
        if isinstance(k, np.ndarray) and k.size:
            size = base.shape[d]
            if k.max() >= size or k.min() < -size:
                if _index_fwd(base, idx).size == 0:
                    return base.copy()  # nothing selected: torch does not check bounds
                raise IndexError(_torch_index_error(base, idx, None))
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
    idx, accumulate = ctx._params[:2]
    n = ctx._next
    gb = None
    if n[0]:
        gb = g if accumulate else INDEX_PUT.call(g, _zeros_like_index(g, idx),
                                                 params=(idx, False))
    gv = INDEX.call(g, params=idx) if n[1] else None
    if gv is not None and len(ctx._params) > 2 and gv._data.shape != ctx._params[2]:
        gv = _sum_to(gv, ctx._params[2])  # a broadcast value gets the summed gradient
    return gb, gv


def _zeros_like_index(g, idx):
    return zeros(_index_fwd(g._data, idx).shape, dtype=g.dtype)


def index_put(input, indices, values, accumulate=False):
    x = as_tensor_arg(input)
    if len(indices) > x._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim} (got "
                         f"{len(indices)})")
    idx = _full_index(x._data.ndim, [(d, _as_index_array(i)) for d, i in enumerate(indices)
                                     if i is not None])
    v = as_tensor_arg(values)
    if v._data.dtype != x._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy(x._data.dtype)} for the destination and "
                           f"{_legacy(v._data.dtype)} for the source.")
    _check_values_shape(x, idx, v)
    return INDEX_PUT.call(x, v, params=(idx, accumulate, v._data.shape))


def index_put_(input, indices, values, accumulate=False):
    x = input
    idx = _full_index(x._data.ndim, [(d, _as_index_array(i)) for d, i in enumerate(indices)
                                     if i is not None])
    v = as_tensor_arg(values)
    if v._data.dtype != x._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy(x._data.dtype)} for the destination and "
                           f"{_legacy(v._data.dtype)} for the source.")
    _check_values_shape(x, idx, v)
    return apply_inplace(INDEX_PUT, x, v, params=(idx, accumulate, v._data.shape))


def _check_values_shape(x, idx, v):
    target = _index_fwd(x._data, idx).shape  # torch's bounds error, unless nothing is selected
    try:
        np.broadcast_shapes(v._data.shape, target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v._data.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}") from None


def _legacy(dt):
    return _dtype.from_np(dt)._legacy[:-6]


def setitem(x, key, value):
    """``x[key] = value``: the basic part of `key` selects a view of `x` (x itself when it
    selects everything); `value` is copied into it (CopySlices on the base, CopyBackwards on
    x), or index_put_ writes it at the advanced indices of that view."""
    target, advanced, applied = _parse(x, key, for_set=True)
    if not applied:
        target = x
    elif target._base is None:
        raise RuntimeError("setitem expected a view")
    if not advanced:
        v = value if isinstance(value, Tensor) else _number_like(value, x)
        if target is x and v._data.ndim == 0:
            # torch fills x itself from a 0-d tensor (FillBackward3)
            fill_(x, v if isinstance(value, Tensor) else Tensor(np.asarray(value,
                                                                           x._data.dtype)))
            return
        _shape.expand(v, target._data.shape)  # torch's error when `value` does not fit
        copy_(target, v)
        return
    idx = _full_index(target._data.ndim, advanced)
    v = value if isinstance(value, Tensor) else Tensor(np.asarray(value,
                                                                  dtype=target._data.dtype))
    # torch's order of checks: value shape, then dtypes, then index bounds
    try:
        _check_values_shape(target, idx, v)
        bounds_error = None
    except IndexError as e:
        bounds_error = e
    if v._data.dtype != target._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_legacy(target._data.dtype)} for the destination and "
                           f"{_legacy(v._data.dtype)} for the source.")
    if bounds_error is not None:
        raise bounds_error
    apply_inplace(INDEX_PUT, target, v, params=(idx, False, v._data.shape))


# --------------------------------------------------------------------------- copy / fill
def _copy_fwd(a, b, p):
    return np.array(np.broadcast_to(b, a.shape), dtype=a.dtype)


COPY = primitive("copy_", _copy_fwd, "CopyBackwards", linear=True)
COPY.node._qualname = "torch::autograd::CopyBackwards"  # a C++ node in torch: name() is qualified


@COPY.def_vjp
def _(ctx, g):
    n = ctx._next
    gs = None
    if n[1]:
        shape, dt = ctx._params if ctx._params is not None else (g._data.shape, g._data.dtype)
        gs = _sum_to(g, shape)
        if gs._data.dtype.kind == "c" and dt.kind != "c":
            gs = gs.real  # a real source's gradient is the real part, as torch (no warning)
        if gs._data.dtype != dt:
            gs = gs.to(_dtype.from_np(dt))
    return (g * 0 if n[0] else None), gs


def _number_like(value, x):
    """A Python number (or nested list) as a tensor of `x`'s dtype: written into `x` it must
    not be rounded through the default dtype first (0.5 + 1e-6 stays exact in float64)."""
    if isinstance(value, (int, float, complex, bool, list, tuple, np.generic)):
        return Tensor(np.asarray(value, dtype=x._data.dtype))
    return as_tensor_arg(value)


def copy_(self, src, non_blocking=False):
    """Copy `src` (broadcast, cast) into `self` in place."""
    src = _number_like(src, self) if not isinstance(src, Tensor) else src
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
    # into any other (the kernel returns self's dtype). The params tell backward the source's
    # shape and dtype (its gradient is summed over broadcast dims and cast back).
    return apply_inplace(COPY, self, src, params=(src._data.shape, src._data.dtype))


def _fill_fwd(x, value):
    return np.full(x.shape, value, dtype=x.dtype)


FILL = primitive("fill", _fill_fwd, "FillBackward2", linear=True)
FILL.def_vjp(lambda ctx, g: (g * 0,))
FILL_T = primitive("fill_tensor", lambda x, v, p: np.full(x.shape, v, dtype=x.dtype),
                   "FillBackward3", linear=True)
FILL_T.def_vjp(lambda ctx, g: (g * 0 if ctx._next[0] else None,
                               g.sum() if ctx._next[1] else None))
ZERO = primitive("zero", lambda x, p: np.zeros_like(x), linear=True)
ZERO.def_vjp(lambda ctx, g: (g * 0,))
# Flagged linear, but they write a constant: the tangent they leave is zero.
FILL.def_jvp(lambda ctx, t: t * 0)
ZERO.def_jvp(lambda ctx, t: t * 0)


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
    return _sum_to(where(mask, 0.0, g), _extra_shape(ctx, g)), None


MASKED_FILL.def_jvp_parts(lambda ctx, t: MASKED_FILL.call(t, ctx.inputs[1], params=0), None)


def _extra_shape(ctx, g):
    """The input shape a node recorded (in-place calls record none: then it is g's shape)."""
    shape = getattr(ctx, "_shape", None)
    return shape if shape is not None else g._data.shape


def _mask_arg(mask):
    m = as_tensor_arg(mask)
    if m._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_c_name(m._data.dtype)}")
    return m


def _fill_value(value, x):
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    return value


def masked_fill(input, mask, value):
    """A copy of `input` (broadcast with `mask`) with `value` where `mask` is True; a 0-d tensor
    `value` receives the sum of the masked gradient (MaskedFillBackward1)."""
    x = as_tensor_arg(input)
    m = _mask_arg(mask)
    if x._data.dtype.kind != "c" and (isinstance(value, complex) or (
            hasattr(value, "_data") and value._data.dtype.kind == "c")):
        ctype = {"f": {4: "float", 8: "double"}}.get(x._data.dtype.kind, {}).get(
            x._data.dtype.itemsize, x._data.dtype.name)
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
    value = _fill_value(value, x)
    try:
        np.broadcast_shapes(x._data.shape, m._data.shape)
    except ValueError:
        raise _broadcast_error(m._data, x._data) from None
    if isinstance(value, Tensor):
        out = MASKED_FILL_T.call(x, m, value)
    else:
        out = MASKED_FILL.call(x, m, params=value)
    if out._grad_fn is not None:
        out._grad_fn._shape = x._data.shape
    return out


def masked_fill_(self, mask, value):
    m = _mask_arg(mask)
    value = _fill_value(value, self)
    try:
        shape = np.broadcast_shapes(self._data.shape, m._data.shape)
    except ValueError:
        raise _broadcast_error(self._data, m._data) from None
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    if isinstance(value, Tensor):
        return apply_inplace(MASKED_FILL_T, self, m, value)
    return apply_inplace(MASKED_FILL, self, m, params=value)


# --------------------------------------------------------------------------- gather / scatter
def _check_index(index, name):
    if not isinstance(index, Tensor) or index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name.rstrip('_')}(): Expected dtype int32/int64 for index")


def _gather_fwd(x, idx, dim):
    if idx.size == 0:  # any shape of empty index (its rank need not be the input's)
        return np.empty(idx.shape, x.dtype)
    if x.ndim == 0:  # a 0-d tensor gathers like a 1-element vector
        return _gather_fwd(x.reshape(1), idx.reshape(-1), 0).reshape(idx.shape)
    if idx.size and (idx.max() >= x.shape[dim] or idx.min() < 0):
        bad = idx[(idx >= x.shape[dim]) | (idx < 0)].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{x.shape[dim]}")
    sl = tuple(slice(0, s) for s in idx.shape)
    return np.take_along_axis(x[sl[:dim] + (slice(None),) + sl[dim + 1:]], idx, axis=dim)


GATHER = primitive("gather", _gather_fwd, save=((1, None),), linear=True)
record_input_shape(GATHER)


@GATHER.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    shape = ctx._shape
    if idx._data.size == 0:
        if not shape:
            return zeros(shape, dtype=g.dtype), None
        # an empty index of another rank: scatter nothing through an empty index of the
        # input's rank, so the (zero) gradient still depends on g as torch's does
        empty = (0,) * len(shape)
        idx, g = idx.reshape(empty), g.reshape(empty)
    # indices were checked by the forward: the primitive directly, without the public checks
    return SCATTER_ADD.call(zeros(shape, dtype=g.dtype), idx, g, params=(ctx._params, "add")), \
        None


def gather(input, dim, index, *, sparse_grad=False):
    x = as_tensor_arg(input)
    if isinstance(index, Tensor) and index._data.size == 0 and \
            index._data.dtype not in (np.int64, np.int32):
        index = index.to(_dtype.int64)  # torch accepts an empty index of any dtype
    _check_index(index, "gather")
    if index._data.ndim != x._data.ndim and index._data.size and x._data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = wrap_dim(dim, x._data.ndim)
    out = GATHER.call(x, index, params=d)
    return out


def take_along_dim(input, indices, dim=None):
    x = as_tensor_arg(input)
    if dim is not None and x._data.ndim == 0:
        raise IndexError(f"Dimension specified as {wrap_dim(dim, 0)} but tensor has no "
                         "dimensions")
    if dim is None:
        return gather(x.reshape(-1), 0, indices.reshape(-1))
    d = wrap_dim(dim, x._data.ndim)
    shape = list(np.broadcast_shapes(x._data.shape[:d] + (1,) + x._data.shape[d + 1:],
                                     indices._data.shape[:d] + (1,) + indices._data.shape[d + 1:]))
    xs = list(shape)
    xs[d] = x._data.shape[d]
    ish = list(shape)
    ish[d] = indices._data.shape[d]
    if x._data.shape[d] and indices._data.size:
        # torch 2.13 reduces the indices modulo the size along `dim` (negative ones count from
        # the end; it raises no out-of-range error here), unlike gather and dim=None.
        indices = indices.remainder(x._data.shape[d])
    return gather(x.expand(xs), d, indices.expand(ish))


def _scatter_idx(idx, dim):
    grids = np.indices(idx.shape, sparse=True)
    full = list(grids)
    full[dim] = idx
    return tuple(full)


def _scatter_fwd(x, idx, src, p):
    dim, reduce = p
    if x.ndim == 0:  # a 0-d tensor scatters like a 1-element vector
        s = np.asarray(src)
        return _scatter_fwd(x.reshape(1), idx.reshape(-1), s.reshape(-1) if s.ndim else s,
                            (0, reduce)).reshape(())
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
# Not flagged linear: writing a constant is affine (forward mode derives its rule from the VJP).
SCATTER_VALUE = primitive("scatter_value", lambda x, idx, p: _scatter_fwd(x, idx, p[2], p[:2]),
                          "ScatterBackward1", save=((1, None),))
# torch has no derivative for scatter with a `reduce` argument: the node exists and raises.
SCATTER_REDUCE_ARG = primitive("scatter_reduce_arg", _scatter_fwd, "NotImplemented")
SCATTER_ADD = primitive("scatter_add", _scatter_fwd, save=((1, None),), linear=True)


@SCATTER_REDUCE_ARG.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::scatter is not implemented")


@SCATTER.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim, _ = ctx._params
    n = ctx._next
    gx = scatter(g, dim, idx, 0.0) if n[0] else None
    gs = g.gather(dim, idx) if len(n) > 2 and n[2] else None
    return gx, None, gs


@SCATTER_VALUE.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    return scatter(g, ctx._params[0], idx, 0.0), None


@SCATTER_ADD.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim, _ = ctx._params
    n = ctx._next
    return (g if n[0] else None), None, (g.gather(dim, idx) if n[2] else None)


def _check_scatter_args(x, dim, index, src, name):
    _check_index(index, name)
    nd = x._data.ndim
    d = wrap_dim(dim, nd)
    ind = index._data
    if ind.ndim != builtins.max(nd, 0) and not (nd == 0 and ind.ndim <= 1) and ind.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if isinstance(src, Tensor) and src._data.ndim != ind.ndim and ind.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if ind.size:
        sizes_decide()  # index sizes against self's and src's
        for k in range(ind.ndim):
            if k != d and nd and ind.shape[k] > x._data.shape[k]:
                raise RuntimeError(f"Expected index {list(ind.shape)} to be no larger than self "
                                   f"{list(x._data.shape)} apart from dimension {d}" +
                                   (f" and to be no larger size than src "
                                    f"{list(src._data.shape)}" if isinstance(src, Tensor)
                                    else ""))
            if isinstance(src, Tensor) and ind.shape[k] > src._data.shape[k]:
                raise RuntimeError(f"Expected index {list(ind.shape)} to be no larger than self "
                                   f"{list(x._data.shape)} apart from dimension {d} and to be no "
                                   f"larger size than src {list(src._data.shape)}")
        size = x._data.shape[d] if nd else 1
        if ind.max() >= size or ind.min() < 0:  # gather/scatter take no negative indices
            bad = ind[(ind >= size) | (ind < 0)].flat[0]
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return d


def _scatter_op(x, d, index, src, value, reduce, name):
    if src is None:
        src = value
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            import warnings
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                          "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                          "instead for more reduction options.", UserWarning, stacklevel=3)
        return SCATTER_REDUCE_ARG, (x, index, src), (d, reduce)
    if isinstance(src, Tensor):
        if src._data.dtype != x._data.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        return SCATTER, (x, index, src), (d, None)
    return SCATTER_VALUE, (x, index), (d, None, src)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """Write `src` (a tensor, or a number `value`) into a copy of `input` at `index` along
    `dim`; ``reduce="add"/"multiply"`` combines instead of overwriting."""
    x = as_tensor_arg(input)
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    d = _check_scatter_args(x, dim, index, src, "scatter")
    op, args, p = _scatter_op(x, d, index, src, value, reduce, "scatter")
    return op.call(*args, params=p)


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    d = _check_scatter_args(self, dim, index, src, "scatter_")
    op, args, p = _scatter_op(self, d, index, src, value, reduce, "scatter_")
    return apply_inplace(op, *args, params=p)


def scatter_add(input, dim, index, src):
    """Add `src` into a copy of `input` at `index` along `dim` (repeated indices accumulate)."""
    x = as_tensor_arg(input)
    d = _check_scatter_args(x, dim, index, src, "scatter")
    return SCATTER_ADD.call(x, index, src, params=(d, "add"))


def scatter_add_(self, dim, index, src):
    d = _check_scatter_args(self, dim, index, src, "scatter")
    return apply_inplace(SCATTER_ADD, self, index, src, params=(d, "add"))


_REDUCE_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _scatter_reduce_fwd(x, idx, src, p):
    dim, reduce, include_self = p
    out = x.copy()
    full = _scatter_idx(idx, dim)
    s = src[tuple(slice(0, n) for n in idx.shape)].astype(x.dtype, copy=False)
    if not include_self:
        if reduce in _REDUCE_IDENTITY:
            ident = _REDUCE_IDENTITY[reduce]
        elif x.dtype.kind == "f":
            ident = -np.inf if reduce == "amax" else np.inf
        elif x.dtype.kind == "b":
            ident = reduce != "amax"
        else:
            info = np.iinfo(x.dtype)
            ident = info.min if reduce == "amax" else info.max
        out[full] = ident
    if reduce in ("sum", "mean"):
        np.add.at(out, full, s)
    elif reduce == "prod":
        np.multiply.at(out, full, s)
    elif reduce == "amax":
        np.maximum.at(out, full, s)
    else:
        np.minimum.at(out, full, s)
    if reduce == "mean":
        cnt = np.ones(x.shape, np.int64)
        if not include_self:
            cnt[full] = 0
        np.add.at(cnt, full, 1)
        cnt = np.maximum(cnt, 1)
        out = out // cnt.astype(x.dtype) if x.dtype.kind in "iu" else out / cnt.astype(x.dtype)
    return out


SCATTER_REDUCE = primitive("scatter_reduce", _scatter_reduce_fwd,
                           save=((0, None), (1, None), (2, None), ("out", None)))


@SCATTER_REDUCE.def_vjp
def _(ctx, g):
    """torch's scatter_reduce_backward (ties of amax/amin share the gradient evenly)."""
    x, idx, src, out = ctx.saved
    dim, reduce, include_self = ctx._params
    if reduce == "sum":
        gx, gs = g, g.gather(dim, idx)
    elif reduce == "mean":
        n = ones_like(g) if include_self else zeros_like(g)
        n = n.scatter_add(dim, idx, ones_like(src))
        n = where(n == 0, 1.0, n)
        gx = g / n
        gs = g.gather(dim, idx) / n.gather(dim, idx)
    elif reduce == "prod":
        masked_x = where(x == 0, 1.0, x).to(x.dtype)
        masked_res = masked_x.scatter_reduce(dim, idx, src, "prod", include_self=include_self)
        gx = g * masked_res / masked_x
        src_zero = src == 0
        nzeros = zeros_like(x).scatter_add(dim, idx, src_zero.to(x.dtype)).gather(dim, idx)
        single = src_zero & (nzeros == 1)
        masked_src = where(single, 1.0, src).to(src.dtype)
        masked_src_res = x.scatter_reduce(dim, idx, masked_src, "prod",
                                          include_self=include_self)
        gs = where(single, (g * masked_src_res).gather(dim, idx),
                   (g * out).gather(dim, idx) / where(src_zero, 1.0, src))
    else:
        value = out.gather(dim, idx)
        x_is = (x == out).to(x.dtype)
        s_is = (src == value).to(x.dtype)
        share = g / x_is.scatter_add(dim, idx, s_is)
        gx = x_is * share
        gs = s_is * share.gather(dim, idx)
    if not include_self:
        gx = gx.scatter(dim, idx, 0.0)
    n = ctx._next
    return (gx if n[0] else None), None, (gs if n[2] else None)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce `src` into a copy of `input` at `index` along `dim` with "sum", "prod", "mean",
    "amax" or "amin" (`include_self`: whether `input`'s own values take part)."""
    x = as_tensor_arg(input)
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d = _check_scatter_args(x, dim, index, src, "scatter_reduce")
    if src._data.dtype != x._data.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    if reduce == "mean" and x._data.dtype == np.bool_:
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented "
                                  "for 'Bool'")
    return SCATTER_REDUCE.call(x, index, src, params=(d, reduce, bool(include_self)))


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    d = _check_scatter_args(self, dim, index, src, "scatter_reduce_")
    return apply_inplace(SCATTER_REDUCE, self, index, src, params=(d, reduce, bool(include_self)))


def _index_select_fwd(x, idx, dim):
    if x.ndim == 0:
        return x.copy()
    return np.take(x, idx, axis=dim)


INDEX_SELECT = primitive("index_select", _index_select_fwd, save=((1, None),), linear=True)
record_input_shape(INDEX_SELECT)


@INDEX_SELECT.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim = ctx._params
    shape = ctx._shape
    if len(shape) == 0:
        return g.reshape(()), None
    return index_add(zeros(shape, dtype=g.dtype), dim, idx, g), None


def index_select(input, dim, index):
    x = as_tensor_arg(input)
    if not isinstance(index, Tensor) or index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0 and index._data.size != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{index._data.size} value(s)")
    size = x._data.shape[d] if x._data.ndim else 1
    ind = index._data
    if ind.size and (ind.max() >= size or ind.min() < 0):
        bad = ind[(ind >= size) | (ind < 0)].flat[0]
        if d == 1 and x._data.ndim > 1:
            # torch's dim-1 kernel words it differently
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                               f"axis_dim={size}")
        raise IndexError("index out of range in self")
    if x._data.ndim == 0:
        if index._data.size != 1:
            raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                               f"{index._data.size} value(s)")
        return INDEX_SELECT.call(x, index.reshape(-1), params=d)
    return INDEX_SELECT.call(x, index.reshape(-1), params=d)


def _index_add_fwd(x, idx, src, p):
    dim, alpha = p
    if x.ndim == 0:  # a 0-d tensor adds like a 1-element vector
        return _index_add_fwd(x.reshape(1), idx.reshape(-1), np.asarray(src).reshape(-1),
                              (0, alpha)).reshape(())
    if np.asarray(src).size == 0:
        return x.copy()
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


def _check_same_type(x, src, name):
    if src._data.dtype != x._data.dtype:
        raise RuntimeError(f"{name}(): self ({_legacy(x._data.dtype)}) and source "
                           f"({_legacy(src._data.dtype)}) must have the same scalar type")


def _check_nonneg_index(index, x, d, exc, prefix=""):
    size = x._data.shape[d] if x._data.ndim else 1
    ind = index._data
    if ind.size and (ind.max() >= size or ind.min() < 0):
        bad = ind[(ind >= size) | (ind < 0)].flat[0]
        raise exc(f"{prefix}index {bad} is out of bounds for dimension {d} with size {size}")


def _check_index_add_shapes(x, d, index, source):
    xs, ss, n = list(x._data.shape), list(source._data.shape), index._data.size
    if x._data.ndim == 0:
        if ss:
            raise RuntimeError("source tensor shape must match self tensor shape, excluding "
                               f"the specified dimension. Got self.shape = [] source.shape = "
                               f"{ss}")
        if n != 1:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        return
    if len(ss) == len(xs) and ss[d] != n:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({ss[d]}), for dim: {d}")
    if len(ss) != len(xs) or any(a != b for i, (a, b) in enumerate(zip(xs, ss)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {xs} source.shape = {ss}")


def index_add(input, dim, index, source, *, alpha=1):
    x = as_tensor_arg(input)
    source = as_tensor_arg(source)
    _check_same_type(x, source, "index_add_")
    d = wrap_dim(dim, x._data.ndim)
    _check_index_add_shapes(x, d, index, source)
    if source._data.size:  # torch checks indices only when something is added
        if x._data.ndim == 1:  # torch's 1-d kernel words it differently
            ind, size = index._data, x._data.shape[0]
            if ind.size and (ind.max() >= size or ind.min() < 0):
                raise IndexError("index out of range in self")
        _check_nonneg_index(index, x, d, RuntimeError)
    return INDEX_ADD.call(x, index, source, params=(d, alpha))


def index_add_(self, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, self._data.ndim)
    source = as_tensor_arg(source)
    _check_same_type(self, source, "index_add_")
    _check_index_add_shapes(self, d, index, source)
    if source._data.size and self._data.ndim == 1:  # torch's 1-d kernel words it differently
        ind, size = index._data, self._data.shape[0]
        if ind.size and (ind.max() >= size or ind.min() < 0):
            raise IndexError("index out of range in self")
    _check_nonneg_index(index, self, d, RuntimeError)
    return apply_inplace(INDEX_ADD, self, index, source, params=(d, alpha))


def nonzero(input, *, as_tuple=False):
    x = as_tensor_arg(input)
    if is_batched(x):
        raise RuntimeError(
            "Batching rule not implemented for aten::nonzero_numpy. We could not generate a "
            "fallback." if as_tuple else
            "vmap: We do not support batching operators that can output dynamic shape. "
            "Attempted to vmap over aten::nonzero. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")
    nz = np.nonzero(x._data) if x._data.ndim else np.nonzero(x._data.reshape(1))
    if as_tuple:
        return tuple(wrap(np.asarray(a, np.int64)) for a in nz)
    if x._data.ndim == 0:
        return wrap(np.zeros((len(nz[0]), 0), np.int64))
    return wrap(np.stack(nz, axis=1).astype(np.int64) if nz else
                np.zeros((0, 0), np.int64))



def argwhere(input):
    return nonzero(input)


# --------------------------------------------------------------------------- index_copy / fill
def _check_index_vector(index, x, d, name):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        if name == "index_fill":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        got = _legacy(index._data.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name}_(): Expected a long tensor for index, but got {got}")
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if name == "index_copy":
        _check_nonneg_index(index, x, d, IndexError, "index_copy_(): ")
        return
    size = x._data.shape[d] if x._data.ndim else 1
    ind = index._data
    if ind.size and (ind.max() >= size or ind.min() < -size):
        bad = ind[(ind >= size) | (ind < -size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _index_copy_fwd(x, idx, src, dim):
    out = x.copy()
    moved = np.moveaxis(out, dim, 0) if out.ndim else out.reshape(1)
    s = np.moveaxis(np.asarray(src, dtype=x.dtype), dim, 0) if out.ndim and src.ndim else \
        src.reshape(-1)
    moved[idx.reshape(-1)] = s
    return out


INDEX_COPY = primitive("index_copy", _index_copy_fwd, save=((1, None),), linear=True)


@INDEX_COPY.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim = ctx._params
    n = ctx._next
    gx = index_fill(g, dim, idx, 0.0) if n[0] else None
    gs = g.index_select(dim, idx) if n[2] else None
    return gx, None, gs


def _check_index_copy(x, d, index, src):
    """torch's checks of index_copy's shapes and dtypes, in torch's order."""
    xs, ss, n = x._data.shape, src._data.shape, index._data.size
    if xs and ss and len(xs) != len(ss):
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({len(ss)}), "
                         f"destination dimensionality ({len(xs)})")
    if not ss and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if ss and xs and n != ss[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({ss[d]})")
    if src._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_legacy(x._data.dtype)} and (source) "
                           f"{_legacy(src._data.dtype)}")
    if xs:
        x_slice, s_slice = xs[:d] + xs[d + 1:], ss[:d] + ss[d + 1:]
        if x_slice != s_slice:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {' '.join(map(str, x_slice))} at dimension {d} and "
                f"source slice shape: {' '.join(map(str, s_slice))} at dimension 0.")


def index_copy(input, dim, index, source):
    """A copy of `input` whose slices at `index` along `dim` are replaced by `source`'s."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    _check_index_vector(index, x, d, "index_copy")
    src = as_tensor_arg(source)
    _check_index_copy(x, d, index, src)
    return INDEX_COPY.call(x, index, src, params=d)


def index_copy_(self, dim, index, source):
    d = wrap_dim(dim, self._data.ndim)
    _check_index_vector(index, self, d, "index_copy")
    src = as_tensor_arg(source)
    _check_index_copy(self, d, index, src)
    return apply_inplace(INDEX_COPY, self, index, src, params=d)


def _index_fill_fwd(x, idx, p):
    dim, value = p
    out = x.copy()
    moved = np.moveaxis(out, dim, 0) if out.ndim else out.reshape(1)
    moved[idx.reshape(-1)] = value
    return out


INDEX_FILL = primitive("index_fill", _index_fill_fwd, save=((1, None),))  # affine
INDEX_FILL_T = primitive("index_fill_tensor",
                         lambda x, idx, v, dim: _index_fill_fwd(x, idx, (dim, v)),
                         "IndexFillBackward1", save=((1, None),), linear=True)


@INDEX_FILL.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    return index_fill(g, ctx._params[0], idx, 0.0), None


@INDEX_FILL_T.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    dim = ctx._params
    n = ctx._next
    gx = index_fill(g, dim, idx, 0.0) if n[0] else None
    gv = None
    if n[2]:
        # a repeated index fills once, so it counts once (torch uses the unique indices)
        uniq = wrap(np.unique(idx._data.reshape(-1) % (g._data.shape[dim] if g._data.ndim
                                                       else 1)))
        gv = (g.index_select(dim, uniq) if g._data.ndim else g).sum()
    return gx, None, gv


def index_fill(input, dim, index, value):
    """A copy of `input` with the slices at `index` along `dim` set to `value` (a number or a
    0-d tensor, which then gets a gradient)."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    _check_index_vector(index, x, d, "index_fill")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        v = value if value._data.dtype == x._data.dtype else value.to(x.dtype)
        return INDEX_FILL_T.call(x, index, v, params=d)
    return INDEX_FILL.call(x, index, params=(d, value))


def index_fill_(self, dim, index, value):
    d = wrap_dim(dim, self._data.ndim)
    _check_index_vector(index, self, d, "index_fill")
    if isinstance(value, Tensor):
        v = value if value._data.dtype == self._data.dtype else value.to(self.dtype)
        return apply_inplace(INDEX_FILL_T, self, index, v, params=d)
    return apply_inplace(INDEX_FILL, self, index, params=(d, value))


# --------------------------------------------------------------------------- masked ops
def _sum_to(g, shape):
    if tuple(g._data.shape) == tuple(shape):
        return g
    return sum_to(g, tuple(shape))


MASKED_FILL_T = primitive("masked_fill_tensor", lambda x, m, v, p: np.where(m, v.astype(x.dtype),
                                                                            x),
                          "MaskedFillBackward1", save=((1, None),), linear=True)


@MASKED_FILL_T.def_vjp
def _(ctx, g):
    (mask,) = ctx.saved
    n = ctx._next
    gx = _sum_to(where(mask, 0.0, g), _extra_shape(ctx, g)) if n[0] else None
    gv = where(mask, g, 0.0).sum() if n[2] else None
    return gx, None, gv


def _masked_select_fwd(x, m, p):
    xb, mb = np.broadcast_arrays(x, m)
    return xb[mb]


MASKED_SELECT = primitive("masked_select", _masked_select_fwd, save=((1, None),), linear=True)
record_input_shape(MASKED_SELECT)


@MASKED_SELECT.def_vjp
def _(ctx, g):
    (mask,) = ctx.saved
    shape = ctx._shape
    full = tuple(np.broadcast_shapes(shape, mask._data.shape))
    z = zeros(full, dtype=g.dtype)
    return _sum_to(masked_scatter(z, mask, g), shape), None


def _bool_mask(mask, name):
    m = as_tensor_arg(mask)
    if m._data.dtype != np.bool_:
        if name == "masked_scatter_":
            raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                               f"dtype {_legacy(m._data.dtype)}")
        raise RuntimeError(f"{name}: expected BoolTensor for mask")
    return m


def masked_select(input, mask):
    """The elements of `input` where `mask` (broadcast together) is True, as a 1-d tensor."""
    x = as_tensor_arg(input)
    m = _bool_mask(mask, "masked_select")
    try:
        np.broadcast_shapes(x._data.shape, m._data.shape)
    except ValueError:
        raise _broadcast_error(m._data, x._data) from None
    out = MASKED_SELECT.call(x, m)
    return out


def _masked_scatter_fwd(x, m, src, p):
    shape = np.broadcast_shapes(x.shape, m.shape)
    out = np.array(np.broadcast_to(x, shape))
    mb = np.broadcast_to(m, shape)
    n = int(mb.sum())
    out[mb] = src.reshape(-1)[:n]
    return out


MASKED_SCATTER = primitive("masked_scatter", _masked_scatter_fwd, save=((1, None),),
                           linear=True)


@MASKED_SCATTER.def_vjp
def _(ctx, g):
    (mask,) = ctx.saved
    sshape = ctx._params
    xshape = _extra_shape(ctx, g)
    n = ctx._next
    gx = _sum_to(where(mask, 0.0, g), xshape) if n[0] else None
    gs = None
    if n[2]:
        sel = masked_select(g, mask)
        total = int(np.prod(sshape))
        extra = total - sel._data.size
        if extra > 0:
            sel = cat([sel, zeros(extra, dtype=g.dtype)])
        gs = sel.view(sshape)
    return gx, None, gs


def masked_scatter(input, mask, source):
    """A copy of `input` whose positions where `mask` is True take `source`'s elements in
    order."""
    x = as_tensor_arg(input)
    m = _bool_mask(mask, "masked_scatter_")
    src = as_tensor_arg(source)
    if src._data.dtype != x._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_legacy(x._data.dtype)} and {_legacy(src._data.dtype)}")
    need = int(np.broadcast_to(m._data, np.broadcast_shapes(x._data.shape,
                                                            m._data.shape)).sum())
    if src._data.size < need:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           "as the ones in mask")
    out = MASKED_SCATTER.call(x, m, src, params=src._data.shape)
    if out._grad_fn is not None:
        out._grad_fn._shape = x._data.shape
    return out


def masked_scatter_(self, mask, source):
    m = _bool_mask(mask, "masked_scatter_")
    src = as_tensor_arg(source)
    need = int(m.expand(self._data.shape)._data.sum())    # torch's error when it cannot
    if src._data.size < need:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply_inplace(MASKED_SCATTER, self, m, src, params=src._data.shape)


# --------------------------------------------------------------------------- take
def _take_fwd(x, idx, p):
    flat = x.reshape(-1)
    n = flat.size
    if n == 0 and idx.size:
        raise IndexError("take(): tried to take from an empty tensor")
    if idx.size and (idx.max() >= n or idx.min() < -n):
        bad = idx[(idx >= n) | (idx < -n)].flat[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    return flat[idx]


TAKE = primitive("take", _take_fwd, save=((1, None),), linear=True)
record_input_shape(TAKE)


@TAKE.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    shape = ctx._shape
    n = int(np.prod(shape))
    z = zeros(n, dtype=g.dtype)
    flat_idx = (idx._data.reshape(-1) % builtins.max(n, 1),)
    return INDEX_PUT.call(z, g.reshape(-1), params=(flat_idx, True)).view(shape), None


def take(input, index):
    """Elements of the flattened `input` at `index` (the result has `index`'s shape)."""
    x = as_tensor_arg(input)
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        got = _legacy(index._data.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    out = TAKE.call(x, index)
    return out


# --------------------------------------------------------------------------- put
def _put_fwd(x, idx, src, p):
    accumulate = p[0]
    out = x.copy()
    flat = out.reshape(-1)
    n = flat.size
    ind = idx.reshape(-1)
    if ind.size and (ind.max() >= n or ind.min() < -n):
        bad = ind[(ind >= n) | (ind < -n)].flat[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    if accumulate:
        np.add.at(flat, ind, src.reshape(-1))
    else:
        flat[ind] = src.reshape(-1)
    return out


PUT = primitive("put", _put_fwd, save=((1, None),), linear=True)


@PUT.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    n = ctx._next
    gx = gs = None
    accumulate, src_shape = ctx._params
    if n[0]:
        gx = g if accumulate else put(g, idx, g.new_zeros(idx.shape), False)
    if n[2]:
        gs = g.take(idx).reshape(src_shape)
    return gx, None, gs


def _check_put(x, index, source):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        got = _legacy(index._data.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {got}")
    if source._data.size != index._data.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {index._data.size}")
    if source._data.dtype != x._data.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_legacy(x._data.dtype)} and source.dtype = "
                           f"{_legacy(source._data.dtype)}")


def put(input, index, source, accumulate=False):
    """A copy of `input` whose elements at the flat positions `index` are `source`'s (added to
    them with `accumulate`)."""
    x = as_tensor_arg(input)
    src = as_tensor_arg(source)
    _check_put(x, index, src)
    return PUT.call(x, index, src, params=(bool(accumulate), src._data.shape))


def put_(self, index, source, accumulate=False):
    src = as_tensor_arg(source)
    _check_put(self, index, src)
    return apply_inplace(PUT, self, index, src, params=(bool(accumulate), src._data.shape))


# In-place variants as Tensor methods (the functions in __all__ are bound by methods.py, which
# imports this module, so binding through it here would be circular).
for _name, _fn in (("scatter_reduce_", scatter_reduce_), ("index_copy_", index_copy_),
                   ("index_fill_", index_fill_), ("masked_scatter_", masked_scatter_),
                   ("put_", put_)):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _fn)
