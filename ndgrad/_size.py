"""``Size``: the tuple subclass returned by ``Tensor.shape`` / ``size()``."""

__all__ = ["Size"]


class Size(tuple):
    """A tensor shape; a tuple of ints that prints like torch's (``torch.Size([2, 3])``)."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))
