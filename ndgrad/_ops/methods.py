"""Binds the ops to ``Tensor``: operators (with reflected and augmented forms), methods, and
the in-place ``*_`` variants. Op modules stay free of Tensor-class plumbing; this is the one
place that decides which function a method name calls.
"""

import numpy as np

from .._tensor import Tensor
from .._device import check_device
from . import arithmetic as AR
from . import comparison as CMP
from . import pointwise as PW
from . import reduction as R
from . import shape as S
from . import joins as J
from . import indexing as I
from . import matmul as L
from . import conversion as C
from .arguments import scalar_first
from .inplace import apply_inplace, check_inplace
from . import bessel
from . import complex_ops
from . import norms
from .broadcast import sum_to
from .. import _storage as storage
from .. import _state
from .._legacy import legacy_new


def _method(name, fn):
    setattr(Tensor, name, fn)


# ----------------------------------------------------------------------------- operators
def _rtruediv(self, other):
    return AR.MUL.call(PW.RECIPROCAL.call(self), other)


def _rpow(self, other):
    # torch's Tensor.__rpow__ is pow(other, self): a tensor base is a tensor-tensor pow
    # (PowBackward1, gradients to both), a number base the scalar-base pow.
    if isinstance(other, Tensor):
        return AR.pow(other, self)
    return AR.POW_RSCALAR.call(other, self)


def _rmatmul(self, other):
    return L.matmul(other, self)


def _rfloordiv(self, other):
    return AR.FLOOR_DIV.call(other, self)


def _rmod(self, other):
    return AR.REMAINDER.call(other, self)


def _cmp(op):
    call = op.call

    def method(self, other):
        if other is None or not isinstance(other, (Tensor, int, float, bool, complex,
                                                   np.generic, np.ndarray)):
            return NotImplemented if op is not CMP.EQ and op is not CMP.NE else (op is CMP.NE)
        return call(self, other)
    return method


def _absent_dtype(name):
    """Tensor.bfloat16() / chalf(): NumPy has no such dtype, so ndgrad refuses the conversion."""
    raise TypeError(f"ndgrad has no {name} dtype: NumPy cannot hold it; convert to float32 "
                    "or complex64 instead")


def _rbin(op):
    call = op.call

    def method(self, other):
        return call(other, self)
    return method


_OPERATORS = {
    "__add__": AR.ADD.call, "__radd__": AR.ADD.call, "__sub__": AR.SUB.call,
    "__rsub__": AR.RSUB.call, "__mul__": AR.MUL.call, "__rmul__": AR.MUL.call,
    "__truediv__": AR.DIV.call, "__rtruediv__": _rtruediv, "__div__": AR.DIV.call,
    "__rdiv__": _rtruediv,
    "__floordiv__": AR.FLOOR_DIV.call, "__rfloordiv__": _rfloordiv,
    "__mod__": AR.remainder, "__rmod__": _rmod, "__pow__": AR.pow, "__rpow__": _rpow,
    "__matmul__": L.matmul, "__rmatmul__": _rmatmul, "__neg__": AR.NEG.call,
    "__abs__": PW.ABS.call, "__invert__": CMP.bitwise_not, "__pos__": lambda self: self,
    "__and__": CMP.BITWISE_AND.call, "__rand__": _rbin(CMP.BITWISE_AND),
    "__or__": CMP.BITWISE_OR.call, "__ror__": _rbin(CMP.BITWISE_OR),
    "__xor__": CMP.BITWISE_XOR.call, "__rxor__": _rbin(CMP.BITWISE_XOR),
    "__lshift__": CMP.LSHIFT.call, "__rlshift__": _rbin(CMP.LSHIFT),
    "__rshift__": CMP.RSHIFT.call, "__rrshift__": _rbin(CMP.RSHIFT),
    "__eq__": _cmp(CMP.EQ), "__ne__": _cmp(CMP.NE), "__lt__": _cmp(CMP.LT), "__le__": _cmp(CMP.LE),
    "__gt__": _cmp(CMP.GT), "__ge__": _cmp(CMP.GE),
    "__getitem__": I.getitem, "__setitem__": I.setitem,
}
for _name, _fn in _OPERATORS.items():
    _method(_name, _fn)
Tensor.__hash__ = lambda self: id(self)


