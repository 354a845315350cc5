"""The embedding lookup primitive: ``embedding`` (rows of the weight picked by an index
tensor, torch's ``EmbeddingBackward0``) and ``embedding_backward``, the scatter-add of the
output gradient into a weight-shaped gradient (``padding_idx`` rows zeroed,
``scale_grad_by_freq`` dividing each row by its count in the batch).

Invariant: the backward's own rule is the lookup again (the scatter-add's adjoint), so double
backward is exact; indices get no gradient. The forward tangent is the lookup of the weight's
tangent, the padding row included.
"""

import numpy as np

from .._tensor import Tensor
from .registry import primitive

__all__ = []


def _embedding_fwd(w, idx, p):
    return w[idx]


def _embedding_bw_fwd(g, idx, p):
    num, padding_idx = p[:2]
    flat = idx.reshape(-1)
    rows = g.reshape(-1, g.shape[-1])
    if len(p) > 2 and p[2]:
        # scale_grad_by_freq: each row's gradient is divided by its count in the batch
        counts = np.bincount(flat, minlength=num)
        rows = rows / counts[flat][:, None].astype(g.dtype)
    out = np.zeros((num, g.shape[-1]), g.dtype)
    np.add.at(out, flat, rows)
    if padding_idx is not None and padding_idx >= 0:
        out[padding_idx] = 0
    return out


EMBEDDING = primitive("embedding", _embedding_fwd, "EmbeddingBackward0", save=((1, None),))
EMBEDDING_BW = primitive("embedding_backward", _embedding_bw_fwd,
                         "EmbeddingBackwardBackward0", save=((1, None),))


@EMBEDDING.def_vjp
def _(ctx, g):
    (idx,) = ctx.saved
    return EMBEDDING_BW.call(g, idx, params=ctx._params), None


# The tangent is the lookup of the weight's tangent, padding row included (the forward reads
# that row like any other; only the gradient treats it as constant), as torch's.
EMBEDDING.def_jvp_parts(lambda ctx, tw: EMBEDDING.call(tw, ctx.inputs[1], params=None), None)


@EMBEDDING_BW.def_vjp
def _(ctx, gg):
    (idx,) = ctx.saved
    num, padding_idx = ctx._params[:2]
    if padding_idx is not None and padding_idx >= 0:
        keep = np.ones((num, 1), gg._data.dtype)
        keep[padding_idx] = 0
        gg = gg * Tensor(keep)
    out = EMBEDDING.call(gg, idx, params=None)
    if len(ctx._params) > 2 and ctx._params[2]:
        flat = idx._data.reshape(-1)
        counts = np.bincount(flat, minlength=num)[idx._data].astype(gg._data.dtype)
        out = out / Tensor(counts[..., None])
    return out, None
