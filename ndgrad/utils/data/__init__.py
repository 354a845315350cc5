"""Datasets, samplers (DistributedSampler too) and DataLoader (torch.utils.data), loading in the
main process or in worker processes."""

from .dataset import (Dataset, IterableDataset, TensorDataset, ConcatDataset, Subset,  # noqa
                      random_split, ChainDataset, StackDataset)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,  # noqa
                      WeightedRandomSampler, BatchSampler)
from .distributed import DistributedSampler  # noqa: F401
from .dataloader import DataLoader, get_worker_info  # noqa: F401
from ._collate import default_collate, default_convert  # noqa: F401

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset",
           "random_split", "ChainDataset", "StackDataset", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DataLoader",
           "get_worker_info", "DistributedSampler", "default_collate", "default_convert"]
