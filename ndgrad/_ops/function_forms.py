"""Top-level functions torch exposes beside its Tensor methods or under an older name:
``adjoint``, ``is_neg``, ``is_same_size``, ``is_signed``, ``get_device``, ``typename``,
``split_with_sizes``, ``trapz`` (``trapezoid``), ``constant_pad_nd``, the out-of-place
``fill`` (torch's ``FillBackward0`` / ``FillBackward1``), ``nonzero_static`` (``nonzero``
padded or cut to a fixed row count), ``as_strided_scatter`` (``AsStridedScatterBackward0``,
with ``Tensor.as_strided_scatter``) and ``Tensor.fill_diagonal_`` (a fill through diagonal
views, so it records torch's ``CopySlices``).

Invariant: the query functions take a Tensor only (torch's TypeError otherwise) and record
nothing; the two OpDefs here declare their reverse and forward rules next to their kernels.
"""

import numpy as np

from .._tensor import Tensor
from .registry import primitive, sizes_decide
from .conv_pool import constant_pad
from .differences import trapezoid
from .indexing import nonzero
from .joins import split
from .shape import as_strided, transpose

__all__ = ["adjoint", "is_neg", "is_same_size", "is_signed", "get_device", "typename",
           "split_with_sizes", "trapz", "constant_pad_nd", "fill", "nonzero_static",
           "as_strided_scatter"]


def _tensor_arg(fname, value, arg="input", pos=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(value).__name__}")
    return value


# ----------------------------------------------------------------------------- queries
def is_neg(input):
    """False: ndgrad has no lazy negation bit (``Tensor.is_neg`` is always False too)."""
    return _tensor_arg("is_neg", input).is_neg()


def is_same_size(input, other):
    _tensor_arg("is_same_size", input)
    _tensor_arg("is_same_size", other, "other", 2)
    return tuple(input._data.shape) == tuple(other._data.shape)


def is_signed(input):
    return _tensor_arg("is_signed", input).is_signed()


def get_device(input):
    return _tensor_arg("get_device", input).get_device()


