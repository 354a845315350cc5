"""Dtypes: torch's dtype objects over NumPy dtypes, the default dtype, and type promotion.

Promotion follows torch, not NumPy: operands fall into three priority groups (tensors with
dimensions, zero-dim tensors, Python numbers) and a lower group only decides the result when its
category (bool < integer < floating < complex) is higher. A Python float meeting an integer
tensor gives the *default* dtype (float32), never float64.
"""

import builtins

import numpy as np

__all__ = [
    "dtype", "float16", "half", "float32", "float", "float64", "double", "complex64", "cfloat",
    "complex128", "cdouble", "int8", "int16", "short", "int32", "int", "int64", "long", "uint8",
    "bool", "bfloat16", "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "can_cast", "finfo", "iinfo",
]

# Category ranks used by promotion.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, printed as torch prints it (``torch.float32``).

    ndgrad deliberately prints dtypes with torch's names so that logs and reprs match torch's.
    """

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "_legacy")

    def __init__(self, name, np_dtype, category, legacy):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = self.np.kind in "fci"
        self._category = category
        self._legacy = legacy

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float32: complex64, float64: complex128, float16: complex64}.get(self, self)


def _by_name(name):
    return _NAMES[name]


float16 = half = dtype("float16", np.float16, _FLOAT, "HalfTensor")
float32 = float = dtype("float32", np.float32, _FLOAT, "FloatTensor")
float64 = double = dtype("float64", np.float64, _FLOAT, "DoubleTensor")
complex64 = cfloat = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloatTensor")
complex128 = cdouble = dtype("complex128", np.complex128, _COMPLEX, "ComplexDoubleTensor")
int8 = dtype("int8", np.int8, _INT, "CharTensor")
int16 = short = dtype("int16", np.int16, _INT, "ShortTensor")
int32 = int = dtype("int32", np.int32, _INT, "IntTensor")
int64 = long = dtype("int64", np.int64, _INT, "LongTensor")
uint8 = dtype("uint8", np.uint8, _INT, "ByteTensor")
bool = dtype("bool", np.bool_, _BOOL, "BoolTensor")
# NumPy has no bfloat16; the name exists so torch code that mentions it imports, and
# creating a bfloat16 tensor raises a clear TypeError (see to_np_dtype).
bfloat16 = None

_ALL = (float16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8, bool)
_NAMES = {d.name: d for d in _ALL}
# NumPy dtype -> ndgrad dtype; keyed by np.dtype objects (hashable, equal across instances).
_FROM_NP = {d.np: d for d in _ALL}


def type_string(dt):
    """torch's name of the CPU tensor type of `dt` in messages (``Tensor::toString``): the
    legacy class name (``torch.FloatTensor``), or ``CPUBoolType`` / ``CPUComplexFloatType``
    for the types that have none there."""
    if dt.is_complex or dt.name == "bool":
        return "CPU" + dt._legacy[:-len("Tensor")] + "Type"
    return "torch." + dt._legacy


def from_np(np_dtype):
    """The ndgrad dtype of a NumPy dtype (TypeError for types torch does not have)."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        np_dtype = np.dtype(np_dtype)
        if np_dtype in _FROM_NP:
            return _FROM_NP[np_dtype]
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype.name}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint8, and bool.") from None


def to_np(d):
    """The NumPy dtype of an ndgrad dtype (also accepts NumPy dtypes and Python types)."""
    if type(d) is dtype:
        return d.np
    if d is None or d is _pyfloat:
        return _default.np
    if d is _pyint:
        return int64.np
    if d is _pybool:
        return bool.np
    if d is _pycomplex:
        return _default_complex().np
    try:
        npd = np.dtype(d)
    except Exception:
        raise TypeError(f"{d!r} is not a valid dtype") from None
    return from_np(npd).np


def to_dtype(d):
    """The ndgrad dtype named by `d` (an ndgrad dtype, NumPy dtype or Python type)."""
    return d if type(d) is dtype else from_np(to_np(d))


_pyfloat = builtins.float
_pyint = builtins.int
_pybool = builtins.bool
_pycomplex = builtins.complex

_default = float32


def get_default_dtype():
    """The dtype of new floating tensors made from Python floats (float32 unless changed)."""
    return _default


