"""Reshapes kept apart from shape.py: ravel, and ``Tensor.unfold`` (sliding windows) with
its adjoint ``unfold_backward`` (overlap-add).

ravel is ``reshape(-1)`` (a view when the input is contiguous). unfold is a view primitive
(``UnfoldBackward0``): the windows along `dim` become a new dim of size `size` at the end,
strided over the input's memory, so windows that overlap share elements. Its backward is the
primitive torch calls ``unfold_backward`` (``UnfoldBackwardBackward0``), which adds each
window back at its place (overlaps sum) into a fresh tensor; each is linear and the other's
adjoint. ``overlap_add`` (istft's overlap-add) calls it directly.
"""

import numpy as np

from .arguments import wrap_dim
from .registry import record_input_shape
from .registry import as_tensor_arg, primitive, sizes_decide
from .methods import bind

__all__ = ["ravel"]


def ravel(input):
    return as_tensor_arg(input).reshape(-1)


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


def _overlap_add_fwd(g, p):
    sizes, dim, size, step = p
    out = np.zeros(sizes, dtype=g.dtype)
    n_frames = g.shape[dim]
    # g's windows along `dim`, window entries last: move the window dim next to them
    frames = np.moveaxis(g, dim, -2)
    target = np.moveaxis(out, dim, -1)
    if n_frames <= size:
        for k in range(n_frames):
            target[..., k * step:k * step + size] += frames[..., k, :]
    else:
        stop = step * (n_frames - 1) + 1
        for j in range(size):
            target[..., j:j + stop:step] += frames[..., :, j]
    return out


# params (input_sizes, dim, size, step), as torch's unfold_backward
UNFOLD_BACKWARD = primitive("unfold_backward", _overlap_add_fwd, "UnfoldBackwardBackward0",
                            linear=True)


@UNFOLD.def_vjp
def _(ctx, g):
    dim, size, step = ctx._params
    shape = ctx._shape
    if not shape:
        return (g.reshape(()),)
    return (UNFOLD_BACKWARD.call(g, params=(shape, dim, size, step)),)


@UNFOLD_BACKWARD.def_vjp
def _(ctx, g):
    _, dim, size, step = ctx._params
    return (UNFOLD.call(g, params=(dim, size, step)),)


def overlap_add(frames, input_sizes, dim, size, step):
    """The sum of `frames` (windows as ``Tensor.unfold`` makes them along non-negative `dim`)
    back into a tensor of `input_sizes` (torch's unfold_backward)."""
    return UNFOLD_BACKWARD.call(frames, params=(tuple(input_sizes), dim, size, step))


def unfold(self, dimension, size, step):
    sizes_decide()  # size <= length: the kernel does not check it
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
