"""Separable resampling: ``out = x x_1 M_1 x_2 M_2 ... x_k M_k`` over the last k dims, each
(out_i, in_i) matrix applied along its own axis. ``interpolate`` builds one matrix per axis
(nearest, nearest-exact, linear, cubic, area, antialiased filters) and declares the op under
torch's node name for the mode (UpsampleBilinear2DBackward0, UpsampleTrilinear3DBackward0,
...), one op pair per name.

Invariant: the op is linear in x; its VJP is the same product with the transposed matrices,
whose own VJP is the forward again (double backward), and its tangent is the op applied to
the input's tangent.
"""

import numpy as np

from .registry import primitive

__all__ = []

_OPS = {}


def _apply(x, mats, transpose):
    k = len(mats)
    for a, m in enumerate(mats):
        axis = x.ndim - k + a
        m = m.T if transpose else m
        x = np.moveaxis(np.tensordot(x, m, axes=([axis], [1])), -1, axis)
    return np.ascontiguousarray(x)


def _ops(node_name):
    ops = _OPS.get(node_name)
    if ops is not None:
        return ops
    fwd = primitive("resample_" + node_name, lambda x, p: _apply(x, p, False), node_name,
                    linear=True)
    bw = primitive("resample_t_" + node_name, lambda g, p: _apply(g, p, True),
                   node_name.replace("Backward0", "BackwardBackward0"), linear=True)
    fwd.def_vjp(lambda ctx, g: (bw.call(g, params=ctx._params),))
    bw.def_vjp(lambda ctx, gg: (fwd.call(gg, params=ctx._params),))
    _OPS[node_name] = (fwd, bw)
    return fwd, bw


def separable(x, mats, node_name):
    """Apply the (out, in) matrices ``mats`` along the last len(mats) dims of x."""
    return _ops(node_name)[0].call(x, params=tuple(mats))
