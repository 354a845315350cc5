"""Fractional max pooling primitives ``fractional_max_pool2d`` / ``fractional_max_pool3d``
(torch's FractionalMaxPool2DBackward0 / 3D): each plane's pooling windows start at
pseudo-random positions drawn from its ``_random_samples`` entry, as torch's CPU kernel.

params = (pool size, output size, samples (N, C, k) array, input shape). Per plane and axis,
with u the plane's sample for that axis (2-d: sample 0 for W, 1 for H; 3-d: 0, 1, 2 for
T, H, W, as torch's kernels read them), alpha = (in - pool) / (out - 1) in the input's
dtype, window i starts at int((i + u) alpha) - int(u alpha) and the last at in - pool. A
window's maximum is its first largest element (a NaN wins); its index is the flat position
in the input plane.

Invariant: the VJP is a scatter-add of the gradient into the input at the indices, whose
own VJP is the gather again (double backward); the tangent is the gather of the input's
tangent, as torch's formula.
"""

import numpy as np

from .registry import primitive

__all__ = []


def intervals(sample, size, out, pool):
    """Window starts along one axis (torch's generate_intervals, in sample's dtype)."""
    seq = np.zeros(out, np.int64)
    if out > 1:
        dt = sample.dtype.type
        alpha = dt(size - pool) / dt(out - 1)
        i = np.arange(out - 1).astype(sample.dtype)
        seq[:-1] = ((i + sample) * alpha).astype(np.int64) - np.int64(sample * alpha)
    if out > 0:
        seq[-1] = size - pool
    return seq


def _fwd(x, p):
    pool, outs, samples, _ = p
    k = len(pool)
    lead, spatial = x.shape[:-k], x.shape[-k:]
    planes = x.reshape((-1,) + spatial)
    smp = samples.reshape(-1, k)
    n_planes = planes.shape[0]
    out = np.empty((n_planes,) + tuple(outs), x.dtype)
    idx = np.empty((n_planes,) + tuple(outs), np.int64)
    strides = [int(np.prod(spatial[a + 1:], dtype=np.int64)) for a in range(k)]
    for q in range(n_planes):
        # 2-d: sample 0 drives W and 1 drives H; 3-d: samples 0, 1, 2 drive T, H, W
        pos = []
        for a in range(k):
            starts = intervals(smp[q, k - 1 - a if k == 2 else a], spatial[a], outs[a],
                               pool[a])
            full = starts[:, None] + np.arange(pool[a])[None, :]  # (out_a, pool_a)
            shape = [1] * (2 * k)
            shape[a], shape[k + a] = outs[a], pool[a]
            pos.append(full.reshape(shape))
        flat = sum(pp * s for pp, s in zip(pos, strides))  # (outs..., pools...)
        flat = np.broadcast_to(flat, tuple(outs) + tuple(pool)).reshape(tuple(outs) + (-1,))
        vals = planes[q].reshape(-1)[flat]
        nan = np.isnan(vals)
        pick = np.where(nan.any(-1), np.argmax(nan, -1), np.argmax(vals, -1))
        idx[q] = np.take_along_axis(flat, pick[..., None], -1)[..., 0]
        out[q] = np.take_along_axis(vals, pick[..., None], -1)[..., 0]
    shape = lead + tuple(outs)
    return out.reshape(shape), idx.reshape(shape)


def _bw_fwd(g, idx, p):
    x_shape = p[3]
    k = len(p[0])
    n = int(np.prod(x_shape[:-k], dtype=np.int64))
    plane = int(np.prod(x_shape[-k:], dtype=np.int64))
    flat = (np.arange(n)[:, None] * plane + idx.reshape(n, -1)).ravel()
    out = np.bincount(flat, weights=g.reshape(-1).astype(np.float64), minlength=n * plane)
    return out.astype(g.dtype).reshape(x_shape)


def _gather(t, idx, k):
    lead = tuple(idx.shape[:-k])  # at least the channel dim
    picked = t.reshape(lead + (-1,)).gather(len(lead), idx.reshape(lead + (-1,)))
    return picked.reshape(idx.shape)


def _declare(k):
    fwd = primitive(f"fractional_max_pool{k}d", _fwd, f"FractionalMaxPool{k}DBackward0",
                    save=(("out1", None),), n_out=2, diff_outs=(True, False))
    bw = primitive(f"fractional_max_pool{k}d_backward", _bw_fwd,
                   f"FractionalMaxPool{k}DBackwardBackward0", save=((1, None),), linear=True)

    @fwd.def_vjp
    def _(ctx, gs):
        (idx,) = ctx.saved
        return (bw.call(gs[0], idx, params=ctx._params),)

    @bw.def_vjp
    def _(ctx, gg):
        (idx,) = ctx.saved
        return _gather(gg, idx, k), None

    fwd.def_jvp(lambda ctx, tx: (_gather(tx, ctx.outputs[1], k), None))
    return fwd, bw


FRACTIONAL_MAX_POOL2D, FRACTIONAL_MAX_POOL2D_BW = _declare(2)
FRACTIONAL_MAX_POOL3D, FRACTIONAL_MAX_POOL3D_BW = _declare(3)
