"""The noise tensor dropout multiplies its input by: ``bernoulli(1 - p) / (1 - p)`` drawn as
torch's CPU dropout draws it, from the default generator.

``noise_like`` is a *random source* of ``ndgrad.compile``: while a region is traced, the
tracer records each call as an instruction of the program (its argument the input tensor), so
every compiled call draws fresh noise, in the same order and from the same generator stream as
eager mode. Callers reach it as a module attribute (``_dropout_noise.noise_like(...)``) so the
tracer can see the call.
"""

from .. import _random
from .._tensor import Tensor

__all__ = ["noise_like"]


def noise_like(input, p, batched_dim=None):
    """The noise for `input`: one draw per element, or with `batched_dim`, one per index of
    the leading `batched_dim` dims (feature dropout: the rest broadcast)."""
    shape = input._data.shape
    if batched_dim is not None:
        shape = shape[:batched_dim] + (1,) * (len(shape) - batched_dim)
    return Tensor(_random.dropout_noise(shape, p, input._data.dtype))
