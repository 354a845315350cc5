"""``torch.layout`` and ``torch.memory_format``: the two enum-like types whose instances torch
code passes and compares (``t.layout == torch.strided``, ``memory_format=torch.channels_last``).

Invariant: each name has exactly one instance, so ``is`` and ``==`` agree, and pickling or
copying one gives the same instance back (it reduces to its module-level name). ``str`` and
``repr`` are torch's (``torch.strided``), which the ops that take a ``memory_format`` read by
suffix. ndgrad tensors are always strided; the memory formats only steer ``contiguous``,
``is_contiguous`` and friends.
"""

__all__ = ["layout", "memory_format", "strided", "contiguous_format", "preserve_format",
           "channels_last", "channels_last_3d", "sparse_coo", "sparse_csr", "sparse_csc",
           "sparse_bsr", "sparse_bsc"]


class _Named:
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return self._name           # the module-level instance of that name

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class layout(_Named):
    """The type of ``torch.strided`` (ndgrad has no other layout)."""

    __slots__ = ()


class memory_format(_Named):
    """The type of ``torch.contiguous_format``, ``channels_last``, ..."""

    __slots__ = ()


def is_contiguous_in(array, fmt):
    """``Tensor.is_contiguous(memory_format=fmt)`` of an ndarray: dense with its dims laid
    out, outer to inner, in the format's order (size-1 dims may carry any stride)."""
    if not isinstance(fmt, memory_format):
        raise TypeError("is_contiguous(): argument 'memory_format' must be "
                        f"torch.memory_format, not {type(fmt).__name__}")
    order = {"channels_last": (0, 2, 3, 1), "channels_last_3d": (0, 2, 3, 4, 1)}.get(fmt._name)
    if order is None:               # contiguous_format, and preserve_format as torch
        return array.flags.c_contiguous
    if array.ndim != len(order):
        return False
    expected = 1
    for d in reversed(order):
        if array.shape[d] != 1:
            if array.strides[d] != expected * array.itemsize:
                return False
            expected *= array.shape[d]
    return True


strided = layout("strided")
# torch's sparse layouts, as names to compare with and to be refused by (no ndgrad tensor has
# one: ``t.layout`` is always ``strided``)
sparse_coo, sparse_csr, sparse_csc = layout("sparse_coo"), layout("sparse_csr"), layout("sparse_csc")
sparse_bsr, sparse_bsc = layout("sparse_bsr"), layout("sparse_bsc")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
