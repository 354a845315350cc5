"""Storages and the ops that change which memory a tensor uses: ``Tensor.untyped_storage()``,
``Tensor.storage()`` (torch's deprecated typed storage), ``set_``, ``resize_`` and
``resize_as_``.

A tensor's storage is the NumPy array that owns its memory (the end of the ``.base`` chain of
its array): a tensor and all its views report the same storage (same ``data_ptr``), as in
torch. ``set_`` and ``resize_`` are in-place: they bump the version counter and refuse leaves
that require grad, like every in-place op.
"""

import warnings

import numpy as np

from . import _device
from . import _state
from ._legacy import is_warn_always_enabled
from ._ops.inplace import check_inplace
from ._tensor import Tensor

__all__ = ["UntypedStorage", "TypedStorage", "untyped_storage", "typed_storage", "set_",
           "resize_", "resize_as_"]


def _owner(arr):
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _bytes(owner):
    return owner.reshape(-1).view(np.uint8) if owner.flags.c_contiguous else \
        np.ascontiguousarray(owner).reshape(-1).view(np.uint8)


class UntypedStorage:
    """The bytes behind a tensor (``tensor.untyped_storage()``)."""

    def __init__(self, owner):
        self._owner = owner

    def data_ptr(self):
        return self._owner.__array_interface__["data"][0]

    def nbytes(self):
        return self._owner.nbytes

    def size(self):
        return self._owner.nbytes

    __len__ = size

    def element_size(self):
        return 1

    def tolist(self):
        return _bytes(self._owner).tolist()

    def __getitem__(self, i):
        return _bytes(self._owner)[i].item()

    @property
    def device(self):
        return _device.device("cpu")

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self.tolist())
        return f"{body}\n[torch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"


class TypedStorage:
    """A storage read as elements of a dtype (``tensor.storage()``, deprecated in torch)."""

    def __init__(self, owner, dtype):
        self._owner = owner
        self.dtype = dtype

    def _elements(self):
        return _bytes(self._owner)[:self.size() * self.dtype.itemsize].view(self.dtype.np)

    def data_ptr(self):
        return self._owner.__array_interface__["data"][0]

    def size(self):
        return self._owner.nbytes // self.dtype.itemsize

    __len__ = size

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self.size() * self.dtype.itemsize

    def tolist(self):
        return self._elements().tolist()

    def __getitem__(self, i):
        return self._elements()[i].item()

    def untyped(self):
        return UntypedStorage(self._owner)

    @property
    def device(self):
        return _device.device("cpu")


_TYPED_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


def untyped_storage(self):
    return UntypedStorage(_owner(self._data))


_warned = [False]


def typed_storage(self):
    """torch warns once per process (every time after ``set_warn_always(True)``)."""
    if not _warned[0] or is_warn_always_enabled():
        _warned[0] = True
        warnings.warn(_TYPED_WARNING, UserWarning, stacklevel=2)
    return TypedStorage(_owner(self._data), self.dtype)


_C_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
           "int32": "int", "int16": "short int", "int8": "signed char",
           "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
           "complex128": "c10::complex<double>"}


def _take(self, arr):
    """`self` now uses `arr` (its memory and shape): an in-place change of what it is."""
    check_inplace(self)
    self._data = arr
    self._vc[0] += 1
    return self


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make `self` use `source`'s memory: a tensor (its shape and strides too), or a storage
    with an offset, size and stride in elements; with no argument, an empty tensor."""
    if source is None:
        return _take(self, np.empty((0,), self._data.dtype))
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_C_TYPE[source.dtype.name]} to "
                               f"a tensor of type {_C_TYPE[self.dtype.name]}")
        return _take(self, source._data)
    if isinstance(source, (UntypedStorage, TypedStorage)):
        item = self._data.itemsize
        flat = _bytes(source._owner)
        size = tuple(size) if size is not None else (flat.size // item - storage_offset,)
        if stride is None:
            stride, acc = [], 1
            for s in reversed(size):
                stride.insert(0, acc)
                acc *= s
        need = storage_offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1
        if all(size) and need * item > flat.size:
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, "
                               f"storage offset {storage_offset}, and itemsize {item} "
                               f"requiring a storage size of {need * item} are out of bounds "
                               f"for storage of size {flat.size}")
        start = flat[storage_offset * item:].view(self._data.dtype) if flat.size else \
            np.empty((0,), self._data.dtype)
        arr = np.lib.stride_tricks.as_strided(start, size, tuple(st * item for st in stride))
        return _take(self, arr)
    raise TypeError(f"set_(): expected a Tensor or a storage, got {type(source).__name__}")


def resize_(self, *sizes, memory_format=None):
    """Give `self` the shape `sizes` with contiguous strides over its storage from its offset,
    as torch does (the elements are the storage's, whatever `self`'s strides were); when the
    storage is too small, new memory holds the old storage's elements followed by zeros."""
    if self.requires_grad and not _state.tls.inference:
        # torch's autograd kernel refuses; inference mode skips autograd kernels
        raise RuntimeError("cannot resize variables that require grad")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if sizes == self._data.shape:
        return self  # torch: resizing to the current shape is a no-op (no version bump)
    n = int(np.prod(sizes)) if sizes else 1
    dt = self._data.dtype
    owner = _owner(self._data)
    start = self.data_ptr() - owner.__array_interface__["data"][0]
    flat = _bytes(owner)[start:]
    flat = flat[:flat.size - flat.size % dt.itemsize].view(dt)
    if n <= flat.size:
        arr = flat[:n].reshape(sizes)
    else:
        arr = np.zeros(n, dt)
        arr[:flat.size] = flat
        arr = arr.reshape(sizes)
    return _take(self, arr)


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, tuple(the_template.shape))

