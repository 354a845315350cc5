"""The packing primitive of ``nn.utils.rnn``: ``pack_padded_sequence`` gathers the valid
steps of a padded batch into one ``(sum(lengths), *)`` tensor (torch's
``PackPaddedSequenceBackward0``), and ``pack_padded_sequence_backward`` scatters such a
tensor back into a zero-padded batch.

Both take ``params = (batch_sizes, batch_first, padded_shape)`` where ``batch_sizes`` is a tuple
of non-increasing ints (sequences sorted by decreasing length): step ``t`` of the packed data
holds rows ``0 .. batch_sizes[t] - 1`` of time step ``t``. Invariant: the two ops are each
other's adjoint and both are linear, so every VJP is the other op and double backward is
exact. Forward AD through the packing raises torch's NotImplementedError, as torch does.
"""

import numpy as np

from .registry import no_forward_ad, primitive

__all__ = []


def _time_major(x, batch_first):
    return np.swapaxes(x, 0, 1) if batch_first else x


def _pack_fwd(x, p):
    batch_sizes, batch_first = p[:2]
    x = _time_major(x, batch_first)
    return np.concatenate([x[t, :b] for t, b in enumerate(batch_sizes)], 0)


def _unpack_fwd(data, p):
    batch_sizes, batch_first, padded_shape = p
    out = np.zeros(padded_shape, data.dtype)
    view = _time_major(out, batch_first)
    start = 0
    for t, b in enumerate(batch_sizes):
        view[t, :b] = data[start:start + b]
        start += b
    return out


PACK_PADDED = primitive("pack_padded_sequence", _pack_fwd, "PackPaddedSequenceBackward0",
                        linear=True)
PACK_PADDED_BW = primitive("pack_padded_sequence_backward", _unpack_fwd,
                           "PackPaddedSequenceBackwardBackward0", linear=True)


# torch declares no forward-mode formula for the packing
PACK_PADDED.def_jvp(no_forward_ad("_pack_padded_sequence"))


@PACK_PADDED.def_vjp
def _(ctx, g):
    return (PACK_PADDED_BW.call(g, params=ctx._params),)


@PACK_PADDED_BW.def_vjp
def _(ctx, g):
    return (PACK_PADDED.call(g, params=ctx._params),)
