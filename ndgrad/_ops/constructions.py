"""Tensors built from others or from sizes: block_diag, diagflat, vander, combinations,
tril_indices, triu_indices and unravel_index.

block_diag is a primitive (``BlockDiagBackward0``); diagflat, vander and combinations are
composites of differentiable ops (diag_embed, cumprod, index_select), so their gradients come
from those primitives. The index
builders return int64 tensors (or the requested dtype) that do not require grad.
"""

import numpy as np

from .. import _dtype
from .._creation import ones, zeros
from .._tensor import Tensor
from .joins import cat, stack
from .registry import as_tensor_arg, primitive, wrap
from .methods import bind

__all__ = ["block_diag", "combinations", "diagflat", "tril_indices", "triu_indices",
           "unravel_index", "vander"]


def _as_matrix(a):
    return a.reshape(1, -1) if a.ndim == 1 else a.reshape(1, 1) if a.ndim == 0 else a


def _block_diag_fwd(*arrays):
    mats = [_as_matrix(np.asarray(a)) for a in arrays[:-1]]
    dt = arrays[-1][0]
    out = np.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype=dt)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r += m.shape[0]
        c += m.shape[1]
    return out


# params: (result dtype, the inputs' shapes and dtypes), which place the blocks in backward
BLOCK_DIAG = primitive("block_diag", _block_diag_fwd, "BlockDiagBackward0", linear=True)


@BLOCK_DIAG.def_vjp
def _(ctx, g):
    # the blocks' places follow from the inputs' shapes (each 0-d/1-d input is one row)
    _, shapes, dtypes = ctx._params
    grads, r, c = [], 0, 0
    for shape, dt, need in zip(shapes, dtypes, ctx._next):
        rows, cols = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        if need is not None:
            block = g[r:r + rows, c:c + cols].reshape(shape)
            grads.append(block if block.dtype == dt else block.to(dt))
        else:
            grads.append(None)
        r += rows
        c += cols
    return tuple(grads)


def block_diag(*tensors):
    mats = []
    for k, t in enumerate(tensors):
        t = as_tensor_arg(t, "tensors")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {k} has {t.dim()} dimensions")
        mats.append(t)
    if not mats:
        return zeros((1, 0))
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _dtype.promote_types(dt, m.dtype)
    return BLOCK_DIAG.call(*mats, params=(dt.np, tuple(tuple(m.shape) for m in mats),
                                          tuple(m.dtype for m in mats)))


def diagflat(input, offset=0):
    x = as_tensor_arg(input)
    return x.reshape(-1).diag_embed(offset)


def vander(x, N=None, increasing=False):
    v = as_tensor_arg(x, "x")
    if v.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = v.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = v.dtype if (v.is_floating_point() or v.is_complex()) else _dtype.int64
    res = ones((v.shape[0], n), dtype=dt)
    if n > 1:
        powers = v.unsqueeze(1).expand(v.shape[0], n - 1).to(dt).cumprod(1)
        res = cat((res[:, :1], powers), 1)
    return res if increasing else res.flip(1)


def combinations(input, r=2, with_replacement=False):
    x = as_tensor_arg(input)
    if x.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return x.new_empty((0,))
    import itertools
    pick = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    idx = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    cols = [x.index_select(0, wrap(idx[:, k].copy())) for k in range(r)]
    return stack(cols, 1)


def _tri_indices(name, np_fn, row, col, offset, dtype):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = _dtype.int64 if dtype is None else dtype
    if dt not in (_dtype.int64, _dtype.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt._legacy[:-6]}'")
    i, j = np_fn(row, offset, col)
    return wrap(np.stack((i, j)).astype(dt.np).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("tril_indices", np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("triu_indices", np.triu_indices, row, col, offset, dtype)


def unravel_index(indices, shape):
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices)}")
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for s in shape:
        if not isinstance(s, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(s)}")
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    # Mixed-radix digits: floor division by the place values, then the remainder.
    places = np.cumprod((1,) + shape[:0:-1])[::-1].astype(np.int64)
    d = indices._data.astype(np.int64)[..., None]
    digits = np.floor_divide(d, places) % np.array(shape, dtype=np.int64)
    # np.array, not ascontiguousarray: the latter would make a 0-d index 1-d.
    return tuple(wrap(np.array(digits[..., k], dtype=np.int64)) for k in range(len(shape)))


def _bind():
    bind({"diagflat": diagflat})


_bind()
