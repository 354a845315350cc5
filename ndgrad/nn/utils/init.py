"""``nn.utils.skip_init``: a module built without running its parameter initialisation.

torch builds the module on the meta device (where its ``nn.init`` calls draw nothing) and then
gives it empty memory (``to_empty``). ndgrad has no meta device: it builds the module on the
CPU with the global random state restored afterwards, so, as with torch, the generator is where
it was before the call, and then calls ``to_empty``. The values are uninitialised either way.
"""

import inspect

from ..._random import fork_rng
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Instantiate `module_cls(*args, **kwargs)` with parameters and buffers uninitialised.

    The module must take a ``device`` argument (which ``skip_init`` passes on, as torch's) and
    must do nothing in its constructor with its parameters but initialise them."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    with fork_rng():
        module = module_cls(*args, **kwargs)
    return module.to_empty(device=final_device)
