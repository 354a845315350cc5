"""Sampling-grid primitives: ``affine_grid_generator`` maps a regular grid of normalised
coordinates in [-1, 1] through a batch of affine matrices (torch's
``AffineGridGeneratorBackward0``); ``grid_sampler_2d`` / ``grid_sampler_3d`` read an input at a
grid's points (bilinear, nearest or bicubic; zeros, border or reflection padding; see the
section note below).

params = (spatial size (H, W) or (D, H, W), align_corners). The base grid holds, per output
location, (x, y, 1) or (x, y, z, 1), x running along the last dim; without align_corners the
coordinates are the pixel centres (scaled by (n - 1) / n), a single step is coordinate 0.
Invariant: the op is linear in theta; its VJP is ``base^T @ grad`` in ndgrad ops, so double
backward works.
"""

import numpy as np

from .. import _state
from .._tensor import Tensor
from .joins import stack
from .registry import no_forward_ad, primitive

__all__ = []

_tls = _state.tls


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


# ============================================================================ grid sampler
# ``grid_sampler_2d`` / ``grid_sampler_3d`` (torch's GridSampler2DBackward0 / 3D): the input is
# read at the grid's points. Every output point is a weighted sum of "taps", one per
# combination of per-axis taps (bilinear: 2 per axis, bicubic: 4, nearest: 1). A plan built in
# NumPy from the grid's values fixes, per axis, the tap indices (clipped into range), their
# in-bounds masks, and the locally linear map t = grid * slope + offset from the grid
# coordinate to the fractional position t between taps (padding makes it piecewise linear:
# slope 0 where border clipping holds the point, -1 where reflection mirrors it). The weights
# are polynomials in t, evaluated on arrays in the forward and on tensors in the VJP, so the
# VJP (gathers, scatter-adds, products) is itself differentiable: double backward follows.
# torch has no forward-mode formula for these ops; neither does ndgrad.
INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}
_CUBIC_A = -0.75


def _clip(coord, size):
    """torch's clip_coordinates_set_grad: the clipped coordinate and its derivative."""
    hi = size - 1
    inside = (coord > 0) & (coord < hi)
    return np.clip(coord, 0, hi), inside.astype(coord.dtype)


def _reflect(coord, twice_low, twice_high):
    """torch's reflect_coordinates_set_grad over [twice_low / 2, twice_high / 2]."""
    if twice_low == twice_high:
        return np.zeros_like(coord), np.zeros_like(coord)
    lo = coord.dtype.type(twice_low / 2)
    span = coord.dtype.type((twice_high - twice_low) / 2)
    d = coord - lo
    sign = np.where(d < 0, -1, 1).astype(coord.dtype)
    d = np.abs(d)
    extra = np.fmod(d, span)
    even = (np.floor(d / span).astype(np.int64) % 2) == 0
    out = np.where(even, extra + lo, span - extra + lo)
    return out.astype(coord.dtype), np.where(even, sign, -sign)


def _pad_coord(coord, size, padding, align_corners):
    """(coordinate after the padding rule, its derivative) for the non-zeros modes."""
    one = np.ones_like(coord)
    if padding == 1:
        return _clip(coord, size)
    if padding == 2:
        if align_corners:
            coord, d1 = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord, d1 = _reflect(coord, -1, 2 * size - 1)
        coord, d2 = _clip(coord, size)
        return coord, d1 * d2
    return coord, one


def _cubic_weights(t):
    """The four cubic-convolution weights (A = -0.75) of taps -1, 0, 1, 2 at offset t."""
    a = _CUBIC_A
    u, v, w = t + 1, 1 - t, 2 - t
    return [((u * a - 5 * a) * u + 8 * a) * u - 4 * a,
            ((t * (a + 2)) - (a + 3)) * t * t + 1,
            ((v * (a + 2)) - (a + 3)) * v * v + 1,
            ((w * a - 5 * a) * w + 8 * a) * w - 4 * a]


def _cubic_dweights(t):
    """d/dt of ``_cubic_weights``."""
    a = _CUBIC_A
    u, v, w = t + 1, 1 - t, 2 - t
    return [(u * (3 * a) - 10 * a) * u + 8 * a,
            (t * (3 * (a + 2)) - 2 * (a + 3)) * t,
            -((v * (3 * (a + 2)) - 2 * (a + 3)) * v),
            -((w * (3 * a) - 10 * a) * w + 8 * a)]


def _weights(mode, t):
    if mode == 0:
        return [1 - t, t]
    if mode == 2:
        return _cubic_weights(t)
    return [t * 0 + 1]


