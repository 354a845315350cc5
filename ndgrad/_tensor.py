"""The Tensor: a NumPy array plus autograd state (leaf flag, grad_fn, version counter, views).

What lives here: construction, the autograd attributes (``requires_grad``, ``grad``,
``grad_fn``, ``is_leaf``, hooks, ``detach``, ``backward``), conversions and Python protocols.
Operators and op methods are attached by the op modules (``ndgrad/_ops``), one place per op;
what needs the autograd engine is attached by ``ndgrad/autograd`` at its import (``backward``,
``_regenerate_grad_fn`` for stale views, ``_fw_repr_suffixes`` for dual tensors' repr), so this
module imports nothing above the graph core.

Invariants:
- ``_vc`` is a one-element list shared by a tensor, its views and its detached aliases; every
  in-place write bumps it. Saved tensors compare against it.
- ``_base`` is the root tensor whose memory a differentiable view shares (never a view itself);
  ``_view`` is the chain of view ops that replays the view on any tensor shaped like the base.
- A view's ``_grad_fn`` may be stale after an in-place write to the base or to another view;
  ``_view_ver`` records the version it was computed at and ``_refresh_view`` regenerates it.
"""

import sys as _sys
import weakref
import warnings

import numpy as np

from . import _dtype, _layouts
from . import _graph_core, _state
from ._graph_core import AccumulateGrad, _add_hook, _HookDict
from ._device import MetaArray, cpu, meta as _meta
from ._size import Size
from ._tensor_str import tensor_repr

__all__ = ["Tensor"]

_ndarray = np.ndarray
_asarray = np.asarray
_new = object.__new__


