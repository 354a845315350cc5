"""Container: torch's deprecated predecessor of Module (it only registers its keyword
arguments as submodules and warns)."""

import warnings

from .module import Module

__all__ = ["Container"]


class Container(Module):
    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)
