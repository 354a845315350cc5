"""``nn.Parameter`` (a leaf tensor that a Module registers as trainable) and ``nn.Buffer``.

A Parameter shares the memory of the tensor it is built from and is always a leaf; ops on it
return plain Tensors, like torch's, and take the dispatcher's fast paths (``fast_type``): it
changes nothing an op reads.
"""

import numpy as np

from .. import _dtype
from .._ops.registry import fast_type
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "is_lazy", "UninitializedParameter", "UninitializedBuffer"]


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
    """Whether `param` is an uninitialized parameter or buffer (of a lazy module)."""
    return isinstance(param, UninitializedTensorMixin)


# ============================================================================ uninitialized
# The placeholders of lazy modules (nn/modules/lazy.py): empty tensors whose shape is unknown
# until ``materialize(shape)``, which gives them storage and turns them into their
# ``cls_to_become`` (Parameter / Tensor) in place, so references held elsewhere stay valid.
# Unlike torch, ops on a placeholder are not intercepted (ndgrad has no __torch_function__):
# they see an empty tensor.
class UninitializedTensorMixin:
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Give the placeholder storage of `shape` (zeros) and make it a regular tensor."""
        np_dtype = self._data.dtype if dtype is None else _dtype.to_np(dtype)
        self._data = np.zeros(tuple(int(n) for n in shape), np_dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This "
                           "error usually happens in `load_state_dict` when trying to load an "
                           "uninitialized parameter into an initialized one. Call `forward` to "
                           "initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self, *, tensor_contents=None):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def _empty(dtype):
    return np.empty((0,), (_dtype.get_default_dtype() if dtype is None else dtype).np)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module infers at its first call."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        Parameter.__init__(self, Tensor(_empty(dtype)), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, _dtype.from_np(self._data.dtype))
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers at its first call."""

    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        Tensor.__init__(self, _empty(dtype))
        self.requires_grad_(bool(requires_grad))
        self.persistent = persistent
        self._is_buffer = True

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, _dtype.from_np(self._data.dtype),
                                        self.persistent)
        return memo[id(self)]
