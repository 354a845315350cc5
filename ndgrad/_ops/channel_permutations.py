"""Primitives that only move elements between the channel and spatial dims:
``pixel_shuffle`` (``(*, C r^2, H, W) -> (*, C, H r, W r)``), its inverse ``pixel_unshuffle``
and ``channel_shuffle`` (``(N, C, *)``: channel ``g * (C / G) + k`` moves to ``k * G + g``).

Invariant: each is a fixed permutation, so each is linear (forward AD derives from the op
itself) and its VJP is the inverse permutation: pixel_shuffle and pixel_unshuffle undo each
other, and channel_shuffle with ``C / G`` groups undoes the one with ``G`` groups.
"""

import numpy as np

from .registry import primitive

__all__ = []


def _pixel_shuffle_fwd(x, p):
    r = p[0]
    *lead, c, h, w = x.shape
    c_out = c // (r * r)
    y = x.reshape(*lead, c_out, r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(y).reshape(*lead, c_out, h * r, w * r)


def _pixel_unshuffle_fwd(x, p):
    r = p[0]
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(y).reshape(*lead, c * r * r, h // r, w // r)


def _channel_shuffle_fwd(x, p):
    g = p[0]
    n, c, *rest = x.shape
    y = x.reshape(n, g, c // g, *rest).swapaxes(1, 2)
    return np.ascontiguousarray(y).reshape(x.shape)


PIXEL_SHUFFLE = primitive("pixel_shuffle", _pixel_shuffle_fwd, "PixelShuffleBackward0",
                          linear=True)
PIXEL_UNSHUFFLE = primitive("pixel_unshuffle", _pixel_unshuffle_fwd, "PixelUnshuffleBackward0",
                            linear=True)
CHANNEL_SHUFFLE = primitive("channel_shuffle", _channel_shuffle_fwd, "ChannelShuffleBackward0",
                            linear=True)


@PIXEL_SHUFFLE.def_vjp
def _(ctx, g):
    return (PIXEL_UNSHUFFLE.call(g, params=ctx._params),)


@PIXEL_UNSHUFFLE.def_vjp
def _(ctx, g):
    return (PIXEL_SHUFFLE.call(g, params=ctx._params),)


@CHANNEL_SHUFFLE.def_vjp
def _(ctx, g):
    return (CHANNEL_SHUFFLE.call(g, params=(g.shape[1] // ctx._params[0],)),)


# torch's native_channel_shuffle: the same permutation, but torch defines no derivative for it
# (its grad_fn is NotImplemented and backward raises), so neither does ndgrad.
def _native_channel_shuffle_vjp(ctx, g):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


NATIVE_CHANNEL_SHUFFLE = primitive("native_channel_shuffle", _channel_shuffle_fwd,
                                   "NotImplemented")
NATIVE_CHANNEL_SHUFFLE.def_vjp(_native_channel_shuffle_vjp)
