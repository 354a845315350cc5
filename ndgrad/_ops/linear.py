"""The fused linear layer primitive: ``linear_addmm`` (``F.linear`` on 2-D input with a bias,
recorded as torch's ``AddmmBackward0``) and ``linear_addmm_backward``, which computes its
three gradients in one kernel call; with the forward, its VJP and its batched VJP (gradients
with a leading batch dim, for ``is_grads_batched`` and vectorized Jacobians).

Invariants: the bias gradient is reduced here (one row sum), never left broadcast for the
engine; ``weight.grad`` comes out C-contiguous like the weight; the backward primitive has its
own rule in ndgrad ops, so double backward is exact.
"""

import numpy as np

from .. import _state
from .._tensor import Tensor
from .pointwise import _conj
from .registry import primitive
from .matmul import matmul

__all__ = []

_tls = _state.tls
_add_reduce = np.add.reduce


def _linear_fwd(b, x, wt, p):
    out = x @ wt
    out += b
    return out


# torch's F.linear on 2-D input with a bias records AddmmBackward0(bias, input, weight.t()).
# This primitive has the same node name and edges but reduces the bias gradient itself (one
# row sum) instead of leaving a broadcast gradient for the engine to reduce.
LINEAR = primitive("linear_addmm", _linear_fwd, "AddmmBackward0", save=((1, 2), (2, 1)))


@LINEAR.def_vmap
def _(batched, p, b, x, wt):
    return matmul(x, wt) + (b.unsqueeze(1) if batched[0] else b)


def _linear_bw_fwd(g, x, wt, p):
    mask, bias_2d = p
    z = None if mask[0] and mask[1] and mask[2] else np.zeros((), g.dtype)
    # (add.reduce is what ndarray.sum runs, without its Python wrapper)
    gb = (g.copy() if bias_2d else _add_reduce(g, 0)) if mask[0] else z
    if g.dtype.kind == "c":
        # complex: gradients of x @ wt use the conjugate operands (torch's addmm convention)
        x, wt = x.conj(), wt.conj()
    gx = g @ wt.T if mask[1] else z
    # The weight enters as weight.t(): compute its gradient as (g.T @ x).T so that, after
    # TBackward0 transposes it back, weight.grad is C-contiguous like the weight (torch's
    # AccumulateGrad layout contract); optimizer updates then stream through memory.
    gw = (g.T @ x).T if mask[2] else z
    return gb, gx, gw


# All three gradients of the fused linear in one kernel call; its own rule (in ndgrad ops)
# keeps double backward exact.
LINEAR_BW = primitive("linear_addmm_backward", _linear_bw_fwd, "AddmmBackwardBackward0",
                      save=((0, None), (1, None), (2, None)), n_out=3)


@LINEAR.def_vjp
def _(ctx, g):
    x, wt = ctx.saved
    n = ctx._next
    mask = (n[0] is not None, n[1] is not None, n[2] is not None)
    xs = x if x is not None else g
    ws = wt if wt is not None else g
    if not _tls.grad_enabled and not _state.special:
        # Plain backward (no graph recorded): the kernel directly, without a dispatch.
        gb, gx, gw = _linear_bw_fwd(g._data, xs._data, ws._data, (mask, bool(ctx._params)))
        return (Tensor(gb) if mask[0] else None, Tensor(gx) if mask[1] else None,
                Tensor(gw) if mask[2] else None)
    gb, gx, gw = LINEAR_BW.call(g, xs, ws, params=(mask, bool(ctx._params)))
    return (gb if mask[0] else None, gx if mask[1] else None, gw if mask[2] else None)


@LINEAR.def_batched_vjp
def _(ctx, g):
    # g carries a leading batch dim: (B, N, out). ctx._params says whether the bias is 2-D.
    x, wt = ctx.saved
    n = ctx._next
    gb = (g if ctx._params else g.sum(1)) if n[0] is not None else None
    gx = g.matmul(_conj(wt).mT) if n[1] is not None else None
    gw = _conj(x).mT.matmul(g) if n[2] is not None else None
    return gb, gx, gw


@LINEAR_BW.def_vjp
def _(ctx, gs):
    g, x, wt = ctx.saved
    mask, bias_2d = ctx._params
    ggb, ggx, ggw = tuple(gs) + (None,) * (3 - len(gs))
    ggb = ggb if mask[0] else None
    ggx = ggx if mask[1] else None
    ggw = ggw if mask[2] else None
    n = ctx._next
    d_g = d_x = d_w = None
    if n[0] is not None:
        parts = []
        if ggb is not None:
            parts.append(ggb if bias_2d else ggb.expand(*g.shape))
        if ggx is not None:
            parts.append(ggx.mm(wt))
        if ggw is not None:
            parts.append(x.mm(ggw))
        for t in parts:
            d_g = t if d_g is None else d_g + t
    # gx = g @ conj(wt).T and gw = conj(x).T @ g are conjugate-linear in wt and x
    if n[1] is not None and ggw is not None:
        d_x = g.mm(_conj(ggw).t())
    if n[2] is not None and ggx is not None:
        d_w = _conj(ggx).t().mm(g)
    return d_g, d_x, d_w
