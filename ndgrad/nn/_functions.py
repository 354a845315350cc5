"""Custom autograd Functions behind nn modules (torch's ``torch/nn/_functions.py``).

``CrossMapLRN2d``: the legacy Lua-torch local response normalisation across channels of
(N, C, H, W) input, with torch's forward (a running channel-window sum whose window keeps
channel 0, as torch's update rule does) and torch's hand-written backward, so values and
gradients are torch's. Like torch's, it is once differentiable and has no forward-mode rule.
"""

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function, once_differentiable


def _window_sums(sq, size):
    """torch's scale before ``* alpha / size + k``: for channel c, the sum of squares over
    channel 0 and channels max(1, c - pre_pad + 1) .. min(c + pre_pad - 1, C - 1)."""
    channels = sq.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    cum = np.concatenate([np.zeros_like(sq[:, :1]), np.cumsum(sq, axis=1)], axis=1)
    c = np.arange(channels)
    hi = np.minimum(c + pre_pad - 1, channels - 1)
    lo = np.maximum(1, c - pre_pad + 1)
    inner = np.where((hi >= lo)[None, :, None, None], cum[:, hi + 1] - cum[:, lo], 0)
    return sq[:, :1] + inner


class CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        x = input._data
        scale = _window_sums(x * x, size) * (alpha / size) + k
        out = (scale ** -beta * x).astype(x.dtype)
        ctx.scale = scale.astype(x.dtype)
        ctx.save_for_backward(input, Tensor(out))
        return Tensor(out)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        x, out, g, scale = input._data, output._data, grad_output._data, ctx.scale
        size = ctx.size
        channels = x.shape[1]
        inverse_pre_pad = int(size - (size - 1) / 2)
        # padded ratio: g * out / scale placed at channel offset inverse_pre_pad in C + size - 1
        padded = np.zeros((x.shape[0], channels + size - 1) + x.shape[2:], x.dtype)
        padded[:, inverse_pre_pad: inverse_pre_pad + channels] = g * out / scale
        cum = np.concatenate([np.zeros_like(padded[:, :1]), np.cumsum(padded, axis=1)], axis=1)
        accum = cum[:, size: size + channels] - cum[:, :channels]   # sum of padded[c: c + size]
        cache = 2 * ctx.alpha * ctx.beta / size
        grad = scale ** -ctx.beta * g - cache * x * accum
        return Tensor(grad.astype(x.dtype)), None, None, None, None
