"""What the linear-algebra modules share: ``LinAlgError``, torch's dtype names for error
messages, the argument checks of the LAPACK-backed functions (``_check_matrix``: at least 2-D,
square, a supported dtype, each with torch's exception class and wording), small matrix helpers
written in ndgrad ops (``_mH``, triangle masks, diagonal embedding), batch broadcasting with
torch's error, the ``out=`` handling and torch's named return tuples.

Invariants: nothing here records a node of its own; every helper that returns a Tensor is
built from differentiable ndgrad ops, so the VJPs using them stay differentiable
(``create_graph``). The products live in ``matmul.py``, solves and inverses in ``solvers.py``,
factorisations in ``decompositions.py`` and norms in ``norms.py``.
"""

import builtins

import numpy as np

from .._tensor import Tensor
from .pointwise import _conj
from .registry import as_tensor_arg
from .arguments import _out as _eout


class LinAlgError(RuntimeError):
    """Raised when a decomposition or solve fails numerically (torch.linalg.LinAlgError)."""


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _tname(t):
    return _TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name)


def _mH(x):
    """Conjugate transpose of the last two dims."""
    return _conj(x.transpose(-2, -1))


def _eye_like(x, n=None):
    n = x._data.shape[-1] if n is None else n
    return Tensor(np.eye(n, dtype=x._data.dtype))


def _tri_mask(x, lower, k=0):
    """A constant 0/1 tensor selecting the lower (tril(k)) or upper (triu(k)) part of x."""
    m, n = x._data.shape[-2:]
    keep = np.tri(m, n, k, dtype=bool) if lower else ~np.tri(m, n, k - 1, dtype=bool)
    real = x._data.dtype if x._data.dtype.kind != "c" else x._data.real.dtype
    return Tensor(keep.astype(real))


def _tril(x, k=0):
    return x * _tri_mask(x, True, k)


def _triu(x, k=0):
    return x * _tri_mask(x, False, k)


def _diag_embed(v):
    """Batched diagonal matrices from the last dim of v."""
    n = v._data.shape[-1]
    return v.unsqueeze(-1) * _eye_like(v, n)


def _diag(x):
    return x.diagonal(0, -2, -1)


def _broadcast_shapes(sa, sb):
    """Batch broadcasting with torch's error message."""
    n = builtins.max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for i in range(n):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b "
                               f"({pb[i]}) at non-singleton dimension {i}")
        out.append(pa[i] if pb[i] == 1 else pb[i])
    return tuple(out)


def _reduce_meta(out, *inputs):
    """Let the engine sum broadcast gradients back to each input's shape (node._meta)."""
    node = out[0]._grad_fn if isinstance(out, tuple) else out._grad_fn
    if node is None:
        return out
    meta = [None] * len(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            meta[i] = (x._data.shape, x._data.dtype)
    node._meta = tuple(meta)
    return out


def _out(result, out):
    if out is None:
        return result
    return _eout(result, out)


def _pad(gs, n):
    """Output gradients of a multi-output node, one per output (the engine may pass fewer)."""
    gs = tuple(gs)
    return gs + (None,) * (n - len(gs))


def _named(name, fields):
    import collections
    from .. import return_types
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    if not hasattr(return_types, name):  # torch.return_types.<name> names it
        setattr(return_types, name, cls)
    return cls


def _check_matrix(A, fname, square=True, floating=True, half="low", kernel=None):
    """torch's checks of a (batch of) matrices: at least 2-D, square, and a dtype the LAPACK
    kernel supports. `kernel` names the kernel whose NotImplementedError every unsupported
    dtype gets; otherwise integers/bool get linalg's RuntimeError and float16 gets `half`
    ("low": "Low precision dtypes not supported", or a kernel name)."""
    A = as_tensor_arg(A)
    d = A._data
    if d.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and d.shape[-1] != d.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{d.shape[-2]} by {d.shape[-1]} matrices")
    if floating:
        _check_lapack_dtype(A, fname, half, kernel)
    return A


def _check_lapack_dtype(A, fname, half="low", kernel=None):
    dt = A._data.dtype
    if dt.kind in "fc" and dt.itemsize >= 4:
        return
    if kernel is not None:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(A)}\'')
    if dt.kind not in "fc":
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(A)}")
    if half == "low":
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {_tname(A)}")
    raise NotImplementedError(f'"{half}" not implemented for \'{_tname(A)}\'')


def _batch_prefix(arr, b):
    return f"(Batch element {b}): " if arr.ndim > 2 else ""