def typename(obj):
    """The type name torch prints: ``'torch.FloatTensor'`` for a tensor, else the object's
    module-qualified name (builtins unqualified)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


# ----------------------------------------------------------------------------- other names
def adjoint(input):
    """The conjugate transpose of the last two dims (``input.mH`` as one function)."""
    x = _tensor_arg("adjoint", input)
    if x._data.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {x._data.ndim}-D tensor.")
    t = transpose(x, -2, -1)
    return t.conj() if x._data.dtype.kind == "c" else t


def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """The older name of :func:`trapezoid`."""
    if x is not None and not isinstance(x, Tensor):
        # torch's overloads take dx by keyword only
        raise TypeError(f"trapz() received an invalid combination of arguments - got (Tensor, "
                        f"{type(x).__name__}, ...), but expected one of:\n"
                        " * (Tensor y, *, float dx = 1, int dim = -1)\n"
                        " * (Tensor y, Tensor x, *, int dim = -1)\n")
    return trapezoid(y, x, dx=dx, dim=dim)


def constant_pad_nd(input, pad, value=0):
    """Pad (or crop, for negative amounts) the last ``len(pad) // 2`` dims with `value`;
    `pad` lists (left, right) amounts from the last dim backwards, as ``F.pad``."""
    x = _tensor_arg("constant_pad_nd", input)
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > x._data.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {x._data.ndim} dimensions.")
    pairs = [(0, 0)] * x._data.ndim
    for i in range(len(pad) // 2):
        pairs[x._data.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return constant_pad(x, tuple(pairs), value)


# ----------------------------------------------------------------------------- fill
FILL = primitive("fill_out", lambda x, p: np.full(x.shape, p, dtype=x.dtype), "FillBackward0",
                 linear=True)
FILL.def_vjp(lambda ctx, g: (g * 0,))
FILL.def_jvp(lambda ctx, t: t * 0)        # a constant: the tangent it leaves is zero
FILL_T = primitive("fill_out_tensor", lambda x, v, p: np.full(x.shape, v, dtype=x.dtype),
                   "FillBackward1", linear=True)
FILL_T.def_vjp(lambda ctx, g: (g * 0 if ctx._next[0] else None,
                               g.sum() if ctx._next[1] else None))


def fill(input, value):
    """A tensor shaped like `input` filled with `value` (a number or a 0-d tensor)."""
    x = _tensor_arg("fill", input)
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return FILL_T.call(x, value)
    return FILL.call(x, params=value)


# ----------------------------------------------------------------------------- nonzero_static
def nonzero_static(input, *, size, fill_value=-1):
    """The indices of the nonzero elements as ``nonzero`` gives them, cut or padded with
    `fill_value` to exactly `size` rows."""
    x = _tensor_arg("nonzero_static", input)
    if not isinstance(size, (int, np.integer)) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    idx = nonzero(x.detach())._data
    out = np.full((int(size), idx.shape[1]), fill_value, dtype=np.int64)
    k = min(int(size), idx.shape[0])
    out[:k] = idx[:k]
    return Tensor(out)


# ----------------------------------------------------------------------------- as_strided_scatter
def _strided_view(flat, size, stride, offset):
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * item for s in stride))


def _as_strided_scatter_fwd(x, src, p):
    size, stride, offset = p
    out = np.array(x, order="C", copy=True)
    _strided_view(out.reshape(-1), size, stride, offset)[...] = src
    return out


AS_STRIDED_SCATTER = primitive("as_strided_scatter", _as_strided_scatter_fwd,
                               "AsStridedScatterBackward0", linear=True)


@AS_STRIDED_SCATTER.def_vjp
def _(ctx, g):
    size, stride, offset = ctx._params
    gx = gs = None
    if ctx._next[0]:
        gx = AS_STRIDED_SCATTER.call(g, g.new_zeros(size), params=ctx._params)
    if ctx._next[1]:
        gs = as_strided(g.contiguous().clone(), size, stride, offset)
    return gx, gs


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of `input` (as a contiguous tensor) whose elements selected by
    ``as_strided(size, stride, storage_offset)`` are replaced by `src`."""
    x = _tensor_arg("as_strided_scatter", input)
    src = _tensor_arg("as_strided_scatter", src, "src", 2)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    if x.requires_grad and not x.is_contiguous():
        # torch's (internal-assert) refusal: its backward assumes a contiguous input
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous "
                           "inputs")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    sizes_decide()  # the storage bound: NumPy's as_strided does not check it
    need = offset + (1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0)
    if need > x._data.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {x._data.itemsize} requiring a "
                           f"storage size of {need * x._data.itemsize} are out of bounds for "
                           f"storage of size {x._data.size * x._data.itemsize}")
    if tuple(src._data.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(size)}")
    if src._data.dtype != x._data.dtype:
        src = src.to(x.dtype)
    return AS_STRIDED_SCATTER.call(x, src, params=(size, stride, offset))


# ----------------------------------------------------------------------------- fill_diagonal_
def fill_diagonal_(self, fill_value, wrap=False):
    """Write `fill_value` on the main diagonal (all dims equal for >2-d); a tall matrix with
    `wrap` restarts the diagonal every ``ncols + 1`` rows, as torch."""
    nd = self._data.ndim
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = self._data.shape
    if nd > 2 and any(n != shape[0] for n in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    if nd > 2:
        diag = as_strided(self, (shape[0],), (sum(self.stride()),), self.storage_offset())
        diag.fill_(fill_value)
        return self
    nrows, ncols = shape
    sizes_decide()
    step = ncols + 1 if wrap and nrows > ncols else max(nrows, 1)
    for start in range(0, nrows, step):
        self[start:start + ncols].diagonal().fill_(fill_value)
    return self


def _bind():
    bind({"as_strided_scatter": as_strided_scatter, "nonzero_static": nonzero_static,
          "fill_diagonal_": fill_diagonal_})


from .methods import bind  # noqa: E402

_bind()
