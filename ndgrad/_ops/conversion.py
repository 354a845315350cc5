"""Dtype conversion: ``to``, ``type`` and the ``float()``/``double()``/... shorthands, recorded as
ToCopyBackward0 (the gradient is cast back to the input's dtype)."""

import numpy as np

from .. import _dtype
from .._device import MetaArray, device as _device_cls, check_device, meta_array
from .._tensor import Tensor, _from_array
from .registry import primitive
from . import shape as _shape

__all__ = ["to", "type_", "to_dtype"]


def _to_copy_fwd(x, np_dtype):
    if x.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=5)
        x = x.real
    return x.astype(np_dtype, copy=True)


TO_COPY = primitive("_to_copy", _to_copy_fwd, "ToCopyBackward0", linear=True)


@TO_COPY.def_vjp
def _(ctx, g):
    src = ctx._extra["dtype"]
    if g._data.dtype.kind == "c" and src.kind != "c":
        g = g.real
    return (g.to(_dtype.from_np(src)),)


TO_COPY.batch_transparent = True  # the cast passes any leading batch dimension through
TO_COPY.def_batched_jvp(lambda ctx, t: t.to(_dtype.from_np(ctx.outputs[0]._data.dtype)))


def to_dtype(x, dtype, copy=False):
    npd = _dtype.to_np(dtype)
    if npd == x._data.dtype and not copy:
        return x
    out = TO_COPY.call(x, params=npd)
    if out._grad_fn is not None:
        out._grad_fn._extras()["dtype"] = x._data.dtype
    if out._data.dtype.kind not in "fc" and out._grad_fn is not None:
        out._grad_fn = None
        out._rg = False
    return out


def to(self, *args, **kwargs):
    """Convert dtype (and accept the CPU device): to(dtype), to(device), to(other), ..."""
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    dev = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, _dtype.dtype) or (isinstance(a, type) and a in (float, int, bool)):
            dtype = a
        elif isinstance(a, (str, _device_cls)):
            dev = a
        elif a is None:
            continue
        elif isinstance(a, bool):
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    if check_device(dev, meta_ok=True):
        return _to_meta(self, dtype)
    if dev is not None and type(self._data) is MetaArray:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if memory_format is not None:
        fmt = _shape._format_param("to", memory_format, self._data.ndim)
        if fmt is not None and not self.is_contiguous(memory_format=memory_format):
            # a ToCopyBackward0 copy laid out in the format (its gradient is layout-blind)
            out = to_dtype(self, self.dtype if dtype is None else dtype, copy=True)
            out._data = _shape._clone_fwd(out._data, fmt)
            return out
    if dtype is None:
        return self.clone() if copy else self
    return to_dtype(self, dtype, copy)


def _to_meta(self, dtype):
    """``to("meta")``: a tensor of the same shape (and `dtype`) with no data; it keeps
    requires_grad (torch records a ToCopyBackward0 there; ndgrad makes a leaf)."""
    npd = self._data.dtype if dtype is None else _dtype.to_np(dtype)
    if type(self._data) is MetaArray and npd == self._data.dtype:
        return self
    out = _from_array(meta_array(self._data.shape, npd))
    if self.requires_grad and npd.kind in "fc":
        out._rg = True
    return out


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """With no argument, the legacy type name (``'torch.FloatTensor'``); else convert."""
    if dtype is None:
        return "torch." + self.dtype._legacy
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        for d in _dtype._ALL:
            if d._legacy == name:
                return to_dtype(self, d)
        raise ValueError(f"invalid type: '{dtype}'")
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _dtype.dtype):
        dtype = dtype.dtype  # a legacy typed class: torch.DoubleTensor, torch.IntTensor...
    if isinstance(dtype, type):
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return to_dtype(self, dtype)
