"""default_collate and default_convert: how DataLoader turns a list of samples into a batch."""

import collections.abc
import re

import numpy as np

from ..._tensor import Tensor
from ..._creation import as_tensor, tensor as make_tensor
from ..._dtype import float64
from ..._ops.joins import stack

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _stack(tensors):
    return stack(tensors, 0)


def default_convert(data):
    """Convert NumPy arrays/scalars inside ``data`` to tensors, keeping the structure."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "SaUO":
            return data
        return as_tensor(data)
    if isinstance(data, np.generic) and data.dtype.kind not in "SaUO":
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack tensors / arrays along a new first dim, turn numbers into tensors (float ->
    float64, int -> int64, bool -> bool), keep strings, and recurse into dicts, named tuples,
    tuples and lists (transposing them), exactly as torch's default_collate."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray) or (isinstance(elem, np.generic)
                                        and not isinstance(elem, (np.str_, np.bytes_))):
        if elem.dtype.kind in "SaUO":
            raise TypeError(_ERR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return _stack([as_tensor(b) for b in batch])
        return make_tensor(np.array(batch))
    if isinstance(elem, float):
        return make_tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return make_tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return type(elem)([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))
