"""Tensor factories: tensor, as_tensor, from_numpy, zeros/ones/full/empty (and *_like),
arange, linspace, logspace, eye, and the random ones (rand, randn, randint, randperm,
normal, bernoulli, multinomial) drawing from torch's generator (bit-identical streams).
"""

import builtins
import math
import warnings

import numpy as np

from . import _dtype
from . import _random
from . import _state
from ._device import MetaArray, check_device, meta_array
from ._tensor import Tensor, _from_array

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "zeros", "ones", "full",
           "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range",
           "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm", "rand_like",
           "randn_like", "randint_like", "normal", "bernoulli", "multinomial", "scalar_tensor",
           "empty_strided", "empty_permuted", "Generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "default_generator"]

Generator = _random.Generator
default_generator = _random.default_generator
manual_seed = _random.manual_seed
seed = _random.seed
initial_seed = _random.initial_seed


def get_rng_state():
    return Tensor(_random.get_rng_state())


def set_rng_state(new_state):
    _random.set_rng_state(new_state._data if isinstance(new_state, Tensor) else new_state)


def _finish(arr, requires_grad=False):
    """Wrap a fresh array as a leaf; marks inference tensors inside inference_mode. An ndarray
    subclass (np.memmap, ...) is wrapped through a plain view of the same memory."""
    if type(arr) is MetaArray:
        t = _from_array(arr)
    else:
        if type(arr) is not np.ndarray:
            arr = arr.view(np.ndarray)
        t = Tensor(arr)
    if requires_grad:
        if arr.dtype.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._rg = True
    if _state.tls.inference:
        t._extras()["inference"] = True
    return t


def _infer_np_dtype(arr):
    k = arr.dtype.kind
    if k == "f":
        return _dtype.get_default_dtype().np
    if k in "iu":
        return np.int64
    if k == "b":
        return np.bool_
    if k == "c":
        return _dtype._default_complex().np
    raise TypeError(f"Could not infer dtype of {arr.dtype}")


def _values_of(t):
    """A tensor's array, copied into a new tensor by a factory: its values are read (a graph
    break for ndgrad.compile, which would replay the values of the trace)."""
    from ._ops.registry import reads_values
    reads_values("torch.tensor() of a tensor (its values copied)")
    return t._data


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return _values_of(data)
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


_SCALARS = (int, float, complex, bool, np.generic)
_READABLE = (list, tuple, np.ndarray, Tensor) + _SCALARS


def _refuse(leaf):
    """torch's error for a value that is no number, sequence, array or tensor."""
    if isinstance(leaf, (str, bytes)):
        return TypeError(f"new(): invalid data type '{type(leaf).__name__}'")
    return RuntimeError(f"Could not infer dtype of {type(leaf).__name__}")


def _bad_leaf(data):
    if isinstance(data, (list, tuple)):
        for d in data:
            bad = _bad_leaf(d)
            if bad is not None:
                return bad
        return None
    if isinstance(data, (Tensor, np.ndarray) + _SCALARS) and not isinstance(data, np.str_):
        return None
    return data


def _array_from(data, dtype):
    if not isinstance(data, _READABLE) or isinstance(data, (np.str_, np.bytes_)):
        # torch reads no __array__ / __array_interface__ objects, dicts, sets or strings
        raise _refuse(data)
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        arr = data
        if dtype is None:
            _dtype.from_np(arr.dtype)
            return np.array(arr, copy=True)
        return np.array(arr, dtype=_dtype.to_np(dtype), copy=True)
    if isinstance(data, Tensor):
        arr = _values_of(data)
        return np.array(arr, dtype=_dtype.to_np(dtype) if dtype is not None else arr.dtype,
                        copy=True)
    raw = _unwrap_nested(data)
    try:
        arr = np.array(raw)
    except ValueError:
        _raise_bad_data(raw)
        raise ValueError("expected sequence of equal-length lists") from None
    if arr.dtype.kind in "OUS":
        _raise_bad_data(raw)
        bad = _bad_leaf(data)
        raise _refuse(bad if bad is not None else data)
    if dtype is None:
        if isinstance(raw, list) and _contains_tensor(data):
            return arr
        return arr.astype(_infer_np_dtype(arr), copy=False)
    return arr.astype(_dtype.to_np(dtype), copy=False)


def _is_seq(obj):
    return isinstance(obj, (list, tuple, np.ndarray))


