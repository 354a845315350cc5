"""Writes at per-dim indices: index_reduce/index_reduce_ (``IndexReduceBackward0``, whose
backward is scatter_reduce's). (put/put_, the writes at flat indices, live in ``indexing``.)

The in-place forms compute out of place from a clone and ``copy_`` the result, so the
autograd history stays valid and a failed check writes nothing.
"""

import numpy as np

from .._tensor import Tensor
from .indexing import SCATTER_REDUCE, _scatter_reduce_fwd
from .arguments import wrap_dim
from .registry import _VjpArgs, as_tensor_arg, no_forward_ad, primitive, wrap
from .inplace import apply_inplace
from .methods import bind

__all__ = ["index_reduce"]


_REDUCES = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    x = as_tensor_arg(input)
    idx, params = _index_reduce_args(x, dim, index, source, reduce, include_self)
    return INDEX_REDUCE.call(x, idx, source, params=params)


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    idx, params = _index_reduce_args(self, dim, index, source, reduce, include_self)
    return apply_inplace(INDEX_REDUCE, self, idx, source, params=params)


def _index_reduce_args(x, dim, index, source, reduce, include_self):
    """torch's checks, then (the index as int64, the primitive's params)."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = wrap_dim(dim, x.dim())
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {index.dtype._legacy[:-6]} and size: "
                         f"{list(index.shape)}")
    if index.dtype.__str__() not in ("torch.int64", "torch.int32"):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._legacy[:-6]}")
    if x.dtype != source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({x.dtype._legacy[:-6]}) and source "
                           f"({source.dtype._legacy[:-6]}) must have the same scalar type")
    src_len = source.shape[dim] if source.dim() > dim else 1
    if index.numel() != src_len:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({src_len}), for dim: {dim}")
    idx = index.reshape(-1).long()
    n = x.shape[dim] if x.dim() else 1
    d = idx._data
    if d.size and (d.min() < 0 or d.max() >= n):  # torch accepts no negative index here
        raise IndexError("index out of range in self")
    return idx, (dim, reduce, bool(include_self))


def _full_index(index, source, dim):
    """The 1-D `index` spread over `source`'s shape along `dim` (scatter_reduce's index)."""
    shape = [1] * source.ndim
    shape[dim] = -1
    return np.ascontiguousarray(np.broadcast_to(index.reshape(shape), source.shape))


def _index_reduce_fwd(x, index, source, p):
    if x.ndim == 0:  # a 0-d self (and source) reduces as a 1-element vector
        return _index_reduce_fwd(x.reshape(1), index, source.reshape(1), p).reshape(())
    return _scatter_reduce_fwd(x, _full_index(index, source, p[0]), source, p)


# index_reduce is scatter_reduce with the index spread along dim; its backward is
# scatter_reduce's (torch's index_reduce_backward is the same formula), recorded under torch's
# name. torch has no forward AD for it.
INDEX_REDUCE = primitive("index_reduce", _index_reduce_fwd, "IndexReduceBackward0",
                         save=((0, None), (1, None), (2, None), ("out", None)))
INDEX_REDUCE.def_jvp(no_forward_ad("index_reduce"))


@INDEX_REDUCE.def_vjp
def _(ctx, g):
    x, index, source, out = ctx.saved
    scalar = x._data.ndim == 0
    if scalar:  # as the forward: the 1-element vector case, reshaped back
        x, source, out, g = x.reshape(1), source.reshape(1), out.reshape(1), g.reshape(1)
    full = wrap(_full_index(index._data, source._data, ctx._params[0]))
    n = ctx._next
    args = _VjpArgs((x, full, source, out), ctx._params, (n[0], None, n[2]))
    grads = SCATTER_REDUCE.vjp(args, g)
    if scalar:
        grads = tuple(None if t is None else t.reshape(()) for t in grads)
    return grads


def _bind():
    bind({"index_reduce": index_reduce, "index_reduce_": _index_reduce_})


_bind()
del Tensor
