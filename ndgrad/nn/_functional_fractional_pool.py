"""``fractional_max_pool2d/3d`` (+ ``_with_indices``): torch's argument handling in front of
the primitives of ``_ops/fractional_pool.py``. Without ``_random_samples`` the samples are
``rand(N, C, k)`` in the input's dtype from the global generator, as torch draws them, so a
seeded run gives torch's windows.

Invariant: every check runs before the samples are drawn (a rejected call leaves the
generator untouched).
"""

import numpy as np

from .. import _creation
from .._ops.registry import sizes_decide
from .._ops.fractional_pool import FRACTIONAL_MAX_POOL2D, FRACTIONAL_MAX_POOL3D

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_AXES = ("time", "height", "width")


def _tuple(v, k):
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v),) * k


def _fractional(input, kernel_size, output_size, output_ratio, samples, k):
    name = f"fractional_max_pool{k}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else \
            (output_ratio,) * k
        if len(ratio) != k:
            raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
        output_size = [int(input.shape[-k + a] * ratio[a]) for a in range(k)]
    pool, outs = _tuple(kernel_size, k), _tuple(output_size, k)
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{name}(): Expected {k + 1}D or {k + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    spatial = tuple(input.shape[-k:])
    axes = _AXES[3 - k:]
    suffix = "" if k == 2 else "_out"
    sizes_decide()
    for a in range(k):
        span = outs[a] + pool[a] - 1  # torch's 3-d kernel requires it strictly below
        if span > spatial[a] or (k == 3 and span == spatial[a]):
            raise RuntimeError(f"{name}{suffix}(): pool {axes[a]} {pool[a]} too large "
                               f"relative to input {axes[a]} {spatial[a]}")
    n = 1 if input.dim() == k + 1 else input.shape[0]
    c = input.shape[-k - 1]
    if samples is None:
        samples = _creation.rand(n, c, k, dtype=input.dtype)
    if samples.dim() != 3 or samples.shape[2] != k:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {k}; got "
                           f"{samples.shape[2] if samples.dim() == 3 else samples.dim()}.")
    arr = np.asarray(samples._data, dtype=input._data.dtype)
    op = FRACTIONAL_MAX_POOL2D if k == 2 else FRACTIONAL_MAX_POOL3D
    return op.call(input, params=(pool, outs, arr, tuple(input.shape)))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max pooling over pseudo-random windows (Graham, 2014)."""
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (out, idx) if return_indices else out


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """The 3-d fractional max pooling."""
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (out, idx) if return_indices else out
