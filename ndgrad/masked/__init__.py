"""torch.masked: reductions and normalizations that ignore the elements a boolean ``mask``
marks invalid (``_ops``). Strided tensors only; ``MaskedTensor`` is not provided."""

from . import _ops  # noqa: F401
from ._ops import *  # noqa: F401,F403
from ._ops import __all__  # noqa: F401
