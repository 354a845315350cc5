"""``native_dropout`` (torch's NativeDropoutBackward0): ``x * noise`` with the scaled keep
mask ``noise = bernoulli(1 - p) / (1 - p)`` drawn as torch's dropout (params = the noise
array). The op is linear in x: its VJP multiplies the gradient by the same noise (so its
double backward is torch's MulBackward0), its tangent is the op on the input's tangent.
"""

from .._tensor import Tensor
from .registry import primitive

__all__ = []

NATIVE_DROPOUT = primitive("native_dropout", lambda x, p: x * p, "NativeDropoutBackward0",
                           linear=True)


@NATIVE_DROPOUT.def_vjp
def _(ctx, g):
    return (g * Tensor(ctx._params),)
