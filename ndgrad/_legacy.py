"""torch's legacy API, kept so that old torch code runs: ``autograd.Variable`` (a plain tensor
since torch 0.4), the typed tensor classes ``FloatTensor``, ``LongTensor``... (constructors of
a fixed dtype and ``isinstance`` checks on it), ``Tensor.new``, ``is_inference``, the
``set_warn_always`` switch and ``FatalError`` (torch's exception class for a fatal internal
error; ndgrad never raises it, code may catch it).

Invariant: nothing here makes a new kind of object; every constructor returns an
``ndgrad.Tensor`` and every class test looks at a tensor's dtype.
"""

import warnings

import numpy as np

from . import _dtype
from ._creation import empty, tensor
from ._size import Size
from . import _tensor as _tensor_module
from ._tensor import Tensor

__all__ = ["Variable", "is_inference", "set_warn_always", "is_warn_always_enabled",
           "legacy_new", "TYPED_TENSORS", "FatalError"]


class FatalError(Exception):
    """torch's exception for an unrecoverable internal error (a plain Exception subclass)."""


# ----------------------------------------------------------------------------- Variable
class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a tensor sharing `tensor`'s memory, without
    its history, requiring grad as asked (``volatile`` is accepted and warned about)."""

    _execution_engine = None

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


# -------------------------------------------------------------------------- predicates
def is_inference(input):
    """True for a tensor made under ``inference_mode``."""
    if not isinstance(input, Tensor):
        raise TypeError("is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


_warn_always = [False]


def set_warn_always(b):
    """torch's switch for warnings its C++ core gives once per process; ndgrad's warnings go
    through Python's ``warnings`` filters, so the switch is only remembered."""
    if not isinstance(b, bool):  # torch's check, before anything changes
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always[0] = b


def is_warn_always_enabled():
    return _warn_always[0]


# ------------------------------------------------------------------ typed constructors
def _sizes(args):
    """The sizes of a size-style call (ints or one torch.Size), else None."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return tuple(args)
    return None


def _options(dt):
    return (f"TensorOptions(dtype={_C_NAMES.get(dt.name, dt.name)}, device=cpu, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


_C_NAMES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "float16": "c10::Half", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _is_storage(obj):
    # (by name: _storage.py imports this module)
    return type(obj).__name__ in ("UntypedStorage", "TypedStorage") and hasattr(obj, "_owner")


def _storage_array(storage, dt):
    """The elements of `storage` read as dtype `dt`, sharing its memory: an untyped storage's
    bytes are reinterpreted, a typed one must already hold `dt` (torch's error)."""
    typed = type(storage).__name__ == "TypedStorage"
    if typed and storage.dtype is not dt:
        raise RuntimeError(f"Expected a Storage of type {dt._legacy[:-6]} or an UntypedStorage, "
                           f"but got type {storage.dtype._legacy[:-6]} for argument 1 "
                           "'storage'")
    owner = storage._owner
    raw = (owner if owner.flags.c_contiguous else np.ascontiguousarray(owner)).reshape(-1) \
        .view(np.uint8)
    return raw[:raw.size - raw.size % dt.itemsize].view(dt.np)


def legacy_array(dt, args, any_tensor=False):
    """The array torch's legacy constructor of dtype `dt` holds for positional `args`: empty
    for no argument, zeros for sizes (torch leaves them uninitialised), the memory of a
    storage, `dt` data converted from anything else (an ndarray of `dt` is shared, as torch
    shares it). A tensor argument is aliased; `any_tensor` (``torch.Tensor``) aliases a tensor
    of any dtype, the typed constructors refuse another dtype."""
    if not args:
        return np.empty((0,), dt.np)
    sizes = _sizes(args)
    if sizes is not None:
        return np.zeros(sizes, dt.np)
    if len(args) != 1:
        raise TypeError("new(): expected sizes (ints) or a single sequence of data")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype is not dt and not any_tensor:
            raise TypeError(f"expected {_options(dt)} (got {_options(data.dtype)})")
        return data._data
    if _is_storage(data):
        return _storage_array(data, dt)
    if isinstance(data, np.ndarray):
        return data if data.dtype == dt.np else data.astype(dt.np)
    return tensor(data, dtype=dt)._data


def check_legacy_keywords(args, kwargs, name="new"):
    """torch's TypeError for a keyword other than ``device=`` to a legacy constructor."""
    wrong = [k for k in kwargs if k != "device"]
    if not wrong:
        return
    kinds = ", ".join([type(a).__name__ for a in args] +
                      [f"{k}=torch.dtype" if isinstance(v, _dtype.dtype)
                       else f"{k}={type(v).__name__}" for k, v in kwargs.items()
                       if k != "device"])
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({kinds}), but expected one of:\n"
                    " * (*, torch.device device = None)\n"
                    "      didn't match because some of the keywords were incorrect: "
                    f"{', '.join(wrong)}\n"
                    " * (torch.Storage storage)\n"
                    " * (Tensor other)\n"
                    " * (tuple of ints size, *, torch.device device = None)\n"
                    " * (object data, *, torch.device device = None)\n")


def legacy_new(dt, args, kwargs, name="new"):
    """torch's legacy constructor of dtype `dt` (``FloatTensor(...)``, ``t.new(...)``): a
    tensor over :func:`legacy_array`; only ``device=`` is accepted as a keyword."""
    check_legacy_keywords(args, kwargs, name)
    if len(args) == 1 and isinstance(args[0], Tensor):
        legacy_array(dt, args)  # the dtype check
        return args[0].detach()
    return Tensor(legacy_array(dt, args))


def _tensor_constructor(args, keywords):
    """torch.Tensor(*args): the default dtype's legacy constructor (no keyword but device=)."""
    check_legacy_keywords(args, keywords)
    return legacy_array(_dtype.get_default_dtype(), args, any_tensor=True)


_tensor_module.legacy_constructor[0] = _tensor_constructor


class _TypedTensorMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor) and other.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, args, kwargs)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _typed(dt):
    return _TypedTensorMeta(dt._legacy, (), {"dtype": dt, "is_sparse": False,
                                             "__module__": "torch"})


TYPED_TENSORS = {dt._legacy: _typed(dt) for dt in _dtype._ALL if not dt.is_complex}
