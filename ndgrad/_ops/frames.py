"""Sliding windows over one dim and their overlap-add: the pair of primitives torch calls
``unfold`` (grad_fn ``UnfoldBackward0``) and ``unfold_backward`` (``UnfoldBackwardBackward0``).
``stft`` cuts its frames with the first, ``istft`` overlap-adds with the second.

Both are linear and each is the other's adjoint. ``params`` are ``(dim, size, step, input_sizes)``
for ``unfold`` (windows of `size` every `step` entries along `dim`, appended as a last dim;
`dim` replaced by the number of windows; the input's sizes kept for the VJP) and ``(input_sizes, dim, size, step)`` for
``unfold_backward``, which sums such windows back into a tensor of ``input_sizes``. Dims are
non-negative. Outputs are fresh arrays, never views of the input.
"""

import numpy as np

from .registry import primitive

__all__ = ["UNFOLD", "UNFOLD_BACKWARD", "overlap_add", "unfold"]


def _unfold_fwd(x, p):
    dim, size, step, _ = p
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    index = [slice(None)] * x.ndim
    index[dim] = slice(None, None, step)
    return np.ascontiguousarray(windows[tuple(index)])


def _overlap_add_fwd(g, p):
    sizes, dim, size, step = p
    out = np.zeros(sizes, dtype=g.dtype)
    n_frames = g.shape[dim]
    # g's frames along `dim`, window entries last: move the frame dim next to them.
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


UNFOLD = primitive("unfold", _unfold_fwd, "UnfoldBackward0", linear=True)
UNFOLD_BACKWARD = primitive("unfold_backward", _overlap_add_fwd, "UnfoldBackwardBackward0",
                            linear=True)


@UNFOLD.def_vjp
def _(ctx, g):
    dim, size, step, sizes = ctx._params
    return (UNFOLD_BACKWARD.call(g, params=(sizes, dim, size, step)),)


@UNFOLD_BACKWARD.def_vjp
def _(ctx, g):
    sizes, dim, size, step = ctx._params
    return (UNFOLD.call(g, params=(dim, size, step, sizes)),)


def unfold(x, dim, size, step):
    """Windows of `size` every `step` along non-negative `dim` of `x` (Tensor.unfold)."""
    return UNFOLD.call(x, params=(dim, size, step, tuple(x._data.shape)))


def overlap_add(frames, input_sizes, dim, size, step):
    """The sum of `frames` (as made by `unfold`) back into a tensor of `input_sizes`."""
    return UNFOLD_BACKWARD.call(frames, params=(tuple(input_sizes), dim, size, step))
