"""The pickle half of torch's checkpoint format: how tensors, storages, dtypes, ``Size`` and
``device`` are named inside ``data.pkl``, for writing and for reading.

Writing: :class:`TorchPickler` pickles any object (protocol 2 by default, as torch) and spells
tensors exactly as torch does -- ``torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, OrderedDict())`` with the storage a persistent id ``("storage",
torch.<Type>Storage, key, "cpu", numel)`` -- and dtypes/``Size``/``device`` as torch's
globals, so ``torch.load(..., weights_only=True)`` accepts the file. Everything else
(an ndgrad ``nn.Module``, an optimizer, user classes) is pickled under its own, ndgrad, name.

Reading: :func:`torch_globals` is the table from torch's global names to ndgrad's objects
(rebuild functions, storage types, dtypes, ``Size``, ``device``, ``Parameter``), used by both
the weights-only unpickler and the full one; :class:`Storage` is what a storage record
becomes (one flat NumPy array, shared by every tensor built on it).

Invariants: a tensor rebuilt from a storage is a NumPy view of the storage's array, checked
to lie inside it (no size/stride/offset read past the record); tensors that shared memory when
saved share one storage record and share memory again when loaded.
"""

import pickle
from collections import OrderedDict

import numpy as np

from . import _dtype
from ._device import cpu, device, device as _device
from ._size import Size
from ._tensor import Tensor, _from_array
from .nn.parameter import Parameter

__all__ = ["TorchPickler", "Storage", "StorageType", "torch_globals"]

# torch's legacy storage class name for each dtype ndgrad has.
_STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
    "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
}
_DTYPE_OF_STORAGE = {v: _dtype._NAMES[k] for k, v in _STORAGE_NAMES.items()}
# bfloat16 has no NumPy dtype: its storages load widened to float32 (exactly; see decisions.md).
_BFLOAT16 = "BFloat16Storage"


class _TorchName:
    """A stand-in that the pickler writes as ``GLOBAL module name``."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce insists on a callable
        raise TypeError(f"{self.module}.{self.name} is only a name written into checkpoints")


_REBUILD_TENSOR = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_REBUILD_FROM_TYPE = _TorchName("torch._tensor", "_rebuild_from_type_v2")
_TENSOR = _TorchName("torch", "Tensor")
_SIZE = _TorchName("torch", "Size")
_DEVICE = _TorchName("torch", "device")
_STORAGE_GLOBALS = {d: _TorchName("torch", n) for d, n in _STORAGE_NAMES.items()}
_DTYPE_GLOBALS = {d: _TorchName("torch", d) for d in _STORAGE_NAMES}


# ---------------------------------------------------------------------------------- writing
class _SavedStorage:
    """One storage record being written: the memory region `region` (uint8, contiguous)
    interpreted as `dtype`."""

    __slots__ = ("key", "region", "dtype", "pid")

    def __init__(self, key, region, dtype):
        self.key, self.region, self.dtype = key, region, dtype
        self.pid = ("storage", _STORAGE_GLOBALS[dtype.name], key, "cpu",
                    region.nbytes // dtype.itemsize)


def _memory_root(arr):
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


class TorchPickler(pickle._Pickler):
    """A pickler writing tensors, dtypes, ``Size`` and ``device`` under torch's names, and
    collecting the storages to write as records (``self.storages``, in key order)."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol=2):
        super().__init__(file, protocol=protocol)
        self.storages = []
        self._by_root = {}
        self._keep = []  # roots stay alive while their id() is a key

    def _write_name(self, obj):
        self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n"
                   + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_TorchName] = _write_name

    def _write_dtype(self, obj):
        self.save(_DTYPE_GLOBALS[obj.name])

    dispatch[_dtype.dtype] = _write_dtype

    def persistent_id(self, obj):
        return obj.pid if type(obj) is _SavedStorage else None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                return (_REBUILD_PARAMETER, (Tensor(obj._data), obj.requires_grad,
                                             OrderedDict()))
            reduced = self._tensor_args(obj, obj.requires_grad)
            if type(obj) is Tensor and not obj.__dict__:
                return reduced
            # Python attributes (or a subclass): torch's _rebuild_from_type_v2 wrapping
            kind = _TENSOR if type(obj) is Tensor else type(obj)
            return (_REBUILD_FROM_TYPE, (reduced[0], kind, reduced[1], dict(obj.__dict__)))
        if type(obj) is Size:
            return (_SIZE, (tuple(int(s) for s in obj),))
        if isinstance(obj, device):
            return (_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _tensor_args(self, t, requires_grad):
        storage, offset, stride = self._storage_of(t._data)
        return (_REBUILD_TENSOR, (storage, offset, tuple(t._data.shape), stride,
                                  bool(requires_grad), OrderedDict()))

    def _storage_of(self, arr):
        """(storage, element offset, element strides) of `arr`, sharing one record with every
        array saved so far that lives in the same memory."""
        dt = _dtype._FROM_NP[arr.dtype]
        item = arr.itemsize
        root = _memory_root(arr)
        region = None
        if root.flags.c_contiguous or root.flags.f_contiguous:
            flat = root.ravel(order="K")
            region = flat.view(np.uint8) if flat.size else np.empty(0, np.uint8)
        if region is not None and arr.size:
            start = arr.__array_interface__["data"][0] - region.__array_interface__["data"][0]
            fits = (start % item == 0 and region.nbytes % item == 0
                    and all(s >= 0 and s % item == 0 for s in arr.strides))
            if not fits:
                region = None
        if region is None or not arr.size:
            # Its own record: a copy (torch too saves an empty tensor as an empty storage).
            copy = np.ascontiguousarray(arr).reshape(-1)
            region = copy.view(np.uint8) if copy.size else np.empty(0, np.uint8)
            storage = self._new_storage(region, dt)
            return storage, 0, _contiguous_strides(arr.shape)
        found = self._by_root.get(id(root))
        if found is None:
            found = self._new_storage(region, dt)
            self._by_root[id(root)] = found
            self._keep.append(root)
        elif found.dtype is not dt:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        start = arr.__array_interface__["data"][0] - found.region.__array_interface__["data"][0]
        return found, start // item, tuple(s // item for s in arr.strides)

    def _new_storage(self, region, dt):
        storage = _SavedStorage(str(len(self.storages)), region, dt)
        self.storages.append(storage)
        return storage


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(strides))


