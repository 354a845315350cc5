"""Tensor methods and attributes that answer questions about a tensor (its device flags,
layout, identity of memory) or make a tensor of the same kind: the strided-layout answers of
the sparse and quantized APIs (``to_dense``, ``sparse_dim``, ``dense_dim``, ``dequantize``,
``is_distributed``: what torch returns for a dense CPU tensor), the moves to hardware a CPU
build lacks (``xpu``, ``ipu``, ``mtia``: torch's errors), ``is_cpu``, ``is_nested``, the
other device flags (all False on a CPU NumPy tensor), ``is_nonzero``, ``is_same_size``,
``is_set_to``, ``dim_order``, ``const_data_ptr``, ``new_empty_strided``, ``as_subclass`` and
``module_load`` (the hook ``nn.Module.load_state_dict`` calls when swapping parameters) and
``grad_dtype`` (kept in the tensor's ``_extra``; the engine casts a leaf's incoming gradient to
it, the ``.grad`` setter checks against it).

Invariant: none of these records autograd history except ``as_subclass`` (an alias of the
input, torch's ``AliasBackward0``) and ``module_load`` (whose ``copy_`` is an ordinary
in-place write).
"""

import numpy as np

from .._tensor import Tensor
from .. import _dtype
from .copy_variants import narrow_copy
from .registry import primitive, reads_values
from .shape import alias

__all__ = ["dequantize"]


