"""DataLoader: batches from a dataset through a sampler and a collate function.

With ``num_workers=0`` everything runs in the calling process; with ``num_workers > 0`` the
samples are loaded and collated in worker processes (``_worker.py``), torch's way: the main
process runs the sampler and sends batch ``k`` of the epoch to worker ``k % num_workers``
(``prefetch_factor`` batches in flight per worker), and yields the batches in sampler order, so
a map-style dataset gives the same batches either way. ``pin_memory`` is accepted and ignored
(CPU only). The random draws are torch's, in torch's order: creating an iterator draws one
64-bit base seed from the loader's generator (or the default one), then the sampler draws its
permutation; persistent workers draw the base seed once, for their first epoch.
"""

import numpy as np

import itertools
import multiprocessing
import queue

from ... import _random
from ..._tensor import Tensor
from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]


get_worker_info = _worker.get_worker_info


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
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterator = None
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
        if self.num_workers > 0:
            if self.persistent_workers and self._iterator is not None:
                self._iterator._reset()
                return self._iterator
            it = _MultiProcessingIter(self)
            if self.persistent_workers:
                self._iterator = it
            return it
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


class _InfiniteNone:
    """The 'sampler' of an iterable dataset: the workers draw from their own iterators."""

    def __iter__(self):
        return itertools.repeat(None)


class _MultiProcessingIter:
    """An epoch (or, with persistent workers, every epoch) of batches loaded by workers."""

    def __init__(self, loader):
        # No reference back to the loader: a loader <-> iterator cycle would be collected by
        # the garbage collector, which closes the queues before __del__ can stop the workers.
        self._persistent = loader.persistent_workers
        try:
            self._len = len(loader)
        except TypeError:           # an IterableDataset without __len__
            self._len = None
        self._nw = loader.num_workers
        self._prefetch = loader.prefetch_factor
        self._timeout = loader.timeout
        self._index_sampler = (_InfiniteNone() if loader._iterable
                               else loader._index_sampler)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = loader._draw_base_seed()
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._data_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        auto = loader._auto_collation or (loader._iterable and loader.batch_size is not None)
        for i in range(self._nw):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop, daemon=True,
                            args=(loader.dataset, loader._iterable, iq, self._data_queue, auto,
                                  loader.collate_fn, loader.batch_size, loader.drop_last,
                                  self._base_seed, loader.worker_init_fn, i, self._nw))
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shutdown = False
        self._reset(first=True)

    def _reset(self, first=False):
        if not first:
            self._sampler_iter = iter(self._index_sampler)
        self._send_idx = self._rcvd_idx = 0
        self._task_info = {}
        self._outstanding = 0
        self._active = [True] * self._nw
        self._cycle = itertools.cycle(range(self._nw))
        if not first:
            for iq in self._index_queues:
                iq.put(_worker._ResumeIteration())
            pending = self._nw
            while pending:
                idx, _ = self._get()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch * self._nw):
            self._put_index()

    def _put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._nw):
            w = next(self._cycle)
            if self._active[w]:
                break
        else:
            return
        self._index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._outstanding += 1
        self._send_idx += 1

    def _get(self):
        if self._timeout > 0:
            try:
                return self._data_queue.get(timeout=self._timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") \
                    from None
        while True:
            try:
                return self._data_queue.get(timeout=5.0)
            except queue.Empty:
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(map(str, dead))}) exited unexpectedly") \
                        from None

    def __iter__(self):
        return self

    def __len__(self):
        if self._len is None:
            raise TypeError("this DataLoader's dataset has no len()")
        return self._len

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._active[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                _, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process(data)
            idx, data = self._get()
            self._outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._active[data.worker_id] = False
                self._put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process(data)

    def _process(self, data):
        self._put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        for iq in self._index_queues:
            iq.put(None)
        for w in self._workers:
            w.join(timeout=1.0)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues + [self._data_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
