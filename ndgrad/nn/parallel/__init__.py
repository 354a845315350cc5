"""ndgrad.nn.parallel: data parallelism. ``DataParallel`` is torch's behaviour on a machine
without accelerators (it holds the module and calls it); ``DistributedDataParallel`` averages
gradients across the ranks of ``ndgrad.distributed`` (``distributed.py``)."""

from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
