"""``DataParallel`` without accelerators: as torch's when no GPU is present, it keeps the
module (state dict keys gain the ``module.`` prefix) and forwards every call to it."""

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """``DataParallel(module, device_ids=None, output_device=None, dim=0)``: with no
    accelerator, ``forward`` is ``module(*inputs, **kwargs)`` and ``device_ids`` is empty."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form needs an accelerator: it raises as torch's does without one."""
    raise RuntimeError("device type could not be determined")