def _raise_bad_data(data):
    """Raise torch's error for nested data NumPy could not turn into a numeric array: the
    shape is read along the first elements, every leaf must be a number, then every
    sequence must have the length its depth had first."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    sizes, seq = [], data
    while _is_seq(seq) or isinstance(seq, str):
        if isinstance(seq, str):
            raise ValueError("too many dimensions 'str'")
        sizes.append(len(seq))
        if not len(seq):
            break
        seq = seq[0]

    integral = [True]

    def infer(obj):
        if _is_seq(obj) and not (isinstance(obj, np.ndarray) and obj.dtype.kind not in "OUS"):
            for o in obj:
                infer(o)
        elif isinstance(obj, np.ndarray):
            integral[0] &= obj.dtype.kind in "biu"
        elif isinstance(obj, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
        elif isinstance(obj, (bool, int, np.bool_, np.integer)):
            pass
        elif isinstance(obj, (float, complex, np.floating, np.complexfloating)):
            integral[0] = False
        else:
            raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}")

    def store(obj, dim):
        if dim == len(sizes):
            if _is_seq(obj):
                raise TypeError(f"'{type(obj).__name__}' object cannot be interpreted as an "
                                "integer" if integral[0] else
                                f"must be real number, not {type(obj).__name__}")
            return
        if not _is_seq(obj):
            raise TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                             f"(got {len(obj)})")
        for o in obj:
            store(o, dim + 1)

    infer(data)
    store(data, 0)


def _contains_tensor(data):
    if isinstance(data, Tensor):
        return True
    if isinstance(data, (list, tuple)):
        return builtins.any(_contains_tensor(d) for d in data)
    return False


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor copying `data` (nested lists, numbers, arrays)."""
    check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    arr = _array_from(data, dtype)
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """A tensor sharing memory with `data` when it is an array or tensor of the right dtype."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, np.ndarray):
        if dtype is None or _dtype.to_np(dtype) == data.dtype:
            _dtype.from_np(data.dtype)
            return _finish(data)
        return _finish(data.astype(_dtype.to_np(dtype)))
    return _finish(_array_from(data, dtype))


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    t = as_tensor(obj, dtype, device) if not copy else tensor(obj, dtype=dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


_warned_not_writable = False


def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array or subclass (np.memmap, ...): writes show in
    both. A read-only array is shared too, with torch's (once per process) warning."""
    global _warned_not_writable
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_np(ndarray.dtype)
    if not ndarray.flags.writeable and not _warned_not_writable:
        _warned_not_writable = True
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior. You may want to copy the array to protect its data "
                      "or make it writable before converting it to a tensor. This type of "
                      "warning will be suppressed for the rest of this program.", UserWarning,
                      stacklevel=2)
    return _finish(ndarray)


_warned_buffer_not_writable = False


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with an object exposing the buffer protocol (bytes,
    bytearray, memoryview, mmap, ...): `count` elements of `dtype` from byte `offset`."""
    global _warned_buffer_not_writable
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    item = _dtype.to_np(dtype).itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % item:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and not _warned_buffer_not_writable:
        _warned_buffer_not_writable = True
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it "
                      "to a tensor. This type of warning will be suppressed for the rest of "
                      "this program.", UserWarning, stacklevel=2)
    arr = np.frombuffer(view.cast("B"), _dtype.to_np(dtype), count, offset)
    return _finish(arr, requires_grad)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and hasattr(size[0], "__iter__") and not isinstance(size[0], Tensor):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"expected a sequence of integers or a single integer, got "
                            f"'{type(s).__name__}'")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


_RANDOM_SIGNATURES = "".join(
    f" * (tuple of ints size, *, {g}Tensor out = None, torch.dtype dtype = None, torch.layout "
    "layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = "
    "False)\n" for g in ("torch.Generator generator, ", ""))
_NO_SIZE = {f: f"{f}() received an invalid combination of arguments - got (), but expected "
               f"one of:\n{_RANDOM_SIGNATURES}" for f in ("rand", "randn")}


_NO_ARANGE_END = (
    "arange() received an invalid combination of arguments - got (), but expected one of:\n"
    + "".join(f" * ({args}*, {out}torch.dtype dtype = None, torch.layout layout = None, "
              "torch.device device = None, bool pin_memory = False, bool requires_grad = "
              "False)\n" for args, out in (
                  ("Number end, ", "Tensor out = None, "), ("Number start, Number end, ", ""),
                  ("Number start, Number end, Number step = 1, ", "Tensor out = None, "))))


def _size_keyword(name, sizes, size):
    """The positional sizes of a factory called as ``f(2, 3)``, ``f((2, 3))`` or
    ``f(size=(2, 3))`` (torch's keyword: an int there is refused, as torch's parser does).
    No size at all is torch's TypeError (a 0-d tensor is ``f(())``)."""
    if size is None:
        if not sizes:
            raise TypeError(_NO_SIZE.get(name, f'{name}() missing 1 required positional '
                                               'arguments: "size"'))
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not hasattr(size, "__iter__") or isinstance(size, Tensor):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    return (size,)


