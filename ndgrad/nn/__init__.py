"""ndgrad.nn: modules, parameters, functional, init and utils, with torch.nn's API."""

from . import (
    functional,  # noqa: F401
    init,  # noqa: F401
    modules,  # noqa: F401
    parallel,  # noqa: F401
    utils,  # noqa: F401
)
from .modules import *  # noqa: F403
from .modules import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .parallel import DataParallel  # noqa: F401,E402
from . import attention, common_types, grad  # noqa: F401,E402  (issue 16)
from ._factory import factory_kwargs  # noqa: F401,E402
