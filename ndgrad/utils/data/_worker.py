"""DataLoader worker processes: the loop each worker runs, its seeding, ``get_worker_info``.

A worker receives ``(task index, sampler indices)`` on its own index queue and answers
``(task index, batch)`` on the shared result queue; ``None`` tells it to exit and a
``_ResumeIteration`` starts a new epoch (persistent workers). Seeding is torch's: worker ``i``
seeds ``random`` and ndgrad's default generator with ``base_seed + i`` and NumPy's global
generator with the 4-word SeedSequence state of ``(i, base_seed)``.

Invariant: an exception inside a worker never kills it; it travels back as an
``ExceptionWrapper`` and is re-raised by the main process, with the worker's traceback.
"""

import queue
import random
import sys
import traceback

import numpy as np

from ..._random import manual_seed

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper", "worker_loop", "numpy_seed"]

_worker_info = None


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: id, num_workers, seed, dataset."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    """The :class:`WorkerInfo` of this worker process; None in the main process."""
    return _worker_info


def numpy_seed(base_seed, worker_id):
    """The seed torch gives NumPy in worker ``worker_id``: SeedSequence's first 4 words of
    the entropy ``[worker_id, low 32 bits, high 32 bits]`` of the base seed."""
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]
    return np.random.SeedSequence(entropy).generate_state(4)


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a type that needs other arguments
            raise RuntimeError(msg) from None
        raise exc


class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch after the first."""


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _Fetcher:
    def __init__(self, dataset, iterable, auto_collation, collate_fn, batch_size, drop_last):
        self.dataset, self.iterable = dataset, iterable
        self.auto, self.collate_fn = auto_collation, collate_fn
        self.batch_size, self.drop_last = batch_size, drop_last
        self.it = iter(dataset) if iterable else None

    def fetch(self, index):
        if self.iterable:
            if self.auto:
                batch = []
                for item in self.it:
                    batch.append(item)
                    if len(batch) == self.batch_size:
                        break
                if not batch or (self.drop_last and len(batch) < self.batch_size):
                    raise StopIteration
                return self.collate_fn(batch)
            return self.collate_fn(next(self.it))
        ds = self.dataset
        if self.auto:
            getitems = getattr(ds, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [ds[i] for i in index]
        else:
            data = ds[index]
        return self.collate_fn(data)


def worker_loop(dataset, iterable, index_queue, data_queue, auto_collation, collate_fn,
                batch_size, drop_last, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(numpy_seed(base_seed, worker_id))
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                              dataset=dataset)
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = _Fetcher(dataset, iterable, auto_collation, collate_fn, batch_size,
                           drop_last)
    except Exception:  # noqa: BLE001 - reported to the main process
        init_error = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    ended = False
    while True:
        try:
            task = index_queue.get(timeout=5.0)
        except queue.Empty:
            continue
        if task is None:
            break
        if isinstance(task, _ResumeIteration):
            data_queue.put((task, None))
            ended = False
            if fetcher is not None:
                fetcher = _Fetcher(dataset, iterable, auto_collation, collate_fn, batch_size,
                                   drop_last)
            continue
        if ended:
            continue
        idx, index = task
        if init_error is not None:
            data, init_error = init_error, None
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                data = _IterableDatasetStopIteration(worker_id)
                ended = True
            except Exception:  # noqa: BLE001 - reported to the main process
                data = ExceptionWrapper(sys.exc_info(),
                                        f"in DataLoader worker process {worker_id}")
        data_queue.put((idx, data))
    data_queue.cancel_join_thread()
