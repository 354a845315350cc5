"""ndgrad.nn: modules, parameters, functional, init and utils, with torch.nn's API."""

from . import (
    functional,  # noqa: F401
    init,  # noqa: F401
    modules,  # noqa: F401
    parallel,  # noqa: F401
    utils,  # noqa: F401
)
from .modules import *  # noqa: F403
import sys as _sys  # noqa: E402

# The star import also binds nn.modules' submodules, nn.modules.utils (torch's _pair,
# _ntuple, ...) among them; nn.utils stays nn's own package (clip_grad_norm_, parametrize).
utils = _sys.modules[__name__ + ".utils"]  # noqa: F811
from .modules import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .parallel import DataParallel  # noqa: F401,E402
from . import attention, common_types, grad  # noqa: F401,E402  (issue 16)
from ._factory import factory_kwargs  # noqa: F401,E402