def _dweights(mode, t):
    if mode == 0:
        return [t * 0 - 1, t * 0 + 1]
    if mode == 2:
        return _cubic_dweights(t)
    return [t * 0]


def _axis_plan(coord, size, mode, padding, align_corners):
    """(taps [(index, mask)], slope, offset, t) of one grid component (see the section note)."""
    dt = coord.dtype
    if align_corners:
        scale = dt.type((size - 1) / 2)
    else:
        scale = dt.type(size / 2)
    src = ((coord + 1) * scale if align_corners else ((coord + 1) * size - 1) / 2).astype(dt)
    if mode == 2:  # bicubic: padding applies to each integer tap, not to the coordinate
        slope = np.full_like(coord, scale)
        base = np.floor(src)
        offsets = (-1, 0, 1, 2)
    else:
        src, d = _pad_coord(src, size, padding, align_corners)
        slope = (d * scale).astype(dt)
        if mode == 1:
            base, offsets = np.rint(src), (0,)
        else:
            base, offsets = np.floor(src), (0, 1)
    t = (src - base).astype(dt)
    offset = (t - coord * slope).astype(dt)
    taps = []
    ibase = base.astype(np.int64)
    for k in offsets:
        idx = ibase + k
        if mode == 2 and padding:
            c, _ = _pad_coord(idx.astype(dt), size, padding, align_corners)
            idx = c.astype(np.int64)
        mask = (idx >= 0) & (idx < size)
        # (np.clip's values, without its Python wrapper)
        taps.append((np.minimum(np.maximum(idx, 0), size - 1), mask.astype(dt)))
    return taps, slope, offset, t


def _plan(x_shape, grid, params):
    mode, padding, align_corners = params
    spatial = x_shape[2:]
    k = len(spatial)
    n = grid.shape[0]
    axes = []
    for a in range(k):  # grid component a indexes spatial dim -1 - a
        size = spatial[k - 1 - a]
        stride = int(np.prod(spatial[k - a:], dtype=np.int64))
        taps, slope, offset, t = _axis_plan(grid[..., a].reshape(n, 1, -1), size, mode,
                                            padding, align_corners)
        axes.append(([(idx * stride, m) for idx, m in taps], slope, offset, t))
    return axes


def _combos(axes):
    """Every combination of one tap per axis: (flat index, mask, per-axis tap numbers)."""
    combos = [((0, 1), ())]
    for taps, *_ in axes:
        combos = [((fi + idx, m * mk), nums + (j,)) for (fi, m), nums in combos
                  for j, (idx, mk) in enumerate(taps)]
    return [(fi, m, nums) for (fi, m), nums in combos]


def _plane_offsets(n, c, size):
    """(n, c, 1) offsets of each (sample, channel) plane in the flattened input: added to a
    tap's flat spatial indices (n, 1, P), they index every channel's value at once."""
    return np.arange(0, n * c * size, size).reshape(n, c, 1)


def _tap_weight(m, ws):
    """One tap's weight: its in-bounds mask times each axis's weight (arrays or tensors)."""
    w = m
    for wa in ws:
        w = w * wa
    return w


def _add_grid_terms(parts, gv, dweights, nums, ws):
    """Add one tap's share of each grid component's derivative to `parts`: `gv` times the
    tap's weight differentiated along that component's axis (arrays or tensors, the same
    operations in the same order either way)."""
    k = len(parts)
    for a in range(k):
        term = gv * dweights[a][nums[a]]
        for b in range(k):
            if b != a:
                term = term * ws[b]
        parts[a] = term if parts[a] is None else parts[a] + term


def _grid_sample_fwd(x, grid, p):
    n, c = x.shape[:2]
    out_spatial = grid.shape[1:-1]
    npts = int(np.prod(out_spatial, dtype=np.int64))
    size = int(np.prod(x.shape[2:], dtype=np.int64))
    axes = _plan(x.shape, grid, p)
    weights = [_weights(p[0], t) for _, _, _, t in axes]
    if size == 0:  # nothing to read (every tap is masked out); the take below would fail
        return np.zeros((n, c) + tuple(out_spatial), x.dtype)
    flat = x.reshape(-1)
    planes = _plane_offsets(n, c, size)
    out = np.zeros((n, c, npts), x.dtype)
    for fi, m, nums in _combos(axes):
        out += flat.take(fi + planes) * _tap_weight(m, [weights[a][j] for a, j in
                                                        enumerate(nums)])
    return out.reshape((n, c) + tuple(out_spatial))