class Tensor:
    """A multi-dimensional array with autograd, like ``torch.Tensor``."""

    __slots__ = ("_data", "_rg", "_grad_fn", "_output_nr", "_vc", "_base", "_view", "_view_ver",
                 "_grad", "_acc", "_extra", "__weakref__", "__dict__")

    def __init__(self, data=None, *size, dtype=None, device=None, requires_grad=False):
        if type(data) is _ndarray and not size and (
                data.dtype is _dtype._default.np or _internal_caller()):
            # The internal fast path: wrap an array (ndgrad's modules pass an ndarray here;
            # torch.Tensor(a) of a default-dtype array shares it too, as torch's does).
            self._data = data
            self._rg = False
            self._grad_fn = None
            self._output_nr = 0
            self._vc = [0]
            self._base = None
            self._view = None
            self._view_ver = 0
            self._grad = None
            self._acc = None
            self._extra = None
            return  # keep in step with _from_array below
        # torch.Tensor's legacy constructor: Tensor(2, 3) allocates, Tensor([1, 2]) copies,
        # Tensor(ndarray) holds the default dtype, Tensor(storage) reads its memory.
        args = (data,) + size if data is not None else size
        keywords = {k: v for k, v in (("dtype", dtype), ("requires_grad", requires_grad))
                    if v is not None and v is not False}
        Tensor.__init__(self, legacy_constructor[0](args, keywords))

    # ------------------------------------------------------------------ basic attributes
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return _dtype._FROM_NP[self._data.dtype]

    @property
    def device(self):
        return _meta if type(self._data) is MetaArray else cpu

    @property
    def is_cuda(self):
        return False

    is_sparse = False
    is_quantized = False
    @property
    def is_meta(self):
        return type(self._data) is MetaArray

    is_mkldnn = False
    layout = _layouts.strided

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim=None):
        item = self._data.itemsize
        strides = tuple(s // item for s in self._data.strides)
        if type(self._data) is MetaArray:  # a meta tensor's strides are contiguous ones
            strides = tuple(int(np.prod(self._data.shape[k + 1:])) for k in range(self._data.ndim))
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        """Elements between the start of the memory this tensor's array lives in (the array
        owning it, shared with its views) and its first element."""
        owner = self._data
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        off = self._data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return off // self._data.itemsize

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        if memory_format is None:
            return self._data.flags.c_contiguous
        return _layouts.is_contiguous_in(self._data, memory_format)

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def is_complex(self):
        return self._data.dtype.kind == "c"

    def is_signed(self):
        return self._data.dtype.kind in "fic"

    def get_device(self):
        return -1

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self):
        base = self._base
        if base is not None:
            # torch's requires_grad does not raise for a view made invalid by an in-place write
            self._refresh_view(quiet=True)
            # torch: a view requires grad when its base does, even without history (a view
            # taken under no_grad or in inference mode)
            return self._rg or base._rg
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    # torch's refusals for deleting autograd state, as property deleters: a ``__delattr__``
    # on Tensor would route every attribute *assignment* through Python (CPython shares the
    # slot), costing every op. (``del t._grad_fn`` on the slot is not refused: a gap.)
    @requires_grad.deleter
    def requires_grad(self):
        raise RuntimeError("requires_grad must be a bool")

    @property
    def _backward_hooks(self):
        """torch's per-tensor hook dict has no counterpart here (tensor hooks live on the
        grad_fn or grad accumulator): reading it fails as for any missing attribute; only
        its deletion is refused, as torch's."""
        raise AttributeError("'Tensor' object has no attribute '_backward_hooks'")

    @_backward_hooks.deleter
    def _backward_hooks(self):
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    def requires_grad_(self, requires_grad=True):
        if _state.func_transforms and requires_grad and not _sys._getframe(
                1).f_globals.get("__name__", "").startswith("ndgrad."):
            # a user's call inside a torch.func transform (the library's own rules may)
            raise _state.requires_grad_in_transform_error()
        if self._grad_fn is not None or (self._base is not None and self.grad_fn is not None):
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if (requires_grad and self._extra is not None and self._extra.get("inference")
                and not _state.tls.inference):
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None:
            self._refresh_view()
        return self._grad_fn

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        return self._vc[0]

    @property
    def grad(self):
        if self._grad_fn is not None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more information.",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            self._check_grad_dtype(value)
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
        self._grad = value

    def _check_grad_dtype(self, value):
        want = self._data.dtype
        ex = self._extra
        if ex is not None and "grad_dtype" in ex:      # Tensor.grad_dtype (None: any dtype)
            if ex["grad_dtype"] is None:
                return
            want = ex["grad_dtype"].np
        if value._data.dtype != want:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{_c_name(value._data.dtype)}' "
                f"to a tensor with grad_dtype '{_legacy_name(want)}'. The "
                "gradient must match the tensor's grad_dtype (defaults to the tensor's "
                "dtype). You can set the tensor's grad_dtype attribute with a specific "
                "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging "
                "the dtypes of a tensor and its gradient may break downstream systems that "
                "assume they match.")

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def _base_tensor(self):
        return self._base

    def is_inference(self):
        """True for tensors created inside inference_mode."""
        return bool(self._extra and self._extra.get("inference"))

    def _is_view(self):
        return self._base is not None

    @property
    def data(self):
        """A tensor sharing this one's memory with no history and its own version counter."""
        out = Tensor(self._data)
        if self._extra is not None and self._extra.get("inference"):
            out._extras()["inference"] = True
        return out

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._rg and value._data.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._data = value._data

    @data.deleter
    def data(self):
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def detach(self):
        """A new leaf sharing data and version counter, cut from the graph."""
        out = Tensor(self._data)
        out._vc = self._vc
        if self._extra is not None and self._extra.get("inference"):
            out._extras()["inference"] = True
        return out

    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views of "
                               "DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                               "the solution.")
        self._grad_fn = None
        self._output_nr = 0
        self._rg = False
        return self

    def _extras(self):
        if self._extra is None:
            self._extra = {}
        return self._extra

    @property
    def retains_grad(self):
        return bool(self._extra and self._extra.get("retains_grad"))

    def retain_grad(self):
        """Populate ``.grad`` for this non-leaf tensor during backward."""
        if _state.func_transforms:
            raise RuntimeError(
                "You are attempting to call Tensor.retain_grad() inside of a function being "
                "transformed by a functorch transform. This is unsupported, please attempt to "
                "use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
                "retain_grad() outside of a function being transformed instead.")
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self.retains_grad:
            return
        self._extras()["retains_grad"] = True
        self._register_retain()

    def _register_retain(self):
        """Put this tensor's retain_grad hook on its current grad_fn (a hook left on a former
        grad_fn does nothing: it checks that the tensor's grad_fn is still its node)."""
        ref = weakref.ref(self)
        node = self._grad_fn

        def retain(grad):
            t = ref()
            if t is None or t._grad_fn is not node:
                return None
            if t._grad is None:
                t._grad = grad.detach().clone() if not _state.tls.grad_enabled else grad.clone()
            else:
                t._grad = t._grad + grad
            return None

        node._extras().setdefault("retain_hooks", {})[self._output_nr] = retain

    def _history_changed(self):
        """Called where an in-place op or a view's regeneration gives this tensor a new
        grad_fn: a retain_grad hook follows it there, as torch's does."""
        if self._extra is not None and self._extra.get("retains_grad") and \
                self._grad_fn is not None:
            self._register_retain()

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        hook = _checked_grad_hook(hook)
        if fn is None:
            return _add_hook(self._hook_dict("hooks"), hook)
        return fn._register_tensor_prehook(self._output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(tensor)`` on a leaf after its ``.grad`` was accumulated."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        return _add_hook(self._hook_dict("post_acc_hooks"), hook)

    def _hook_dict(self, key):
        extra = self._extras()
        d = extra.get(key)
        if d is None:
            d = extra[key] = _HookDict()
        return d

    # Gradient edges -------------------------------------------------------------------
    def _accumulator(self):
        acc = self._acc
        node = acc() if acc is not None else None
        if node is None:
            node = AccumulateGrad(self)
            self._acc = weakref.ref(node)
        return node

    def _edge(self):
        """``(node, input_nr)`` through which a gradient reaches this tensor."""
        if self._base is not None:
            self._refresh_view()
        fn = self._grad_fn
        if fn is not None:
            return (fn, self._output_nr)
        return (self._accumulator(), 0)

    def _refresh_view(self, quiet=False):
        if self._view_ver == self._vc[0]:
            return
        self._view_ver = self._vc[0]
        base = self._base
        if base._rg:
            self._regenerate_grad_fn(quiet)  # bound by autograd._view_regeneration

    # ------------------------------------------------------------------ conversions
    def numpy(self, *, force=False):
        # torch refuses only while grad mode is on (no_grad / inference_mode allow it)
        if self.requires_grad and not force and _state.tls.grad_enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if type(self._data) is MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 passes copy=True for np.array(t) and then trusts the result to be a copy.
        if dtype is None:
            return self._data.copy() if copy else self._data
        return self._data.astype(dtype, copy=bool(copy))

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item()

    def tolist(self):
        if type(self._data) is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._data.tolist()

    def __float__(self):
        return float(self._real_scalar_value("double"))

    def __int__(self):
        return int(self._real_scalar_value("int64_t"))

    def _dtype_suffix(self):
        d = self.dtype
        return "" if d in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool) else f", dtype={d}"

    def _real_scalar_value(self, ctype):
        """The value for float()/int(): a complex one only when its imaginary part is zero,
        else torch's RuntimeError."""
        v = self._scalar_value()
        if isinstance(v, complex):
            if v.imag:
                raise RuntimeError(f"value cannot be converted to type {ctype} without "
                                   "overflow")
            v = v.real
        return v

    def __complex__(self):
        return complex(self._scalar_value())

    def __index__(self):
        if self._data.dtype.kind not in "biu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._data.reshape(()).item())

    def _scalar_value(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if type(self._data) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._data.reshape(()).item()

    def __bool__(self):
        if self._data.size != 1:
            if self._data.size == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()).item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        try:
            fn = self.grad_fn
            # torch prints the node's class name (CopySlices), not name()'s C++ namespace
            fn_name = type(fn).__name__ if fn is not None else None
        except RuntimeError:  # a view invalidated by an in-place write, as torch prints it
            fn_name = "Invalid"
        if type(self._data) is MetaArray:
            extra = f", grad_fn=<{fn_name}>" if fn_name else (
                ", requires_grad=True" if self._rg else "")
            return (f"tensor(..., device='meta', size={tuple(self._data.shape)}"
                    f"{self._dtype_suffix()}{extra})")
        return tensor_repr(self._data, grad_fn_name=fn_name,
                           requires_grad=self._rg, default_float=_dtype.get_default_dtype().np,
                           extra_suffixes=_state.special and self._fw_repr_suffixes() or ())

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data, self.requires_grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        # Only arrays are copied here (no op runs), so nothing is recorded.
        new = type(self).__new__(type(self))
        Tensor.__init__(new, self._data.copy())
        new._rg = self._rg
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if type(self) is not Tensor:
            new.__dict__.update({k: v for k, v in self.__dict__.items()})
        memo[id(self)] = new
        return new

    __array_priority__ = 1000  # NumPy defers to Tensor's reflected operators


