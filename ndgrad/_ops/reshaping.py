"""Reshapes kept apart from shape.py: ravel and ``Tensor.unfold`` (sliding windows).

ravel is ``reshape(-1)`` (a view when the input is contiguous). unfold is a view primitive
(``UnfoldBackward0``): the windows along `dim` become a new dim of size `size` at the end,
strided over the input's memory, so windows that overlap share elements; its backward adds
each window's gradient back at its place (overlaps sum).
"""

import numpy as np

from .arguments import wrap_dim
from .registry import record_input_shape
from .registry import as_tensor_arg, primitive, wrap
from .methods import bind

__all__ = ["ravel"]


def ravel(input):
    return as_tensor_arg(input).reshape(-1)


def _window_index(length, size, step):
    n = (length - size) // step + 1
    return n, (np.arange(n)[:, None] * step + np.arange(size)[None, :]).reshape(-1)


def _unfold_fwd(x, p):
    dim, size, step = p
    if x.ndim == 0:
        return x.reshape(1)
    n = (x.shape[dim] - size) // step + 1
    shape = x.shape[:dim] + (n,) + x.shape[dim + 1:] + (size,)
    strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:] + (x.strides[dim],)
    return np.lib.stride_tricks.as_strided(x, shape, strides)


UNFOLD = primitive("unfold", _unfold_fwd, "UnfoldBackward0", view=True, linear=True)
record_input_shape(UNFOLD)


@UNFOLD.def_vjp
def _(ctx, g):
    dim, size, step = ctx._params
    shape = ctx._shape
    if not shape:
        return (g.reshape(()),)
    n, idx = _window_index(shape[dim], size, step)
    # windows back in place along dim: (..., n, ..., size) -> (..., n * size, ...)
    flat = g.movedim(-1, dim + 1).reshape(shape[:dim] + (n * size,) + shape[dim + 1:])
    return (g.new_zeros(shape).index_add(dim, wrap(idx.astype(np.int64)), flat),)


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
    return UNFOLD.call(self, params=(dim, size, step))


def _bind():
    bind({"ravel": ravel, "unfold": unfold})


_bind()
