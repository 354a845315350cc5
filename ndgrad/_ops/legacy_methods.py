"""Tensor methods torch keeps from its older APIs: the Python-callback fills of the TH era
(``apply_``, ``map_``, ``map2_``), the deprecated out-of-place ``resize`` / ``resize_as``
(torch's autograd Function ``Resize``: the node ``ResizeBackward``), the attributes of the old
Variable (``volatile``, ``name``) and the methods torch removed in 1.9 but still defines to
raise a message pointing at their replacement (``eig``, ``lstsq``, ``solve``, ``symeig``,
``reinforce``), ``Tensor.tile`` with its legacy int forms (``x.tile(2)``), and the deprecated LU
pair ``lu`` / ``lu_solve`` (functions and methods, with
torch's deprecation warnings, over ``linalg.lu_factor_ex`` / ``linalg.lu_solve``).

Invariants: the callback fills refuse tensors that require grad (torch's error), write
without history and, as torch's, leave the version counter alone; a callback whose result
cannot be stored raises before anything is written.
"""

import warnings
from functools import reduce
from operator import mul

import numpy as np

from .._tensor import Tensor
from .decompositions import _named, linalg_lu_factor_ex, linalg_lu_solve
from .registry import primitive
from .reduction import record_input_shape
from .shape import tile

__all__ = ["lu", "lu_solve"]


# ----------------------------------------------------------------------------- callback fills
def _check_no_grad(name, *tensors):
    if any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _scalar_of(arr):
    kind = arr.dtype.kind
    return (bool if kind == "b" else int if kind in "iu" else complex if kind == "c"
            else float)


def _store(value, dtype):
    """`value` converted as torch stores a Python number into `dtype` (torch's errors)."""
    kind = dtype.kind
    if kind == "c":
        if not isinstance(value, (int, float, complex, np.number, bool)):
            raise TypeError(f"must be complex number, not {type(value).__name__}")
        return complex(value)
    if not isinstance(value, (int, float, np.integer, np.floating, bool)):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    if kind == "b":
        return bool(value)
    if kind in "iu":
        v = int(value)
        info = np.iinfo(dtype)
        if not info.min <= v <= info.max:
            raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")
        return v
    return float(value)


def _fill_by(self, name, fn, others):
    _check_no_grad(name, self, *others)
    shape = self._data.shape
    to_py = _scalar_of(self._data)
    cols = [np.broadcast_to(o._data, shape).reshape(-1).tolist() for o in others]
    mine = self._data.reshape(-1).tolist() if self._data.size else []
    vals = [_store(fn(to_py(a), *(to_py(c[i]) for c in cols)), self._data.dtype)
            for i, a in enumerate(mine)]
    if vals:
        with np.errstate(over="ignore", invalid="ignore"):
            self._data[...] = np.array(vals, dtype=self._data.dtype).reshape(shape)
    return self


def _check_other(self, other, name, argname):
    if other._data.dtype != self._data.dtype:
        raise TypeError(f"{name}: expected {self.type()} for {argname} (got {other.type()})")
    shape, oshape = self._data.shape, other._data.shape
    if len(oshape) > len(shape):
        raise RuntimeError(f"expand({other.type()}{{{list(oshape)}}}, size={list(shape)}): the "
                           f"number of sizes provided ({len(shape)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({len(oshape)})")
    for i in range(1, len(oshape) + 1):
        if oshape[-i] != 1 and oshape[-i] != shape[-i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[-i]}) must match the "
                               f"existing size ({oshape[-i]}) at non-singleton dimension "
                               f"{len(shape) - i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                               f"{list(oshape)}")


def apply_(self, callable):
    """Replace every element x by ``callable(x)`` (CPU only in torch; slow: Python per element)."""
    if not hasattr(callable, "__call__"):
        raise TypeError(f"'{type(callable).__name__}' object is not callable")
    return _fill_by(self, "apply_", callable, ())


def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]) with `tensor` broadcast to self's shape."""
    _check_no_grad("map_", self, tensor)
    _check_other(self, tensor, "map_", "'other'")
    return _fill_by(self, "map_", callable, (tensor,))


def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]) with `x`, `y` broadcast to self's shape."""
    _check_no_grad("map2_", self, x, y)
    _check_other(self, x, "map2_", "argument 'x'")
    _check_other(self, y, "map2_", "argument 'y'")
    return _fill_by(self, "map2_", callable, (x, y))