# ---------------------------------------------------------------------------------- reading
class StorageType:
    """What a ``torch.<Type>Storage`` global loads as: it only carries the element dtype."""

    def __init__(self, name):
        if name == _BFLOAT16:
            self.dtype, self.bfloat16 = _dtype.float32, True
        elif name in _DTYPE_OF_STORAGE:
            self.dtype, self.bfloat16 = _DTYPE_OF_STORAGE[name], False
        elif name == "UntypedStorage":
            self.dtype, self.bfloat16 = _dtype.uint8, False
        else:
            raise KeyError(name)
        self.name = name

    @property
    def file_itemsize(self):
        return 2 if self.bfloat16 else self.dtype.itemsize

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


class Storage:
    """A loaded storage record: a flat NumPy array of one dtype, on the CPU.

    ``map_location`` callables receive it with its location tag; ``cpu()`` returns it and
    ``cuda()`` raises as torch does on a machine without CUDA."""

    def __init__(self, array):
        self._array = array

    @property
    def dtype(self):
        return _dtype._FROM_NP[self._array.dtype]

    @property
    def device(self):
        return cpu

    def size(self):
        return self._array.size

    __len__ = size

    def nbytes(self):
        return self._array.nbytes

    def element_size(self):
        return self._array.itemsize

    def tolist(self):
        return self._array.tolist()

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False):
        raise RuntimeError(_CUDA_MISSING)

    def to(self, device=None, non_blocking=False):
        if _device(device).type == "cuda":
            raise RuntimeError(_CUDA_MISSING)
        return self

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self._array.tolist())
        return f"{body}\n[ndgrad.storage.TypedStorage(dtype={self.dtype}, device=cpu) " \
               f"of size {self._array.size}]"


_CUDA_MISSING = ("Attempting to deserialize object on a CUDA device but "
                 "torch.cuda.is_available() is False. If you are running on a CPU-only "
                 "machine, please use torch.load with map_location=torch.device('cpu') to map "
                 "your storages to the CPU.")