def _owner(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def is_nonzero(self):
    """The truth value of a one-element tensor (torch's errors for zero or many)."""
    n = self._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    reads_values("is_nonzero()")
    return bool(self._data.reshape(-1)[0] != 0)


def is_same_size(self, other):
    return tuple(self._data.shape) == tuple(other._data.shape)


def is_set_to(self, tensor):
    """True when both tensors view the same memory with the same offset, sizes and strides."""
    a, b = self._data, tensor._data
    return (_owner(a) is _owner(b) and a.__array_interface__["data"][0]
            == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype)


def _contiguous_in(shape, strides, order):
    """Whether the strides are those of a dense layout whose dims from outer to inner are
    `order` (size-1 dims may carry any stride), as torch's is_contiguous(memory_format)."""
    expected = 1
    for d in reversed(order):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _should_swap(shape, strides, a, b):
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if shape[b] >= shape[a] else 1
    if sb >= sa:
        return -1
    return 1


def _has_multiple_dim_order(shape, strides):
    return any(s == t for s, t in zip(strides, strides[1:])) or any(n == 1 for n in shape)


def dim_order(self, *, ambiguity_check=False):
    """The dims ordered from outermost to innermost in memory (torch's rules for ties)."""
    shape = tuple(self._data.shape)
    strides = self.stride()
    nd = len(shape)
    if not isinstance(ambiguity_check, (bool, list)):
        raise TypeError("ambiguity_check must be a bool or a list of memory formats")
    if ambiguity_check is not False and _has_multiple_dim_order(shape, strides):
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        legal = sum(_contiguous_in(shape, strides, _format_order(f, nd)) for f in formats
                    if _format_order(f, nd) is not None)
        if legal != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    if nd == 0:
        return ()
    if nd == 1:
        return (0,)
    contiguous = _contiguous_in(shape, strides, list(range(nd)))
    channels_last = nd == 4 and _contiguous_in(shape, strides, [0, 2, 3, 1])
    if contiguous and not channels_last:
        return tuple(range(nd))
    if channels_last and not contiguous:
        return (0,) + tuple(range(2, nd)) + (1,)
    # insertion sort from the innermost dim outwards, as torch's
    # compute_elementwise_output_logical_to_physical_perm
    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        d1 = i
        for d0 in reversed(range(i)):
            c = _should_swap(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if ambiguity_check and any(_should_swap(shape, strides, perm[i], perm[i + 1]) != -1
                               for i in range(nd - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


def _format_order(fmt, nd):
    name = str(fmt)
    if name.endswith("contiguous_format"):
        return list(range(nd))
    if name.endswith("channels_last") and nd == 4:
        return [0, 2, 3, 1]
    if name.endswith("channels_last_3d") and nd == 5:
        return [0, 2, 3, 4, 1]
    return None


def const_data_ptr(self):
    return self.data_ptr()


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      pin_memory=False, requires_grad=False):
    """An uninitialised tensor of `size` with element strides `stride` (self's dtype by
    default)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    npd = _dtype.to_np(dtype) if dtype is not None else self._data.dtype
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    buf = np.zeros(extent, npd)
    item = buf.itemsize
    arr = np.lib.stride_tricks.as_strided(buf, size, tuple(s * item for s in stride))
    out = Tensor(arr)
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_subclass(self, cls):
    """`self` as an instance of Tensor subclass `cls`, sharing data and autograd history."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = alias(self) if self.requires_grad else self.detach()
    out.__class__ = cls
    if self.requires_grad and out._grad_fn is None:
        out._rg = True
    return out


def module_load(self, other, assign=False):
    """How ``load_state_dict`` turns a state-dict value into this parameter's new value."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


# ----------------------------------------------------------------------------- layouts
def to_dense(self, dtype=None, *, masked_grad=None):
    """A strided tensor is already dense: itself (converted when `dtype` is given)."""
    return self if dtype is None else self.to(dtype)


def dequantize(input):
    """A tensor that is not quantized dequantizes to float32 (itself when it already is)."""
    if isinstance(input, (list, tuple)):
        raise NotImplementedError("Could not run 'aten::dequantize.tensors' with arguments from "
                                  "the 'CPU' backend.")
    if input._data.dtype == np.float32:
        return input
    return DEQUANTIZE.call(input)


# torch records a node whose backward raises (dequantize has no derivative)
DEQUANTIZE = primitive("dequantize", lambda x, p: x.astype(np.float32), "NotImplemented")


@DEQUANTIZE.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for dequantize is not implemented")


def _xpu(self, *args, **kwargs):
    return self.to("xpu")


def _ipu(self, *args, **kwargs):
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


def _mtia(self, *args, **kwargs):
    raise AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                         "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file "
                         "and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target "
                         "dependency!")


_FLAGS_FALSE = ("is_nested", "is_maia", "is_mps", "is_xpu", "is_ipu", "is_xla", "is_mtia",
                "is_vulkan", "is_sparse_csr")


def _grad_dtype_get(self):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    ex = self._extra
    if ex is not None and "grad_dtype" in ex:
        return ex["grad_dtype"]
    return self.dtype


def _grad_dtype_set(self, value):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if value is not None and not isinstance(value, _dtype.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                           f"{type(value).__name__}")
    if self._extra is None:
        self._extra = {}
    self._extra["grad_dtype"] = value


def _bind():
    Tensor.is_cpu = property(lambda self: True)
    # the dtype the leaf's gradients are cast to on arrival (the engine reads it)
    Tensor.grad_dtype = property(_grad_dtype_get, _grad_dtype_set)
    for flag in _FLAGS_FALSE:
        setattr(Tensor, flag, property(lambda self: False))
    bind({"is_nonzero": is_nonzero, "is_same_size": is_same_size, "is_set_to": is_set_to,
          "dim_order": dim_order, "const_data_ptr": const_data_ptr,
          "new_empty_strided": new_empty_strided, "as_subclass": as_subclass,
          "module_load": module_load, "to_dense": to_dense,
          "sparse_dim": lambda self: 0, "dense_dim": lambda self: self._data.ndim,
          "is_distributed": lambda self: False, "dequantize": dequantize,
          "xpu": _xpu, "ipu": _ipu, "mtia": _mtia, "narrow_copy": narrow_copy})


from .methods import bind  # noqa: E402

_bind()
