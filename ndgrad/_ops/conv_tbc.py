"""``conv_tbc``: a 1-d convolution on (time, batch, channel) input with a (kernel, in, out)
weight, zero-padded by ``pad`` frames at both ends of time (torch's ConvTbcBackward0).

out[t, b, o] = bias[o] + sum_k xpad[t + k, b, :] @ weight[k, :, o].
The VJP is written in ndgrad ops (slices, matmuls, pads), so it is differentiable again;
torch has no forward-mode formula and neither does ndgrad.
"""

import numpy as np

from .conv_pool import constant_pad
from .joins import stack
from .registry import no_forward_ad, primitive

__all__ = []


def _fwd(x, w, b, p):
    pad = p
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    k = w.shape[0]
    t_out = xp.shape[0] - k + 1
    out = np.broadcast_to(b, (max(t_out, 0), x.shape[1], w.shape[2])).copy()
    for j in range(k):
        out += np.matmul(xp[j:j + t_out], w[j])
    return out


CONV_TBC = primitive("conv_tbc", _fwd, "ConvTbcBackward0", save=((0, None), (1, None)))


@CONV_TBC.def_vjp
def _(ctx, g):
    x, w = ctx.saved
    pad = ctx._params
    k = w.shape[0]
    t_out = g.shape[0]
    need = ctx.needs_input_grad
    gx = gw = gb = None
    if need[0]:
        # each tap j sends g @ w[j]^T back to frames j .. j + t_out of the padded input
        total = x.shape[0] + 2 * pad
        parts = [constant_pad(g.matmul(w[j].t()), ((j, total - t_out - j), (0, 0), (0, 0)), 0)
                 for j in range(k)]
        gxp = parts[0]
        for q in parts[1:]:
            gxp = gxp + q
        gx = gxp[pad:pad + x.shape[0]]
    if need[1]:
        xp = constant_pad(x, ((pad, pad), (0, 0), (0, 0)), 0)
        flat_g = g.reshape(-1, g.shape[2])
        gw = stack([xp[j:j + t_out].reshape(-1, x.shape[2]).t().matmul(flat_g)
                    for j in range(k)], 0)
    if need[2]:
        gb = g.sum((0, 1))
    return gx, gw, gb


CONV_TBC.def_jvp(no_forward_ad("conv_tbc"))
