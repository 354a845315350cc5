"""ndgrad.nn.parallel: the data-parallel wrappers' CPU faces. ``DataParallel`` is torch's
behaviour on a machine without accelerators: it holds the module and calls it.
(``DistributedDataParallel`` belongs with ``ndgrad.distributed``.)"""

from .data_parallel import DataParallel, data_parallel  # noqa: F401

__all__ = ["DataParallel", "data_parallel"]
