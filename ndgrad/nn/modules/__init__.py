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
