"""Joins and splits: cat/concat/concatenate and stack (with h/v/d/column_stack, row_stack and
the atleast_Nd views they build on), cartesian_prod, and the multi-output views unbind/split/
chunk with tensor_split and h/v/dsplit.

Every split part is a view of its input (sharing memory, version counter and ``_base``); the
joins copy. A split's backward joins the part gradients (zeros for parts without one), a join's
backward splits its gradient.
"""

import builtins

import numpy as np

from .. import _dtype
from .arguments import wrap_dim
from .registry import record_input_shape
from .registry import as_tensor_arg, primitive, reads_values
from .shape import SLICE, _no_dims, _tensors_arg, meshgrid, slice_dim
from .._creation import zeros
from .arguments import _out
from .._tensor import Tensor
from .vmap_helpers import to_batched

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "cartesian_prod",
    "cat",
    "chunk",
    "column_stack",
    "concat",
    "concatenate",
    "dsplit",
    "dstack",
    "hsplit",
    "hstack",
    "row_stack",
    "split",
    "stack",
    "tensor_split",
    "unbind",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "vsplit",
    "vstack",
]


# --------------------------------------------------------------------------- unbind / split
def _unbind_fwd(x, dim):
    # The trailing Ellipsis keeps 0-d results views of x (NumPy returns copied scalars without).
    return tuple(x[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim]))


def _split_fwd(x, p):
    dim, bounds = p
    return tuple(x[(slice(None),) * dim + (slice(a, b),)] for a, b in bounds)


UNBIND = primitive("unbind", _unbind_fwd, view=True, n_out=2, linear=True)
SPLIT = primitive("split", _split_fwd, view=True, n_out=2, linear=True)
SPLIT_WITH_SIZES = primitive("split_with_sizes", _split_fwd, view=True, n_out=2, linear=True)
# torch's unsafe_split*: the same parts, sharing memory with the input, but not autograd views
# (each has its own version counter and may be written in place, at the caller's risk).
UNSAFE_SPLIT = primitive("unsafe_split", _split_fwd, n_out=2, linear=True)
UNSAFE_SPLIT_WITH_SIZES = primitive("unsafe_split_with_sizes", _split_fwd, n_out=2,
                                    linear=True)


def _materialize(gs, like_shapes, dtype):
    return [g if g is not None else zeros(s, dtype=dtype) for g, s in zip(gs, like_shapes)]


@UNBIND.def_vjp
def _(ctx, gs):
    dim = ctx._params
    shape = ctx._shape
    gs = list(gs) + [None] * (shape[dim] - len(gs))
    dtype = next(g for g in gs if g is not None).dtype
    part = shape[:dim] + shape[dim + 1:]
    return (stack(_materialize(gs, [part] * len(gs), dtype), dim),)


@UNBIND.def_batched_vjp
def _(ctx, gs):
    dim = ctx._params
    shape = tuple(ctx._shape)
    ref = next(g for g in gs if g is not None)
    part = (ref._data.shape[0],) + shape[:dim] + shape[dim + 1:]
    gs = list(gs) + [None] * (shape[dim] - len(gs))
    return (stack(_materialize(gs, [part] * len(gs), ref.dtype), 1 + dim),)


def _split_vjp(ctx, gs):
    dim, bounds = ctx._params
    shape = ctx._shape
    gs = list(gs) + [None] * (len(bounds) - len(gs))
    dtype = next(g for g in gs if g is not None).dtype
    shapes = [shape[:dim] + (b - a,) + shape[dim + 1:] for a, b in bounds]
    return (cat(_materialize(gs, shapes, dtype), dim),)


for _op in (SPLIT, SPLIT_WITH_SIZES, UNSAFE_SPLIT, UNSAFE_SPLIT_WITH_SIZES):
    _op.def_vjp(_split_vjp)
record_input_shape(UNBIND, SPLIT, SPLIT_WITH_SIZES, UNSAFE_SPLIT, UNSAFE_SPLIT_WITH_SIZES)
UNBIND.def_vmap(lambda batched, d, x: UNBIND.call(x, params=d + 1))
for _op in (SPLIT, SPLIT_WITH_SIZES, UNSAFE_SPLIT, UNSAFE_SPLIT_WITH_SIZES):
    _op.def_vmap(lambda batched, p, x, _op=_op: _op.call(x, params=(p[0] + 1, p[1])))


def _multi(op, x, p, n):
    # The number of outputs varies per call; the node learns it from the params.
    return op.call(x, params=p)


def unbind(input, dim=0):
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    if x._data.ndim == 0:
        raise _no_dims(x, d)
    if x._data.shape[d] == 0:
        return ()
    return tuple(_multi(UNBIND, x, d, x._data.shape[d]))


def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    """Views of `size`-long parts (the last may be shorter), or of the given sizes, along
    `dim` (``Tensor.split`` spells the size argument ``split_size``)."""
    if split_size_or_sections is None:
        split_size_or_sections = split_size
    return _split(tensor, split_size_or_sections, dim, (SPLIT, SPLIT_WITH_SIZES))