def set_default_dtype(d):
    """Set the default floating dtype; only float32 and float64 (and float16) are allowed."""
    global _default
    if type(d) is not dtype or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default = d


def _default_complex():
    return complex128 if _default is float64 else complex64


def _promote_pair(a, b):
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi._category == _COMPLEX and lo._category == _FLOAT and lo.itemsize > hi.itemsize // 2:
            return lo.to_complex()
        return hi
    if ca == _INT:
        if (a is uint8) != (b is uint8):
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.itemsize >= b.itemsize else b
    return a if a.itemsize >= b.itemsize else b


_PROMOTE = {(a, b): _promote_pair(a, b) for a in _ALL for b in _ALL}


def promote_types(a, b):
    """The smallest dtype to which both dtypes can be promoted, as torch.promote_types."""
    return _PROMOTE[(a, b)]


def _combine(higher, lower):
    """Torch's combine_categories: the higher-priority result unless `lower` outranks it."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    ch, cl = higher._category, lower._category
    if ch == _COMPLEX:
        return higher
    if cl == _COMPLEX:
        return higher.to_complex() if ch == _FLOAT else lower
    if ch == _FLOAT:
        return higher
    if higher is bool or cl == _FLOAT:
        return _PROMOTE[(higher, lower)]
    return higher


def scalar_dtype(value):
    """The dtype a Python number takes when it meets a tensor (a "wrapped number")."""
    t = type(value)
    if t is _pybool:
        return bool
    if t is _pyint:
        return int64
    if t is _pyfloat:
        return _default
    if t is _pycomplex:
        return _default_complex()
    if isinstance(value, np.generic):
        d = from_np(value.dtype)
        return {_BOOL: bool, _INT: int64, _FLOAT: _default}.get(d._category, _default_complex())
    if isinstance(value, _pyint):  # an int subclass (a traced symbolic size)
        return int64
    raise TypeError(f"unsupported scalar type {t.__name__}")


def result_type_of(dims, zeros, scalars):
    """Promote three groups of dtypes (dimensioned tensors, 0-d tensors, Python numbers)."""
    r = [None, None, None]
    for i, group in enumerate((dims, zeros, scalars)):
        for d in group:
            r[i] = d if r[i] is None else _PROMOTE[(r[i], d)]
    return _combine(r[0], _combine(r[1], r[2]))


def result_type(a, b):
    """torch.result_type for a tensor and a tensor or Python number."""
    groups = ([], [], [])
    for x in (a, b):
        if hasattr(x, "_data"):
            groups[0 if x._data.ndim else 1].append(from_np(x._data.dtype))
        else:
            groups[2].append(scalar_dtype(x))
    return result_type_of(*groups)


def can_cast(from_, to):
    """True when torch allows an in-place result of `from_` to be written into `to`."""
    return from_._category <= to._category


def _info_dtype(type, fname):
    """The dtype finfo/iinfo describe: a dtype, or a Python type standing for one (as torch
    reads ``torch.finfo(float)``: float64); anything else is torch's TypeError."""
    if isinstance(type, dtype):
        return type
    by_python = {_pyfloat: float64, _pyint: int64, _pybool: bool, _pycomplex: complex128}
    if isinstance(type, builtins.type) and type in by_python:
        return by_python[type]
    raise TypeError(f"{fname}(): argument 'type' (position 1) must be torch.dtype, not "
                    f"{builtins.type(type).__name__}")


class finfo:
    """Machine limits of a floating dtype, like torch.finfo."""

    def __init__(self, type=None):
        type = _default if type is None else _info_dtype(type, "finfo")
        if type._category < _FLOAT:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = np.finfo(type.np)
        self.bits = info.bits
        self.eps = _pyfloat(info.eps)
        self.max = _pyfloat(info.max)
        self.min = _pyfloat(info.min)
        self.tiny = self.smallest_normal = _pyfloat(info.tiny)
        self.resolution = 10.0 ** -info.precision  # torch: 10^-digits10, in double
        self.dtype = type.to_real().name


class iinfo:
    """Machine limits of an integer dtype, like torch.iinfo."""

    def __init__(self, type):
        type = _info_dtype(type, "iinfo")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type._category != _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = info.bits
        self.max = _pyint(info.max)
        self.min = _pyint(info.min)
        self.dtype = type.name