# ----------------------------------------------------------------------------- resize
def _resize_fwd(x, shape):
    # torch: tensor.new(tensor).contiguous().view(sizes): the same memory when contiguous
    return np.ascontiguousarray(x).reshape(shape)


RESIZE = primitive("resize", _resize_fwd, "ResizeBackward", linear=True)
RESIZE.def_vjp(lambda ctx, g: (g.contiguous().reshape(tuple(ctx._shape)),))
record_input_shape(RESIZE)


def _resize_error(sizes, numel):
    total = reduce(mul, sizes, 1) if all(isinstance(s, int) for s in sizes) else \
        reduce(mul, sizes)
    shown = "x".join(map(str, sizes))
    return RuntimeError(f"requested resize to {shown} ({total} elements in total), but the "
                        f"given tensor has a size of {numel} ({numel} elements). autograd's "
                        "resize can only change the shape of a given tensor, while preserving "
                        "the number of elements. ")


def _resize(self, sizes):
    numel = self._data.size
    if not all(isinstance(s, (int, np.integer)) for s in sizes) or \
            reduce(mul, (int(s) for s in sizes), 1) != numel:
        raise _resize_error(sizes, numel)
    return RESIZE.call(self, params=tuple(int(s) for s in sizes))


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize(self, sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize(self, tuple(tensor._data.shape))


# ----------------------------------------------------------------------------- tile
def tile_method(self, *dims, **kwargs):
    """``Tensor.tile``: dims as one sequence, as ints (``x.tile(2)``, ``x.tile(2, 3)``) or
    as the keyword ``dims=`` (a sequence there, as in torch)."""
    if kwargs:
        if dims or set(kwargs) != {"dims"}:
            raise TypeError("tile() received an invalid combination of arguments")
        dims = kwargs["dims"]
        if not isinstance(dims, (tuple, list)):
            raise TypeError("tile(): argument 'dims' must be tuple of ints, not "
                            f"{type(dims).__name__}")
    elif len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError("tile(): argument 'dims' (position 1) must be tuple of ints, not "
                            f"{type(d).__name__}")
    return tile(self, tuple(dims))


# ----------------------------------------------------------------------------- lu, lu_solve
_LuWithInfo = _named("_lu_with_info", ["LU", "pivots", "info"])

_LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
_LU_SOLVE_WARNING = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")


def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots[, info]): the packed LU factorisation (deprecated by torch)."""
    warnings.warn(_LU_WARNING, UserWarning, stacklevel=2)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    res = linalg_lu_factor_ex(A)
    if get_infos:
        return _LuWithInfo(*res)
    return res[0], res[1]


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """Solve A x = b from A's packed LU factorisation (deprecated by torch)."""
    warnings.warn(_LU_SOLVE_WARNING, UserWarning, stacklevel=2)
    return linalg_lu_solve(LU_data, LU_pivots, b)


# ----------------------------------------------------------------------------- removed methods
_REMOVED = "This function was deprecated since version 1.9 and is now removed. "

_EIG = _REMOVED + (
    "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
    "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
_LSTSQ = _REMOVED + (
    "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
    "reversed arguments and does not return the QR decomposition in the returned tuple "
    "(although it returns other information about the problem).\n\nTo get the QR "
    "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
    "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
    "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
    "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\n"
    "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\n"
    "X = torch.linalg.lstsq(A, B).solution")
_SOLVE = _REMOVED + (
    "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has "
    "its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
    "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)")
_SYMEIG = _REMOVED + (
    "The default behavior has changed from using the upper triangular portion of the matrix by "
    "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) "
    "should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
    "and\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
    "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\n"
    "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
    "probs = policy_network(state)\naction = probs.multinomial()\n"
    "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
    "Use:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\n"
    "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")


def _removed(message):
    def method(self, *args, **kwargs):
        raise RuntimeError(message)
    return method


def _volatile_get(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _volatile_set(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


def _bind():
    bind({"apply_": apply_, "map_": map_, "map2_": map2_, "resize": resize,
          "resize_as": resize_as, "eig": _removed(_EIG), "lstsq": _removed(_LSTSQ),
          "solve": _removed(_SOLVE), "symeig": _removed(_SYMEIG),
          "reinforce": _removed(_REINFORCE), "lu": lu, "lu_solve": lu_solve})
    bind({"tile": tile_method}, overwrite=True)
    Tensor.volatile = property(_volatile_get, _volatile_set)
    Tensor.name = property(lambda self: None)


from .methods import bind  # noqa: E402

_bind()
