"""``nn.Parameter`` (a leaf tensor that a Module registers as trainable) and ``nn.Buffer``.

A Parameter shares the memory of the tensor it is built from and is always a leaf; ops on it
return plain Tensors, like torch's, and take the dispatcher's fast paths (``fast_type``): it
changes nothing an op reads.
"""

import numpy as np

from .. import _dtype
from .._ops.registry import fast_type
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "is_lazy"]


@fast_type
class Parameter(Tensor):
    """A Tensor that is a module parameter: ``Parameter(data=None, requires_grad=True)``.

    >>> p = Parameter(ndgrad.ones(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            arr = np.empty((0,), _dtype.get_default_dtype().np)
        elif isinstance(data, Tensor):
            arr = data._data
        else:
            raise TypeError(f"Parameter(): argument 'data' (position 1) must be Tensor, not "
                            f"{type(data).__name__}")
        Tensor.__init__(self, arr)
        if isinstance(data, Tensor):
            # torch's _make_subclass shares storage and the version counter.
            self._vc = data._vc
        self.requires_grad_(bool(requires_grad))

    def __repr__(self, *, tensor_contents=None):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._data, self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor(self._data.copy()), self._rg)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(Tensor(np.array(data)), requires_grad)


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return type.__instancecheck__(cls, instance)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute.

    ``Buffer(data, persistent=True)`` returns a plain Tensor flagged for registration.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = Tensor(np.empty((0,), _dtype.get_default_dtype().np))
        t = data.detach()
        t._rg = data._rg
        t._is_buffer = True
        t.persistent = persistent
        return t


def is_lazy(param):
    return False
