"""The nodes of ``normal(mean, std)`` with a tensor mean and/or std: the drawn values recorded
as torch's NormalBackward1 (tensor mean), NormalBackward2 (tensor std) or NormalBackward3
(both), whose gradients are zeros shaped like the inputs.

Invariant: imports only the tensor floor and the registry, so the factories in ``_creation``
(which draw the values) can record through it without importing the op families above them.
"""

import numpy as np

from .._tensor import Tensor
from .registry import primitive

__all__ = ["recorded_normal"]

NORMAL_TF = primitive("normal_tensor_float", lambda m, vals: vals, "NormalBackward1",
                      save=((0, None),))
NORMAL_FT = primitive("normal_float_tensor", lambda s, vals: vals, "NormalBackward2",
                      save=((0, None),))
NORMAL_TT = primitive("normal_tensor_tensor", lambda m, s, vals: vals, "NormalBackward3",
                      save=((0, None), (1, None)))
for _op in (NORMAL_TF, NORMAL_FT, NORMAL_TT):
    _op.def_vjp(lambda ctx, g: tuple(Tensor(np.zeros(t._data.shape, g._data.dtype))
                                     for t in ctx.saved))


def recorded_normal(mean, std, vals):
    """The drawn `vals` (an array) as the output of torch's node for normal(mean, std)."""
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        return NORMAL_TT.call(mean, std, params=vals)
    if isinstance(mean, Tensor):
        return NORMAL_TF.call(mean, params=vals)
    return NORMAL_FT.call(std, params=vals)
