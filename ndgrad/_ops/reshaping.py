"""Reshapes kept apart from shape.py: ravel and ``Tensor.unfold`` (sliding windows).

ravel is ``reshape(-1)`` (a view when the input is contiguous). unfold gathers the windows
with one index_select along `dim` and appends the window dim last; its result is a copy, not
a view as in torch (docs/decisions.md), with index_select's gradient (windows that overlap sum
their gradients, as torch's UnfoldBackward0 does).
"""

import numpy as np

from .reduction import wrap_dim
from .registry import as_tensor_arg, wrap

__all__ = ["ravel"]


def ravel(input):
    return as_tensor_arg(input).reshape(-1)


def unfold(self, dimension, size, step):
    nd = self.dim()
    dim = wrap_dim(dimension, max(nd, 1))
    length = self.shape[dim] if nd else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    n = (length - size) // step + 1
    idx = (np.arange(n)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    if nd == 0:
        return self.reshape(1).index_select(0, wrap(idx.astype(np.int64)))
    picked = self.index_select(dim, wrap(idx.astype(np.int64)))
    shape = self.shape[:dim] + (n, size) + self.shape[dim + 1:]
    return picked.reshape(shape).movedim(dim + 1, -1)


def _bind():
    from .methods import bind
    bind({"ravel": ravel, "unfold": unfold})


_bind()
