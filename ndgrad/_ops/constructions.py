"""Tensors built from others or from sizes: block_diag, diagflat, vander, combinations,
tril_indices, triu_indices and unravel_index.

block_diag, diagflat, vander and combinations are composites of differentiable ops (cat,
diag_embed, cumprod, index_select), so their gradients come from those primitives. The index
builders return int64 tensors (or the requested dtype) that do not require grad.
"""

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .registry import as_tensor_arg, wrap

__all__ = ["block_diag", "combinations", "diagflat", "tril_indices", "triu_indices",
           "unravel_index", "vander"]


def block_diag(*tensors):
    mats = []
    for k, t in enumerate(tensors):
        t = as_tensor_arg(t, "tensors")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {k} has {t.dim()} dimensions")
        mats.append(t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1) if t.dim() == 0
                    else t)
    from .. import zeros
    if not mats:
        return zeros((1, 0))
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _dtype.promote_types(dt, m.dtype)
    n_cols = sum(m.shape[1] for m in mats)
    rows, col = [], 0
    from .. import cat
    for m in mats:
        r, c = m.shape
        parts = []
        if col:
            parts.append(zeros((r, col), dtype=dt))
        parts.append(m.to(dt))
        if n_cols - col - c:
            parts.append(zeros((r, n_cols - col - c), dtype=dt))
        rows.append(cat(parts, 1) if len(parts) > 1 else parts[0])
        col += c
    return cat(rows, 0)


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
    from .. import cat, ones
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
    from .. import stack
    cols = [x.index_select(0, wrap(idx[:, k].copy())) for k in range(r)]
    return stack(cols, 1)


def _tri_indices(name, np_fn, row, col, offset, dtype):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = _dtype.int64 if dtype is None else dtype
    if dt not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"\"{name}\" not implemented for '{dt._legacy[:-6]}'")
    i, j = np_fn(row, offset, col)
    return wrap(np.stack((i, j)).astype(dt.np).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("tril_indices_cpu", np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices("triu_indices_cpu", np.triu_indices, row, col, offset, dtype)


def unravel_index(indices, shape):
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices)}")
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    # Mixed-radix digits: floor division by the place values, then the remainder.
    places = np.cumprod((1,) + shape[:0:-1])[::-1].astype(np.int64)
    d = indices._data.astype(np.int64)[..., None]
    digits = np.floor_divide(d, places) % np.array(shape, dtype=np.int64)
    return tuple(wrap(np.ascontiguousarray(digits[..., k])) for k in range(len(shape)))


def _bind():
    from .methods import bind
    bind({"diagflat": diagflat})


_bind()
