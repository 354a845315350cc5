"""The layers of ndgrad.nn, one module per family (torch's file names)."""

from .activation import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import Bilinear, Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from .loss import *  # noqa: F403
from .misc import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .fractional_pooling import *  # noqa: F403
from .linear_cross_entropy import *  # noqa: F403
from .sync_batchnorm import *  # noqa: F403
from .container_deprecated import *  # noqa: F403
from . import batchnorm, channelshuffle, distance, fold, instancenorm, upsampling  # noqa: F401,E402
from . import linear_cross_entropy_options, utils  # noqa: F401,E402

# torch's file for the classes ndgrad defines in another family's module: each is also an
# attribute (and in ``__all__``) of the module named like torch's file, so
# ``torch.nn.modules.activation.MultiheadAttention`` and ``from torch.nn.modules.conv import
# LazyConv2d`` find the one class. Set here, where both modules are imported, so no family module
# imports another that imports it back.
from . import (activation as _activation, conv as _conv, fractional_pooling as _fractional,  # noqa: E402
               lazy as _lazy, linear as _linear, linear_cross_entropy as _lce,
               loss as _loss, pooling as _pooling, transformer as _transformer)

_ALSO_IN_TORCH_FILE = {
    _activation: (_transformer, ["MultiheadAttention"]),
    _conv: (_lazy, ["_LazyConvXdMixin", "LazyConv1d", "LazyConv2d", "LazyConv3d",
                    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]),
    _linear: (_lazy, ["LazyLinear"]),
    _loss: (_lce, ["LinearCrossEntropyLoss"]),
    _pooling: (_fractional, ["FractionalMaxPool2d", "FractionalMaxPool3d"]),
}
for _torch_file, (_home, _names) in _ALSO_IN_TORCH_FILE.items():
    for _name in _names:
        setattr(_torch_file, _name, getattr(_home, _name))
        if not _name.startswith("_") and _name not in _torch_file.__all__:
            _torch_file.__all__.append(_name)
del _torch_file, _home, _names, _name