def _rebuild(data, requires_grad):
    t = Tensor(np.array(data))
    t._rg = requires_grad
    return t


# Set by _legacy.py (above this module): ``f(args, keywords)``, the array torch.Tensor(*args)
# holds (torch's legacy constructor), or torch's error.
legacy_constructor = [None]


def _internal_caller():
    """True when ``Tensor(array)`` is called from ndgrad's own modules, which wrap arrays of
    any dtype; a user's call is torch's legacy constructor (the default dtype)."""
    name = _sys._getframe(2).f_globals.get("__name__", "")
    return name.startswith("ndgrad.") or name == "ndgrad"


def _to_array_like(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_to_array_like(d) for d in data]
    return data


def _wrap_dim(dim, ndim):
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {dim})")
    return dim % ndim if ndim else 0


_C_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _c_name(np_dtype):
    return _C_NAMES.get(np_dtype.name, np_dtype.name)


def _legacy_name(np_dtype):
    return _dtype.from_np(np_dtype)._legacy.replace("Tensor", "")


def _from_array(data):
    """``Tensor(data)`` for an ndarray `data`, without the public constructor's argument
    handling: the dispatcher's way to wrap every result. Sets exactly the state of
    ``Tensor.__init__``'s array fast path."""
    t = _new(Tensor)
    t._data = data
    t._rg = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t._view = None
    t._view_ver = 0
    t._grad = None
    t._acc = None
    t._extra = None
    return t


# The graph core (below this module) creates and rebuilds tensors with these.
_graph_core.bind_tensor(Tensor, _from_array)


def _checked_grad_hook(hook):
    """`hook` made to refuse, as torch does, a returned gradient of another type or size
    before anything consumes it (so a failed backward writes no ``.grad``)."""
    name = getattr(hook, "__name__", "<unknown>")

    def checked(grad):
        new = hook(grad)
        if new is None:
            return None
        if grad is None:  # an output of a node that runs, without a gradient
            raise RuntimeError("can't replace a None gradient with a non-None value")
        if not isinstance(new, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
        if new.dtype is not grad.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                               f"{_dtype.type_string(grad.dtype)} got "
                               f"{_dtype.type_string(new.dtype)})")
        if new.shape != grad.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        return new
    checked.__wrapped__ = hook
    return checked