# ----------------------------------------------------------------------------- in-place
def _inplace_binary(op, alpha_param=False, name=None):
    def method(self, other, *legacy, alpha=1):
        if legacy and alpha_param:  # the deprecated add_(alpha, other)
            (self, other), kw = scalar_first(name, (self, other) + legacy, alpha != 1)
            alpha = kw["alpha"]
        elif legacy:
            raise TypeError(f"{op.name}_() takes 1 positional argument but "
                            f"{1 + len(legacy)} were given")
        p = AR.alpha_param(op.name, self, other, alpha) if alpha_param else None
        return apply_inplace(op, self, other, params=p)
    return method


def _inplace_unary(op):
    def method(self):
        return apply_inplace(op, self)
    return method


def _div_(self, other, *, rounding_mode=None):
    op = {None: AR.DIV, "floor": AR.FLOOR_DIV_MODE, "trunc": AR.TRUNC_DIV}[rounding_mode]
    return apply_inplace(op, self, other)


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return apply_inplace(AR.POW_TENSOR, self, exponent)
    return apply_inplace(AR.POW_SCALAR, self, exponent)


def _clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    min, max = CMP.clamp_bounds(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        res = CMP.clamp(self, min, max)
        return S.copy_(self, res) if hasattr(S, "copy_") else I.copy_(self, res)
    return apply_inplace(CMP.CLAMP, self, params=(min, max))


def _round_(self, *, decimals=None):
    return apply_inplace(PW.ROUND if decimals is None else PW.ROUND_DECIMALS, self,
                         params=decimals)


_INPLACE = {
    "add_": _inplace_binary(AR.ADD, True, "add_"),
    "sub_": _inplace_binary(AR.SUB, True, "sub_"),
    "mul_": _inplace_binary(AR.MUL), "div_": _div_, "true_divide_": _div_,
    "pow_": _pow_, "clamp_": _clamp_, "clip_": _clamp_, "round_": _round_,
    "remainder_": lambda self, other: apply_inplace(
        AR.REMAINDER if isinstance(other, Tensor) else AR.REMAINDER_SCALAR, self, other),
    "floor_divide_": _inplace_binary(AR.FLOOR_DIV),
    "maximum_": _inplace_binary(CMP.MAXIMUM), "minimum_": _inplace_binary(CMP.MINIMUM),
    "copy_": I.copy_, "fill_": I.fill_, "zero_": I.zero_, "masked_fill_": I.masked_fill_,
    "index_put_": I.index_put_, "scatter_": I.scatter_, "scatter_add_": I.scatter_add_,
    "index_add_": I.index_add_,
}
for _name in ("neg", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu",
              "abs", "sign", "reciprocal", "log1p", "expm1", "floor", "ceil", "trunc",
              "logical_not", "bitwise_not", "conj"):
    _mod = AR if _name == "neg" else CMP if _name in ("logical_not", "bitwise_not") else PW
    _op = getattr(_mod, _name.upper(), None) or getattr(_mod, "_" + _name.upper())
    _INPLACE[_name + "_"] = _inplace_unary(_op)
_INPLACE["negative_"] = _INPLACE["neg_"]
def _abs_(self):
    if self._data.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return apply_inplace(PW.ABS, self)


_INPLACE["abs_"] = _INPLACE["absolute_"] = _abs_
for _name, _fn in _INPLACE.items():
    _method(_name, _fn)


def _augmented(name):
    inplace = getattr(Tensor, name)

    def method(self, other):
        return inplace(self, other)
    return method


for _aug, _inp in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                   ("__itruediv__", "div_"), ("__ipow__", "pow_"),
                   ("__ifloordiv__", "floor_divide_"), ("__imod__", "remainder_")):
    _method(_aug, _augmented(_inp))


def _ibitwise(op):
    def method(self, other):
        return apply_inplace(op, self, other)
    return method


for _aug, _op in (("__iand__", CMP.BITWISE_AND), ("__ior__", CMP.BITWISE_OR),
                  ("__ixor__", CMP.BITWISE_XOR), ("__ilshift__", CMP.LSHIFT),
                  ("__irshift__", CMP.RSHIFT)):
    _method(_aug, _ibitwise(_op))
_method("bitwise_and_", _ibitwise(CMP.BITWISE_AND))
_method("bitwise_or_", _ibitwise(CMP.BITWISE_OR))
_method("bitwise_xor_", _ibitwise(CMP.BITWISE_XOR))


