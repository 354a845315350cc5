"""The layers of ndgrad.nn, one module per family (torch's file names)."""

from .module import Module  # noqa: F401
from .linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear  # noqa: F401
from .activation import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
