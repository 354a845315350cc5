"""ndgrad.nn.parallel: data parallelism (DistributedDataParallel lives in ``distributed``)."""

from .distributed import DistributedDataParallel  # noqa: F401
