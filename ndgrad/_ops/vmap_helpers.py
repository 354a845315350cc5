"""Helpers for the batching rules that ops declare with ``OpDef.def_vmap``.

A rule gets its tensor arguments as *values*: a batched argument carries every sample, batch
at dim 0, and one more dim than the sample (its logical rank + 1); an unbatched one is as
the op got it. These helpers line values up so that one call of an op on them computes
every sample (the machinery that calls rules is ``_functorch/batching.py``).
"""

from .._tensor import Tensor

__all__ = ["align", "batch_size", "expand_batch", "is_batched", "logical_rank", "shift",
           "to_batched"]

# The tensor type a function under vmap sees (``_functorch.batching.BatchedTensor``), attached
# by that module at import; None until then (nothing can be batched).
batched_type = None


def is_batched(*tensors):
    """Whether one of `tensors` is a BatchedTensor: its raw ``_data`` is a placeholder, so a
    wrapper that reads data must leave the work to a batching rule."""
    bt = batched_type
    return bt is not None and any(type(x) is bt for x in tensors)


def logical_rank(x, is_batched):
    """The rank of one sample of an argument."""
    if not isinstance(x, Tensor):
        return 0
    return x.dim() - 1 if is_batched else x.dim()


def align(batched, values, rank=None):
    """`values` with every batched one's sample dims right-aligned to `rank` (default: the
    largest sample rank) by size-1 dims inserted after the batch dim, so that broadcasting
    the values broadcasts each sample as the op would."""
    if rank is None:
        rank = max(logical_rank(x, b) for x, b in zip(values, batched))
    out = []
    for x, b in zip(values, batched):
        if b and x.dim() - 1 < rank:
            shape = tuple(x.shape)
            x = x.reshape(shape[:1] + (1,) * (rank + 1 - x.dim()) + shape[1:])
        out.append(x)
    return tuple(out)


def batch_size(batched, values):
    for x, b in zip(values, batched):
        if b:
            return x.shape[0]
    raise RuntimeError("vmap: no batched argument")


def expand_batch(x, size):
    """An unbatched tensor as a value of `size` equal samples (an expanded view)."""
    return x.unsqueeze(0).expand((size,) + tuple(x.shape))


def to_batched(batched, values):
    """Every tensor argument as a value with the batch at dim 0 (unbatched ones expanded)."""
    size = batch_size(batched, values)
    return tuple(expand_batch(x, size) if isinstance(x, Tensor) and not b else x
                 for x, b in zip(values, batched))


def shift(dims):
    """Sample dims (an int, a tuple, or None) as dims of the value."""
    if dims is None:
        return None
    if isinstance(dims, int):
        return dims + 1
    return tuple(d + 1 for d in dims)