def _int(x, what):
    if type(x) is not int and not isinstance(x, np.integer):
        raise RuntimeError(f"invalid {what} in a tensor record: {x!r}")
    return int(x)


def rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False,
                   backward_hooks=None, metadata=None):
    """``torch._utils._rebuild_tensor_v2``: a tensor viewing `storage`, bounds-checked."""
    if not isinstance(storage, Storage):
        raise RuntimeError(f"expected a storage to rebuild a tensor, got {type(storage)}")
    base = storage._array
    offset = _int(storage_offset, "storage offset")
    shape = tuple(_int(s, "size") for s in size)
    steps = tuple(_int(s, "stride") for s in stride)
    if len(shape) != len(steps) or offset < 0 or any(s < 0 for s in shape + steps):
        raise RuntimeError(f"invalid tensor record: size {shape}, stride {steps}, offset "
                           f"{offset}")
    if 0 in shape:
        # nothing is read: the strides are kept as recorded
        arr = np.lib.stride_tricks.as_strided(np.empty(0, base.dtype), shape,
                                              tuple(s * base.itemsize for s in steps))
    else:
        last = offset + sum((n - 1) * s for n, s in zip(shape, steps))
        if last >= base.size:
            raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(steps)}, "
                               f"storage offset {offset}, and itemsize {base.itemsize} "
                               f"requiring a storage size of {(last + 1) * base.itemsize} are "
                               f"out of bounds for storage of size {base.nbytes}")
        arr = np.lib.stride_tricks.as_strided(
            base[offset:], shape, tuple(s * base.itemsize for s in steps),
            writeable=base.flags.writeable)
    if metadata:
        if metadata.get("conj"):
            arr = np.conj(arr)
        if metadata.get("neg"):
            arr = np.negative(arr)
    t = _from_array(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor_v1(storage, storage_offset, size, stride):
    return rebuild_tensor(storage, storage_offset, size, stride)


def rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    """``torch._utils._rebuild_parameter`` (and ``_with_state``)."""
    p = Parameter(data, requires_grad)
    if state:
        _set_attributes(p, state)
    return p


def rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a tensor rebuilt by `func`, then given its
    class and Python attributes."""
    ret = func(*args)
    if isinstance(new_type, type) and issubclass(new_type, Tensor) and type(ret) is not \
            new_type:
        if new_type is Parameter:
            ret = Parameter(ret, ret.requires_grad)
        else:
            sub = Tensor.__new__(new_type)
            for slot in Tensor.__slots__:
                if slot not in ("__weakref__", "__dict__"):
                    setattr(sub, slot, getattr(ret, slot))
            ret = sub
    if state:
        _set_attributes(ret, state)
    return ret


def _set_attributes(obj, state):
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        for k, v in (slots or {}).items():
            setattr(obj, k, v)
    for k, v in (state or {}).items():
        setattr(obj, k, v)


def _codecs_encode(text, encoding="latin1"):
    # torch (protocol 2) pickles bytes as _codecs.encode(str, "latin1"); only that is allowed.
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is only allowed for latin1 byte strings")
    return text.encode("latin1")


def _bytearray(*args):
    # bytearray(n) would allocate n bytes on the file's word: only data is accepted.
    if args and isinstance(args[0], int):
        raise pickle.UnpicklingError("bytearray is only allowed from data, not from a size")
    return bytearray(*args)


def torch_globals():
    """torch's global names that checkpoints hold -> ndgrad's objects. Also the complete list
    of what a weights-only load admits (besides user-allowed globals)."""
    from collections import Counter
    table = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": Parameter, "torch.Size": Size, "torch.Tensor": Tensor,
        "torch.device": device, "_codecs.encode": _codecs_encode,
        "builtins.bytearray": _bytearray, "builtins.set": set, "builtins.complex": complex,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor,
        "torch._utils._rebuild_tensor": rebuild_tensor_v1,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
    }
    for d in _dtype._ALL:
        table[f"torch.{d.name}"] = d
    table["torch.bfloat16"] = _dtype.float32
    for name in list(_DTYPE_OF_STORAGE) + [_BFLOAT16, "UntypedStorage"]:
        table[f"torch.{name}"] = StorageType(name)
    return table