# ----------------------------------------------------------------------------- methods
def bind(fns, overwrite=False):
    """Attach functions as Tensor methods, keeping any already bound (unless `overwrite`)."""
    for name, fn in fns.items():
        if overwrite or not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


# The pointwise modules' own method tables first (polygamma's argument order, in-place
# variants), then every public function of the op modules not bound yet.
for _mod in (PW, AR, CMP):
    bind(_mod._METHODS)
_METHODS = {}
for _mod in (AR, CMP, PW, R, S, J, I, L):
    for _name in _mod.__all__:
        _METHODS[_name] = getattr(_mod, _name)
for _skip in ("where", "stack", "cat", "concat", "concatenate", "dims_of", "wrap_dim",
              "tanh_backward", "sigmoid_backward", "threshold_backward", "getitem", "setitem",
              "alias"):
    _METHODS.pop(_skip, None)
_METHODS.update({
    "absolute": PW.abs, "arccos": None, "mT": None,
    "to": C.to, "type": C.type_,
    "float": lambda self, memory_format=None: C.to_dtype(self, "float32"),
    "double": lambda self, memory_format=None: C.to_dtype(self, "float64"),
    "half": lambda self, memory_format=None: C.to_dtype(self, "float16"),
    "long": lambda self, memory_format=None: C.to_dtype(self, "int64"),
    "int": lambda self, memory_format=None: C.to_dtype(self, "int32"),
    "short": lambda self, memory_format=None: C.to_dtype(self, "int16"),
    "char": lambda self, memory_format=None: C.to_dtype(self, "int8"),
    "byte": lambda self, memory_format=None: C.to_dtype(self, "uint8"),
    "bool": lambda self, memory_format=None: C.to_dtype(self, "bool"),
    "cfloat": lambda self, memory_format=None: C.to_dtype(self, "complex64"),
    "cdouble": lambda self, memory_format=None: C.to_dtype(self, "complex128"),
    "bfloat16": lambda self, memory_format=None: _absent_dtype("bfloat16"),
    "chalf": lambda self, memory_format=None: _absent_dtype("complex32 (chalf)"),
    "cpu": lambda self, memory_format=None: self,
    "cuda": lambda self, *a, **k: C.to(self, "cuda"),
    "type_as": lambda self, other: C.to_dtype(self, other.dtype),
    "where": lambda self, condition, other: CMP.where(condition, self, other),
    "masked_fill": I.masked_fill,
    "sum_to_size": lambda self, *size: _sum_to_size(self, size),
    "new": lambda self, *args, **kwargs: _legacy_new(self.dtype, args, kwargs),
    "split_with_sizes": lambda self, split_sizes, dim=0: J.split(self, list(split_sizes), dim),
    "untyped_storage": lambda self: _storage().untyped_storage(self),
    "storage": lambda self: _storage().typed_storage(self),
    "set_": lambda self, *a, **k: _storage().set_(self, *a, **k),
    "resize_": lambda self, *a, **k: _storage().resize_(self, *a, **k),
    "resize_as_": lambda self, *a, **k: _storage().resize_as_(self, *a, **k),
    "as_strided_": S.as_strided_, "squeeze_": S.squeeze_, "unsqueeze_": S.unsqueeze_,
    "t_": S.t_, "transpose_": S.transpose_, "swapdims_": S.transpose_,
    "swapaxes_": S.transpose_,
    "new_tensor": lambda self, data, dtype=None, **k: _new(self, "tensor", data, dtype=dtype),
    "new_zeros": lambda self, *size, dtype=None, **k: _new(self, "zeros", *size, dtype=dtype,
                                                          **k),
    "new_ones": lambda self, *size, dtype=None, **k: _new(self, "ones", *size, dtype=dtype, **k),
    "new_empty": lambda self, *size, dtype=None, **k: _new(self, "empty", *size, dtype=dtype,
                                                          **k),
    "new_full": lambda self, size, fill_value, dtype=None, **k: _new(
        self, "full", size, fill_value, dtype=dtype, **k),
    "pin_memory": lambda self: self,
    "share_memory_": lambda self: self,
    "is_shared": lambda self: False,
    "is_pinned": lambda self: False,
    "expand": S.expand, "reshape": S.reshape, "view": S.view, "permute": S.permute,
    "repeat": S.repeat,
    "norm": norms.norm,
})
_METHODS = {k: v for k, v in _METHODS.items() if v is not None}
for _name, _fn in _METHODS.items():
    if not hasattr(Tensor, _name) or _name in ("float", "double", "long", "int", "bool", "type",
                                                "to", "view"):
        _method(_name, _fn)