def _grid_sample_vjp_arrays(x, grid, g, params, need_x, need_grid):
    """The rule below on arrays, for a backward that records nothing: the same NumPy
    operations on the same values in the same order (tests/test_nn_misc_ops.py checks the
    two bitwise), every channel of a tap gathered or scattered by one flat index."""
    mode = params[0]
    n, c = x.shape[:2]
    k = grid.shape[-1]
    size = int(np.prod(x.shape[2:], dtype=np.int64))
    axes = _plan(x.shape, grid, params)
    gflat = g.reshape(n, c, -1)
    ts = [grid[..., a].reshape(n, 1, -1) * slope + offset
          for a, (_, slope, offset, _) in enumerate(axes)]
    weights = [_weights(mode, t) for t in ts]
    dweights = [_dweights(mode, t) for t in ts]
    gx = np.zeros(n * c * size, g.dtype) if need_x else None
    flat = x.reshape(-1)
    planes = _plane_offsets(n, c, size)
    parts = [None] * k
    for fi, m, nums in _combos(axes):
        taps = fi + planes
        ws = [weights[a][j] for a, j in enumerate(nums)]
        if need_x:
            # scatter_add's traversal of the (n, c, P) index: per element of gx, the
            # contributions arrive tap by tap, point by point
            np.add.at(gx, taps.reshape(-1), (gflat * _tap_weight(m, ws)).reshape(-1))
        if need_grid and mode != 1:
            gv = np.add.reduce(gflat * flat.take(taps), axis=(1,), keepdims=True) * m
            _add_grid_terms(parts, gv, dweights, nums, ws)
    if need_x:
        gx = gx.reshape(x.shape)
    ggrid = None
    if need_grid:
        if mode == 1:
            ggrid = np.zeros(grid.shape, grid.dtype)
        else:
            ggrid = np.stack([parts[a] * axes[a][1] for a in range(k)], -1).reshape(grid.shape)
    return gx, ggrid


def _grid_sample_vjp(ctx, g):
    x, grid = ctx.saved
    mode = ctx._params[0]
    need_x, need_grid = ctx.needs_input_grad
    if not _tls.grad_enabled and not _state.special and type(g) is Tensor and \
            x._data.size and grid._data.size:
        gx, ggrid = _grid_sample_vjp_arrays(x._data, grid._data, g._data, ctx._params,
                                            need_x, need_grid)
        return (None if gx is None else Tensor(gx)), (None if ggrid is None else Tensor(ggrid))
    n, c = x.shape[:2]
    k = grid.shape[-1]
    axes = _plan(tuple(x.shape), grid._data, ctx._params)
    gflat = g.reshape(n, c, -1)
    xflat = x.reshape(n, c, -1)
    ts = [grid.select(-1, a).reshape(n, 1, -1) * Tensor(slope) + Tensor(offset)
          for a, (_, slope, offset, _) in enumerate(axes)]
    weights = [_weights(mode, t) for t in ts]
    dweights = [_dweights(mode, t) for t in ts]
    gx = Tensor(np.zeros(xflat.shape, g._data.dtype)) if need_x else None
    parts = [None] * k
    for fi, m, nums in _combos(axes):
        idx = Tensor(np.broadcast_to(fi, (n, c, fi.shape[-1])).copy())
        mt = Tensor(m)
        ws = [weights[a][j] for a, j in enumerate(nums)]
        if need_x:
            gx = gx.scatter_add(2, idx, gflat * _tap_weight(mt, ws))
        if need_grid and mode != 1:
            gv = (gflat * xflat.gather(2, idx)).sum(1, keepdim=True) * mt
            _add_grid_terms(parts, gv, dweights, nums, ws)
    ggrid = None
    if need_grid:
        if mode == 1:
            ggrid = Tensor(np.zeros(grid.shape, grid._data.dtype))
        else:
            comps = [parts[a] * Tensor(axes[a][1]) for a in range(k)]
            ggrid = stack(comps, -1).reshape(grid.shape)
    return (gx.reshape(x.shape) if need_x else None), ggrid


GRID_SAMPLER_2D = primitive("grid_sampler_2d", _grid_sample_fwd, "GridSampler2DBackward0",
                            save=((0, None), (1, None)))
GRID_SAMPLER_3D = primitive("grid_sampler_3d", _grid_sample_fwd, "GridSampler3DBackward0",
                            save=((0, None), (1, None)))
for _op in (GRID_SAMPLER_2D, GRID_SAMPLER_3D):
    _op.def_vjp(_grid_sample_vjp)
    _op.def_jvp(no_forward_ad(_op.name))
