"""Sampling-grid primitives: ``affine_grid_generator`` maps a regular grid of normalised
coordinates in [-1, 1] through a batch of affine matrices (torch's
``AffineGridGeneratorBackward0``).

params = (spatial size (H, W) or (D, H, W), align_corners). The base grid holds, per output
location, (x, y, 1) or (x, y, z, 1), x running along the last dim; without align_corners the
coordinates are the pixel centres (scaled by (n - 1) / n), a single step is coordinate 0.
Invariant: the op is linear in theta; its VJP is ``base^T @ grad`` in ndgrad ops, so double
backward works.
"""

import numpy as np

from .._tensor import Tensor
from .registry import primitive

__all__ = []


def _coords(n, align_corners, dt):
    if n <= 1:
        return np.zeros(max(n, 1), dt)
    r = np.linspace(-1.0, 1.0, n).astype(dt)
    if not align_corners:
        r = (r * dt.type(n - 1) / dt.type(n)).astype(dt)
    return r


def _base_grid(spatial, align_corners, dt):
    """(prod(spatial), len(spatial) + 1) rows (x, y[, z], 1), x varying fastest."""
    axes = [_coords(n, align_corners, dt) for n in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]  # x, y[, z]
    cols.append(np.ones(cols[0].shape, dt))
    return np.stack(cols, 1)


def _affine_grid_fwd(theta, p):
    spatial, align_corners = p
    base = _base_grid(spatial, align_corners, theta.dtype)
    out = np.matmul(base[None], theta.transpose(0, 2, 1))
    return out.reshape((theta.shape[0],) + tuple(spatial) + (len(spatial),))


AFFINE_GRID = primitive("affine_grid_generator", _affine_grid_fwd,
                        "AffineGridGeneratorBackward0", linear=True)


@AFFINE_GRID.def_vjp
def _(ctx, g):
    spatial, align_corners = ctx._params
    base = Tensor(_base_grid(spatial, align_corners, g._data.dtype))
    k = len(spatial)
    flat = g.reshape(g.shape[0], -1, k)
    return (base.t().matmul(flat).transpose(1, 2),)
