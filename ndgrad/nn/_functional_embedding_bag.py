"""``embedding_bag`` (functional, and torch's top-level four-output form): the argument
handling of torch's ``F.embedding_bag`` and ``at::embedding_bag`` in front of the primitive of
``_ops/embedding_bag.py``.

Invariant: every check runs before the ``max_norm`` renormalisation (the only mutation) and
before the primitive, so a rejected call changes nothing.
"""

import warnings

import numpy as np

from .. import _dtype
from .._ops.embedding_bag import (EMBEDDING_BAG, EMBEDDING_BAG_PLAIN, bag_counts,
                                  bag_max_indices)
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _legacy(t):
    return _dtype.from_np(t._data.dtype)._legacy


def embedding_bag_tuple(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                        sparse=False, per_sample_weights=None, include_last_offset=False,
                        padding_idx=None):
    """torch.embedding_bag: (output, offset2bag, bag_size, max_indices)."""
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t._data.dtype.kind not in "iu":
            pos = 1 if name == "indices" else 2
            raise RuntimeError(f"Expected tensor for argument #{pos} '{name}' to have one of "
                               f"the following scalar types: Long, Int; but got torch."
                               f"{_legacy(t)} instead (while checking arguments for "
                               "embedding_bag)")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        if padding_idx < 0:
            padding_idx += num
    idx = indices._data.reshape(-1).astype(np.int64)
    off = offsets._data.reshape(-1).astype(np.int64)
    m = idx.shape[0]
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(off[0])}\n"
                           f"[ torch.{_legacy(offsets)}{{}} ]")
    if off.size and off[-1] > m:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {m} but got "
                           f"offsets[-1] of {int(off[-1])}")
    if off.size > 1 and (np.diff(off) < 0).any():
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    bad = (idx < 0) | (idx >= num)
    if bad.any():
        j = int(np.argmax(bad))
        raise RuntimeError(f"Index {j} of input takes value {int(idx[j])} which is not in the "
                           f"valid range [0, {num})")
    nb = off.shape[0] - 1 if include_last_offset else off.shape[0]
    nb = max(nb, 0)
    bags = np.searchsorted(off, np.arange(m), side="right") - 1
    kept = np.ones(m, bool) if padding_idx is None else idx != padding_idx
    bags = np.clip(bags, 0, max(nb - 1, 0))
    if nb == 0:
        kept[:] = False
    params = (idx, bags, kept, nb, int(mode), bool(scale_grad_by_freq))
    if per_sample_weights is not None:
        out = EMBEDDING_BAG.call(weight, per_sample_weights, params=params)
    else:
        out = EMBEDDING_BAG_PLAIN.call(weight, params=params)
    counts = bag_counts(params)
    if mode == 0:
        # torch's float32 fast path (no padding index) leaves offset2bag empty
        fast = weight._data.dtype == np.float32 and padding_idx is None
        o2b = np.zeros(0, np.int64) if fast else bags.astype(np.int64)
        aux = (o2b, np.zeros(nb, np.int64), np.zeros(nb, np.int64))
    else:
        maxi = bag_max_indices(weight._data, params) if mode == 2 else counts
        aux = (bags.astype(np.int64), counts.astype(np.int64), np.maximum(maxi, 0))
    return (out,) + tuple(Tensor(a) for a in aux)


def _type_str(obj):
    return "<class 'torch.Tensor'>" if isinstance(obj, Tensor) else str(type(obj))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embeddings (EmbeddingBagBackward0)."""
    if weight._data.dtype == np.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights "
                         f"(torch.Size({list(per_sample_weights.shape)})) is not None, then it "
                         f"must have the same shape as the input "
                         f"(torch.Size({list(input.shape)}))")
    if weight is None or weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {_type_str(offsets)}")
        offsets = Tensor(np.arange(0, input.numel(), max(input.shape[1], 1), dtype=np.int64)
                         if input.shape[1] else np.zeros(input.shape[0], np.int64))
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if max_norm is not None:
        with no_grad():
            rows = np.unique(input._data)
            rows = rows[(rows >= 0) & (rows < weight.shape[0])]
            w = weight._data
            norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            w[rows] = (w[rows] * scale[:, None]).astype(w.dtype)
            weight._vc[0] += 1
    return embedding_bag_tuple(weight, input, offsets, scale_grad_by_freq, _MODES[mode], sparse,
                               per_sample_weights, include_last_offset, padding_idx)[0]