def unsafe_split(tensor, split_size, dim=0):
    """``split`` whose parts are not views (torch's ``UnsafeSplitBackward0``)."""
    return _split(tensor, split_size, dim, (UNSAFE_SPLIT, UNSAFE_SPLIT_WITH_SIZES))


def unsafe_split_with_sizes(tensor, split_sizes, dim=0):
    return _split(tensor, list(split_sizes), dim, (UNSAFE_SPLIT, UNSAFE_SPLIT_WITH_SIZES))


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose parts are not views."""
    return _chunk(input, chunks, dim, (UNSAFE_SPLIT, UNSAFE_SPLIT_WITH_SIZES))


def _split(tensor, split_size_or_sections, dim, ops):
    x = as_tensor_arg(tensor)
    if x._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size > 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        bounds = [(i, builtins.min(i + step, size)) for i in range(0, size, step)] or [(0, 0)]
        op = ops[0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
        bounds, a = [], 0
        for s in sizes:
            bounds.append((a, a + s))
            a += s
        op = ops[1]
    return tuple(_multi(op, x, (d, tuple(bounds)), len(bounds)))


def chunk(input, chunks, dim=0):
    return _chunk(input, chunks, dim, (SPLIT, SPLIT_WITH_SIZES))


def _chunk(input, chunks, dim, ops):
    x = as_tensor_arg(input)
    if x._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d]
    if size == 0:
        return _split(x, [0] * chunks, d, ops)
    step = -(-size // chunks)
    return _split(x, step, d, ops)


# --------------------------------------------------------------------------- cat / stack
def _cat_fwd(*arrays):
    *arrays, dim = arrays
    return np.concatenate(arrays, axis=dim)


CAT = primitive("cat", _cat_fwd, linear=True)


@CAT.def_vjp
def _(ctx, g):
    dim = ctx._params
    sizes = ctx._extra["sizes"]
    out, a = [], 0
    for s, e in zip(sizes, ctx._next):
        # narrow's slice, without its range check (in range by construction; the sizes may
        # be symbolic in a dynamic trace: see _compile/symbolic.py)
        out.append(SLICE.call(g, params=(dim, a, a + s, 1)) if e is not None else None)
        a += s
    return tuple(out)


@CAT.def_batched_vjp
def _(ctx, g):
    dim = 1 + ctx._params
    out, a = [], 0
    for size, e in zip(ctx._extra["sizes"], ctx._next):
        out.append(g.narrow(dim, a, size) if e is not None else None)
        a += size
    return tuple(out)


CAT.def_vmap(lambda batched, d, *xs: cat(to_batched(batched, xs), d + 1))


def cat(tensors, dim=0, *, out=None, axis=None):
    """Concatenate along `dim` (``axis`` as NumPy); 1-d empty tensors are skipped, as in
    torch."""
    if axis is not None:
        dim = axis
    ts = [as_tensor_arg(t) for t in tensors]
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(ts):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    keep = [t for t in ts if not (t._data.ndim == 1 and t._data.shape[0] == 0)] or ts[:1]
    ref = keep[0]
    nd = ref._data.ndim
    d = wrap_dim(dim, nd)
    # the skipped empty tensors take part in the result's dtype, as in torch
    dt = _dtype.result_type_of([_dtype.from_np(t._data.dtype) for t in ts], [], []).np
    for i, t in enumerate(keep):
        if t._data.ndim != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{t._data.ndim}")
        for k in range(nd):
            if k != d and t._data.shape[k] != ref._data.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._data.shape[k]} but got size "
                                   f"{t._data.shape[k]} for tensor number {i} in the list.")
    keep = [t if t._data.dtype == dt else t.to(_dtype.from_np(dt)) for t in keep]
    res = CAT.call(*keep, params=d)
    if res._grad_fn is not None:
        res._grad_fn._extras()["sizes"] = [t._data.shape[d] for t in keep]
    if out is not None:
        return _out(res, out)
    return res


concat = concatenate = cat


def _stack_fwd(*arrays):
    *arrays, dim = arrays
    return np.stack(arrays, axis=dim)


STACK = primitive("stack", _stack_fwd, linear=True)


@STACK.def_vjp
def _(ctx, g):
    parts = g.unbind(ctx._params)
    return tuple(p if e is not None else None for p, e in zip(parts, ctx._next))


@STACK.def_batched_vjp
def _(ctx, g):
    parts = g.unbind(1 + ctx._params)
    return tuple(p if e is not None else None for p, e in zip(parts, ctx._next))


STACK.def_vmap(lambda batched, d, *xs: stack(to_batched(batched, xs), d + 1))


def stack(tensors, dim=0, *, out=None, axis=None):
    """Join equally shaped tensors along a new dim (StackBackward0)."""
    if axis is not None:
        dim = axis
    ts = [as_tensor_arg(t) for t in tensors]
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = ts[0]._data.shape
    for i, t in enumerate(ts):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t._data.shape)} at entry {i}")
    d = wrap_dim(dim, len(shape) + 1)
    dt = _dtype.result_type_of([_dtype.from_np(t._data.dtype) for t in ts], [], []).np
    ts = [t if t._data.dtype == dt else t.to(_dtype.from_np(dt)) for t in ts]
    res = STACK.call(*ts, params=d)
    if out is not None:
        return _out(res, out)
    return res


# --------------------------------------------------------------------------- joins built on cat
def atleast_1d(*tensors):
    """Views with at least one dim (a tuple when given several tensors or a sequence)."""
    ts, many = _tensors_arg(tensors)
    out = [as_tensor_arg(t) for t in ts]
    out = [t.reshape(1) if t._data.ndim == 0 else t for t in out]
    return tuple(out) if many else out[0]


def atleast_2d(*tensors):
    ts, many = _tensors_arg(tensors)
    out = []
    for t in ts:
        t = as_tensor_arg(t)
        nd = t._data.ndim
        out.append(t.reshape(1, 1) if nd == 0 else t.unsqueeze(0) if nd == 1 else t)
    return tuple(out) if many else out[0]


def atleast_3d(*tensors):
    ts, many = _tensors_arg(tensors)
    out = []
    for t in ts:
        t = as_tensor_arg(t)
        nd = t._data.ndim
        if nd == 0:
            t = t.reshape(1, 1, 1)
        elif nd == 1:
            t = t.unsqueeze(0).unsqueeze(-1)
        elif nd == 2:
            t = t.unsqueeze(-1)
        out.append(t)
    return tuple(out) if many else out[0]


def _check_seq(tensors, name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors, *, out=None):
    """Concatenate horizontally: along dim 0 for 1-d tensors, else dim 1."""
    _check_seq(tensors, "hstack")
    ts = atleast_1d(list(tensors))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Concatenate vertically (1-d tensors become rows)."""
    _check_seq(tensors, "vstack")
    return cat(atleast_2d(list(tensors)), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """Concatenate along the third dim (after making every tensor at least 3-d)."""
    _check_seq(tensors, "dstack")
    return cat(atleast_3d(list(tensors)), 2, out=out)


def column_stack(tensors, *, out=None):
    """1-d (or 0-d) tensors become columns, then everything is joined along dim 1."""
    _check_seq(tensors, "column_stack")
    ts = []
    for t in tensors:
        t = as_tensor_arg(t)
        ts.append(t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t)
    return cat(ts, 1, out=out)


# --------------------------------------------------------------------------- splits
def tensor_split(input, indices_or_sections, dim=0):
    """Views splitting `input` into n near-equal parts, or at the given indices (numpy's
    array_split); each part is a SliceBackward0 view."""
    x = as_tensor_arg(input)
    nd = x._data.ndim
    if nd == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a "
                           f"tensor with {nd} dims")
    d = wrap_dim(dim, nd)
    size = x._data.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios._data.dtype.kind not in "iu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               f"integral dtype, but got {ios.dtype}")
        if ios._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios._data.ndim} dims")
        reads_values("tensor_split's indices or sections")
        ios = int(ios._data) if ios._data.ndim == 0 else ios._data.tolist()
    if isinstance(ios, int):
        n = ios
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds, a = [], 0
        for i in range(n):
            b = a + q + (1 if i < r else 0)
            bounds.append((a, b))
            a = b
    else:
        idx = [int(i) for i in ios]
        bounds, a = [], 0
        for i in idx + [size]:
            i = builtins.min(builtins.max(i, 0), size) if i >= 0 else builtins.max(size + i, 0)
            bounds.append((builtins.min(a, size), builtins.max(i, builtins.min(a, size))))
            a = i
    return tuple(slice_dim(x, d, a, b, 1) for a, b in bounds)


def _split_like(x, ios, dim, name, min_dims):
    x = as_tensor_arg(x)
    nd = x._data.ndim
    if nd < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {nd} dimensions!")
    if not isinstance(ios, (int, tuple, list)) and not hasattr(ios, "_data"):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(ios).__name__}), but expected one of:\n * (int sections)\n"
                        " * (tuple of ints indices)\n")
    if isinstance(ios, int):
        size = x._data.shape[dim]
        if ios == 0 or size % ios:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{ios}!")
    return tensor_split(x, ios, dim)


def hsplit(input, indices_or_sections):
    x = as_tensor_arg(input)
    return _split_like(x, indices_or_sections, 1 if x._data.ndim > 1 else 0, "hsplit", 1)


def vsplit(input, indices_or_sections):
    return _split_like(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    return _split_like(input, indices_or_sections, 2, "dsplit", 3)


# --------------------------------------------------------------------------- rows of grids
def cartesian_prod(*tensors):
    """All combinations of the elements of 1-d tensors, as rows."""
    ts, _ = _tensors_arg(tensors)
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([g.flatten() for g in grids], 1)
