"""DataLoader: batches from a dataset through a sampler and a collate function.

Everything runs in the calling process: ``num_workers``, ``pin_memory``, ``timeout``,
``worker_init_fn``, ``prefetch_factor`` and ``persistent_workers`` are accepted for
compatibility and ignored. The random draws are torch's, in torch's order: creating an
iterator draws one 64-bit base seed from the loader's generator (or the default one), then the
sampler draws its permutation, so shuffled batches equal torch's after the same seeding.
"""

import numpy as np

from ... import _random
from ..._tensor import Tensor
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]


def get_worker_info():
    """Always None: ndgrad loads data in the main process."""
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches (torch.utils.data.DataLoader)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            auto = batch_sampler is not None or (self._iterable and batch_size is not None)
            collate_fn = default_collate if auto else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                from math import ceil
                n = n // self.batch_size if self.drop_last else ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if self._iterable:
            return self._iter_iterable()
        return self._iter_map()

    def _draw_base_seed(self):
        gen = self.generator if self.generator is not None else _random.default_generator
        return int(gen._raw64(1)[0]) % (1 << 63)

    def _iter_map(self):
        # iter() of a generator-based sampler runs nothing yet, so the base seed is drawn
        # before the permutation, as in torch.
        sampler_iter = iter(self._index_sampler)
        self._base_seed = self._draw_base_seed()
        return self._gen_map(sampler_iter)

    def _gen_map(self, sampler_iter):
        ds = self.dataset
        getitems = getattr(ds, "__getitems__", None)
        if (self._auto_collation and type(ds) is TensorDataset
                and self.collate_fn is default_collate
                and not any(t.requires_grad for t in ds.tensors)):
            # Fast path, same result: gathering the rows of each tensor at once equals
            # stacking the samples one by one (a new contiguous tensor per field).
            arrays = [t._data for t in ds.tensors]
            for index in sampler_iter:
                idx = np.asarray(index, dtype=np.int64)
                yield [Tensor(a[idx]) for a in arrays]
            return
        for index in sampler_iter:
            if self._auto_collation:
                data = getitems(index) if callable(getitems) else [ds[i] for i in index]
            else:
                data = ds[index]
            yield self.collate_fn(data)

    def _iter_iterable(self):
        self._base_seed = self._draw_base_seed()
        return self._gen_iterable()

    def _gen_iterable(self):
        it = iter(self.dataset)
        if self.batch_size is None:
            for item in it:
                yield self.collate_fn(item)
            return
        while True:
            batch = []
            for item in it:
                batch.append(item)
                if len(batch) == self.batch_size:
                    break
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
            if len(batch) < self.batch_size:
                return