def _into_out(name, factory, sizes, size, out, dtype, **keywords):
    """``factory(..., out=out)``: made in out's dtype unless one is given, then written into
    out with torch's semantics (arguments.deliver_out)."""
    from ._ops.arguments import deliver_out
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    return deliver_out(name, factory(*sizes, size=size, dtype=dtype, **keywords), out)


def _np_dtype(dtype, default=None):
    if dtype is None:
        return default if default is not None else _dtype.get_default_dtype().np
    return _dtype.to_np(dtype)


# Set by ndgrad.compile while it traces with symbolic sizes: called as ``watch(factory, args,
# kwargs, tensor)`` by zeros, ones, empty and full, so that a tensor made with a size the trace
# knows the origin of becomes an instruction of the program instead of a constant.
factory_watch = [None]


def _watched(factory, args, kwargs, t):
    watch = factory_watch[0]
    if watch is not None:
        watch(factory, args, kwargs, t)
    return t


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    if out is not None:
        return _into_out("zeros", zeros, sizes, size, out, dtype, requires_grad=requires_grad)
    size = _size_keyword("zeros", sizes, size)
    if check_device(device, meta_ok=True):
        return _finish(meta_array(_size(size), _np_dtype(dtype)), requires_grad)
    if any(isinstance(s, int) and s < 0 for s in (size[0] if len(size) == 1 and
                                                   isinstance(size[0], (tuple, list)) else size)):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    t = _finish(np.zeros(_size(size), _np_dtype(dtype)), requires_grad)
    if factory_watch[0] is None:
        return t
    return _watched(zeros, size, {"dtype": dtype, "requires_grad": requires_grad}, t)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    if out is not None:
        return _into_out("ones", ones, sizes, size, out, dtype, requires_grad=requires_grad)
    size = _size_keyword("ones", sizes, size)
    if check_device(device, meta_ok=True):
        return _finish(meta_array(_size(size), _np_dtype(dtype)), requires_grad)
    t = _finish(np.ones(_size(size), _np_dtype(dtype)), requires_grad)
    if factory_watch[0] is None:
        return t
    return _watched(ones, size, {"dtype": dtype, "requires_grad": requires_grad}, t)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, memory_format=None, pin_memory=False):
    if out is not None:
        return _into_out("empty", empty, sizes, size, out, dtype, requires_grad=requires_grad)
    size = _size_keyword("empty", sizes, size)
    if check_device(device, meta_ok=True):
        return _finish(meta_array(_size(size), _np_dtype(dtype)), requires_grad)
    return _finish(np.empty(_size(size), _np_dtype(dtype)), requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    arr = np.empty(_size((size,)), _np_dtype(dtype))
    return _finish(arr, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of logical shape `size` whose dims lie in memory in the order
    `physical_layout` (outermost first): a contiguous block of the permuted shape, permuted
    back."""
    check_device(device)
    size = _size((size,))
    layout_ = tuple(int(d) for d in physical_layout)
    if len(layout_) != len(size):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(layout_)}")
    seen = set()
    for i, d in enumerate(layout_):
        if not 0 <= d < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {d} at index {i}).  NB: negative "
                               "dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    block = np.empty(tuple(size[d] for d in layout_), _np_dtype(dtype))
    return _finish(np.transpose(block, np.argsort(layout_)), requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    on_meta = check_device(device, meta_ok=True)
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                    else fill_value)
    if on_meta:
        return _finish(meta_array(_size((size,)), _np_dtype(dtype)), requires_grad)
    t = _finish(np.full(_size((size,)), fill_value, _np_dtype(dtype)), requires_grad)
    if factory_watch[0] is None or isinstance(fill_value, Tensor):
        return t
    return _watched(full, (size, fill_value), {"dtype": dtype,
                                               "requires_grad": requires_grad}, t)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(np.asarray(s, _np_dtype(dtype)), requires_grad)


def _like(input, dtype):
    return _np_dtype(dtype, input._data.dtype)


# While a vmap is active, a factory that follows a tensor (``*_like``; ``Tensor.new_*`` in
# ``_ops/methods.py``) makes a batched tensor when that tensor is batched, as torch's do:
# ``zeros_like(a).copy_(a * 3)`` under vmap writes every sample. ``_functorch.batching``
# attaches the function (factory, input, args, kwargs) -> tensor or NotImplemented.
batched_factory = [None]


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    if type(input) is not Tensor and batched_factory[0] is not None:
        out = batched_factory[0](zeros_like, input, (), {"dtype": dtype})
        if out is not NotImplemented:
            return out
    return _finish(np.zeros(input._data.shape, _like(input, dtype)), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    if type(input) is not Tensor and batched_factory[0] is not None:
        out = batched_factory[0](ones_like, input, (), {"dtype": dtype})
        if out is not NotImplemented:
            return out
    return _finish(np.ones(input._data.shape, _like(input, dtype)), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    if type(input) is not Tensor and batched_factory[0] is not None:
        out = batched_factory[0](empty_like, input, (), {"dtype": dtype})
        if out is not NotImplemented:
            return out
    return _finish(np.empty(input._data.shape, _like(input, dtype)), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    if type(input) is not Tensor and batched_factory[0] is not None:
        out = batched_factory[0](full_like, input, (fill_value,), {"dtype": dtype})
        if out is not NotImplemented:
            return out
    return _finish(np.full(input._data.shape, fill_value, _like(input, dtype)), requires_grad)


def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """[start, end) in steps; integer arguments give int64, any float gives the default."""
    check_device(device)
    if start is None and end is None:
        raise TypeError(_NO_ARANGE_END)
    if end is None:
        start, end = 0, start
    elif start is None:
        start = 0
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = builtins.all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                              for v in vals)
        npd = np.int64 if is_int else _dtype.get_default_dtype().np
    else:
        npd = _dtype.to_np(dtype)
    n = builtins.max(0, math.ceil((end - start) / step))
    # Computed in double like torch, then cast.
    arr = (start + np.arange(n, dtype=np.float64) * step) if np.dtype(npd).kind == "f" else \
        np.arange(start, start + n * step, step)[:n]
    return _finish(arr.astype(npd), requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    arr = start + np.arange(n, dtype=np.float64) * step
    return _finish(arr.astype(_np_dtype(dtype)), requires_grad)


def _is_complex_scalar(v):
    return isinstance(v, (complex, np.complexfloating))


def _lin_part(s, e, steps, ft):
    """One real component of torch's CPU linspace kernel in precision `ft`: the first half
    counts up from start, the second half down from end, each as one fused multiply-add
    (the compiler contracts ``start + step * i``)."""
    s, e = ft(s), ft(e)
    step = (e - s) / ft(steps - 1)
    i = np.arange(steps)
    up = i < steps // 2
    k = np.where(up, i, steps - 1 - i).astype(np.float64)
    b = np.where(up, step, -step).astype(np.float64)
    c = np.where(up, s, e).astype(np.float64)
    if ft is np.float32:
        return _random._fma32(b, k, c).astype(np.float32)
    return _random._fma64(b, k, c)


def _lin_values(start, end, steps, npd):
    """linspace values in dtype `npd` (float32/64 or complex64/128), bit-exact with torch."""
    npd = np.dtype(npd)
    ft = np.float32 if npd in (np.float32, np.complex64) else np.float64
    if steps == 1:
        return np.array([start], npd)
    start, end = complex(start), complex(end)
    re = _lin_part(start.real, end.real, steps, ft)
    if npd.kind != "c":
        return re
    out = np.empty(steps, npd)
    out.real, out.imag = re, _lin_part(start.imag, end.imag, steps, ft)
    return out


def _space_dtype(fname, start, end, dtype):
    """The result dtype: complex endpoints infer the default complex dtype, which a real
    `dtype` cannot hold."""
    if not (_is_complex_scalar(start) or _is_complex_scalar(end)):
        return _np_dtype(dtype)
    inferred = _dtype._default_complex()
    if dtype is None:
        return inferred.np
    if not dtype.is_complex:
        cname = "c10::complex<float>" if inferred.np == np.complex64 else "c10::complex<double>"
        raise RuntimeError(f"torch.{fname}(): inferred dtype {cname} can't be safely cast to "
                           f"passed dtype {dtype._legacy[:-len('Tensor')]}")
    return dtype.np


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    npd = _space_dtype("linspace", start, end, dtype)
    if np.dtype(npd) in (np.float32, np.float64, np.complex64, np.complex128):
        return _finish(_lin_values(start, end, steps, npd), requires_grad)
    if steps == 1:
        arr = np.array([start], np.float64)
    else:
        # torch fills the first half from start and the second half from end.
        step = (end - start) / (steps - 1)
        idx = np.arange(steps, dtype=np.float64)
        half = steps // 2
        arr = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    if np.dtype(npd).kind in "iu":
        arr = np.trunc(arr)
    return _finish(arr.astype(npd), requires_grad)


def _log_exponent_part(s, e, steps, ft):
    """One real component of torch's complex logspace exponents: the step is the difference
    times the reciprocal of (steps - 1) (complex division by a real), no fused multiply-add."""
    s, e = ft(s), ft(e)
    step = (e - s) * (ft(1) / ft(steps - 1))
    i = np.arange(steps)
    up = i < steps // 2
    return np.where(up, s + step * i.astype(ft), e - step * (steps - 1 - i).astype(ft))


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    npd = np.dtype(_space_dtype("logspace", start, end, dtype))
    if npd.kind == "c":
        ft = np.float32 if npd == np.complex64 else np.float64
        start, end = complex(start), complex(end)
        ex = np.empty(steps, npd)
        if steps == 1:
            ex[:] = start
        elif steps:
            ex.real = _log_exponent_part(start.real, end.real, steps, ft)
            ex.imag = _log_exponent_part(start.imag, end.imag, steps, ft)
        with np.errstate(all="ignore"):
            vals = np.power(npd.type(base), ex)
        return _finish(vals.astype(npd), requires_grad)
    lin = linspace(start, end, steps, dtype=_dtype.float64)._data
    return _finish(np.power(base, lin).astype(npd), requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _finish(np.eye(n, n if m is None else m, dtype=_np_dtype(dtype)), requires_grad)


# ----------------------------------------------------------------------------- random
def _gen(generator):
    return generator if generator is not None else _random.default_generator


def _complex_draw(draw, shape, npd):
    """torch fills a complex tensor through its real view (shape + (2,)): the draws are
    interleaved real, imag, real, imag... in the component dtype."""
    npd = np.dtype(npd)
    if npd.kind != "c":
        return draw(shape, npd)
    comp = np.float32 if npd == np.complex64 else np.float64
    pairs = np.ascontiguousarray(draw(tuple(shape) + (2,), comp))
    return pairs.view(npd).reshape(shape)


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if out is not None:
        return _into_out("rand", rand, sizes, size, out, dtype, generator=generator,
                         requires_grad=requires_grad)
    size = _size_keyword("rand", sizes, size)
    check_device(device)
    arr = _complex_draw(_gen(generator).uniform, _size(size), _np_dtype(dtype))
    return _finish(arr, requires_grad)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    if out is not None:
        return _into_out("randn", randn, sizes, size, out, dtype, generator=generator,
                         requires_grad=requires_grad)
    size = _size_keyword("randn", sizes, size)
    check_device(device)
    npd = _np_dtype(dtype)
    g = _gen(generator)
    if np.dtype(npd).kind == "c":
        # each of the real and imaginary parts has variance 1/2 (std / sqrt(2))
        arr = _complex_draw(lambda s, d: g.normal(s, d, 0.0, 1.0 / math.sqrt(2.0)),
                            _size(size), npd)
    else:
        arr = g.normal(_size(size), npd)
    return _finish(arr, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """Integers in [low, high); ``randint(high, size)`` and ``randint(low, high, size)``."""
    check_device(device)
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    npd = _np_dtype(dtype, np.int64)
    arr = _gen(generator).randint(int(low), int(high), _size((size,)), npd)
    return _finish(arr, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    check_device(device)
    arr = _gen(generator).randperm(int(n), _np_dtype(dtype, np.int64))
    return _finish(arr, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return rand(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return randn(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype)


@_state.random_rule("op")
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False):
    g = _gen(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else np.asarray(mean)
        s = std._data if isinstance(std, Tensor) else np.asarray(std)
        shape = np.broadcast_shapes(m.shape, s.shape)
        npd = (mean if isinstance(mean, Tensor) else std)._data.dtype
        z = g.normal(shape, npd)
        from ._ops.normal_nodes import recorded_normal  # (the registry sits above this module)
        return recorded_normal(mean, std, np.asarray(z * s + m).astype(npd))
    return _finish(g.normal(_size((size,)), _np_dtype(dtype), mean, std), requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    g = _gen(generator)
    probs = input._data if p is None else p
    return _finish(g.bernoulli(probs, input._data.shape, input._data.dtype))


@_state.random_rule("op")
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if out is not None and out.dtype is not _dtype.int64:
        # checked before anything is drawn, as torch's: the generator is not advanced
        raise RuntimeError(f"multinomial expects Long tensor out, got: "
                           f"{_random._scalar_name(out._data.dtype)}")
    g = _gen(generator)
    res = _finish(g.multinomial(input._data, num_samples, replacement))
    if out is None:
        return res
    resized = out.shape != res.shape
    if resized:
        out.resize_(res.shape)  # bumps the version once, as torch's one write does
    np.copyto(out._data, res._data)
    if not resized:
        out._vc[0] += 1
    return out