def _sum_to_size(self, size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size, shape = tuple(int(s) for s in size), self._data.shape
    # torch's rule: `size` must expand to self's shape (dims aligned from the right)
    if len(size) > len(shape) or any(s != 1 and s != n
                                     for s, n in zip(reversed(size), reversed(shape))):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    return sum_to(self, size)


def _new(self, kind, *args, dtype=None, size=None, requires_grad=False, device=None,
         layout=None, pin_memory=False):
    """``self.new_<kind>(...)``: the factory `kind` with self's dtype unless given (torch's
    keywords: ``size=``, ``requires_grad=``, ``device=``, ``layout=``, ``pin_memory=``)."""
    import ndgrad
    if size is not None:
        if args:
            raise TypeError(f"new_{kind}() got multiple values for argument 'size'")
        args = (size,)
    if kind != "tensor" and type(self) is not Tensor:
        from .._creation import batched_factory  # a batched self makes a batched tensor
        if batched_factory[0] is not None:
            out = batched_factory[0](_new, self, (kind,) + args, {"dtype": dtype})
            if out is not NotImplemented:
                return out.requires_grad_() if requires_grad else out
    check_device(device)
    out = getattr(ndgrad, kind)(*args, dtype=dtype if dtype is not None else self.dtype)
    return out.requires_grad_() if requires_grad else out


Tensor.T = property(lambda self: S.permute(self, tuple(range(self._data.ndim - 1, -1, -1))))
Tensor.mT = property(lambda self: S.transpose(self, -2, -1))
Tensor.H = property(lambda self: PW.conj(Tensor.T.fget(self)))
Tensor.mH = property(lambda self: PW.conj(S.transpose(self, -2, -1)))
Tensor.real = property(lambda self: _real(self), lambda self, v: _set_real(self, v))
Tensor.imag = property(lambda self: _imag(self), lambda self, v: _set_imag(self, v))


def _real(self):
    if self._data.dtype.kind != "c":
        return self
    return complex_ops.real(self)


def _imag(self):
    if self._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return complex_ops.imag(self)


def _set_real(self, value):
    self.real.copy_(value)


def _set_imag(self, value):
    # writes through the imag view (CopySlices on the base when autograd records)
    _imag(self).copy_(value)


def _storage():
    return storage


def _legacy_new(dt, args, kwargs):
    return legacy_new(dt, args, kwargs)


# ----------------------------------------------------------------------------- bessel.py
# bessel.py imports after this module (it needs pointwise.py): its methods look it up late.
def _bessel_method(name):
    def method(self, *args, **kwargs):
        return getattr(bessel, "_method_" + name)(self, *args, **kwargs)
    method.__name__ = name
    return method


for _name in ("i0", "i0_", "igamma", "igamma_", "igammac", "igammac_"):
    _method(_name, _bessel_method(_name))


# ----------------------------------------------------------------------------- in-place aliases
# torch's long names of in-place ops that exist under a short name. logical_*_ write without
# history, as torch's (a non-differentiable in-place op leaves the tensor's grad_fn as it was,
# and torch lets it write even into a leaf that requires grad: only the inference rule holds).
def _logical_inplace(op):
    def method(self, other):
        tls = _state.tls
        grad_on, tls.grad_enabled = tls.grad_enabled, False
        try:
            check_inplace(self)
        finally:
            tls.grad_enabled = grad_on
        res = op.impl(self.detach(), other.detach() if isinstance(other, Tensor) else other,
                      None, _plain=True)
        if res._data.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                               f"broadcast shape {list(res._data.shape)}")
        np.copyto(self._data, res._data, casting="unsafe")
        self._vc[0] += 1
        return self
    return method


bind({"divide_": _div_, "greater_": Tensor.gt_, "greater_equal_": Tensor.ge_,
      "less_": Tensor.lt_, "less_equal_": Tensor.le_, "not_equal_": Tensor.ne_,
      "logical_and_": _logical_inplace(CMP.LOGICAL_AND),
      "logical_or_": _logical_inplace(CMP.LOGICAL_OR),
      "logical_xor_": _logical_inplace(CMP.LOGICAL_XOR),
      "bitwise_left_shift_": _ibitwise(CMP.LSHIFT), "bitwise_right_shift_": _ibitwise(CMP.RSHIFT)})
