"""Linear algebra primitives: the matrix products (mm, bmm, mv, dot, vdot, matmul with torch's
folding rules and node names, outer, addmm, addmv, baddbmm, addbmm, einsum, tensordot, cross)
and the decompositions and solvers behind ``ndgrad.linalg`` (inv, solve, det, slogdet,
cholesky, qr, eigh, eig, svd, pinv, lstsq, matrix_exp, triangular and Cholesky solves, norms),
plus torch's top-level names for them (``inverse``, ``det``, ``cholesky``, ``svd``, ...).

Every backward rule is written with ndgrad ops (matmul, the solvers themselves, masks), so
double backward works. Complex gradients follow torch's convention (conjugate Wirtinger):
rules use the conjugate transpose ``mH`` where the real formula has a transpose. The
decomposition rules are torch's (FunctionsManual.cpp), including its gauge checks: a loss that
depends on the arbitrary phase of complex eigen/singular vectors raises torch's error.
Forward kernels are NumPy's LAPACK wrappers; the checks before them reproduce torch's error
types and wording (per kernel, per dtype), since NumPy's own errors differ.
The ``ndgrad.linalg`` module re-exports the ``linalg_*`` functions here under torch's names.
"""

import builtins
import math

import numpy as np

from .. import _dtype, _state
from .._tensor import Tensor, _from_array
from .._graph_core import FREED, SavedTensor
from .elementwise import _conj, sgn, where
from .elementwise import abs as _abs
from .elementwise import log as _log
from .registry import as_tensor_arg, primitive, wrap
from .shape import T_OP

_tls = _state.tls

__all__ = [
    "addbmm",
    "addmm",
    "addmv",
    "baddbmm",
    "bmm",
    "chain_matmul",
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "cross",
    "det",
    "dot",
    "einsum",
    "ger",
    "inner",
    "inverse",
    "logdet",
    "lu_unpack",
    "matmul",
    "matrix_exp",
    "matrix_power",
    "mm",
    "mv",
    "outer",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
    "tensordot",
    "triangular_solve",
    "vdot",
]


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


# ============================================================================ products
_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _c_type(t):
    """The C++ type name torch prints in mm's dtype error."""
    return _C_TYPES.get(t._data.dtype.name, t._data.dtype.name)


def _check_same_dtype(a, b, name):
    """torch's dtype errors of the product kernels (each words it its own way), and their
    NotImplementedError for bool."""
    if a._data.dtype != b._data.dtype:
        if name == "mm":
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_c_type(a)} != {_c_type(b)}")
        if name == "mv":
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{_tname(b)}, {_tname(a)}, and {_tname(b)}")
        raise RuntimeError(f"expected scalar type {_tname(a)} but found {_tname(b)}")
    if a._data.dtype.kind == "b":
        kernel = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu"}.get(name, name)
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


MM = primitive("mm", lambda a, b, p: a @ b, save=((0, 1), (1, 0)))


def _mm_raw_saved(ctx, k, dt):
    """Saved operand k's array when mm's rule may run on raw arrays, else None: a plain
    backward (see elementwise._raw_grad) and a current, hook-free saved real floating tensor
    of the gradient's dtype. The ndgrad ops of the rule would compute exactly these products
    (``g @ b.T``, ``a.T @ g``) and wrap them in fresh plain Tensors."""
    s = ctx._saved[k]
    if type(s) is not SavedTensor or s._hooks is not None or s._version != s._vc[0]:
        return None
    t = s._tensor
    sd = t._data if t is not None else s._data
    return sd if sd.dtype is dt else None


@MM.def_vjp
def _(ctx, g):
    n = ctx._next
    if not _tls.grad_enabled and not _state.special and type(g) is Tensor and \
            ctx._saved is not FREED and g._data.dtype.kind == "f":
        gd = g._data
        dt = gd.dtype
        bd = _mm_raw_saved(ctx, 1, dt) if n[0] else None
        ad = _mm_raw_saved(ctx, 0, dt) if n[1] else None
        if (bd is not None or not n[0]) and (ad is not None or not n[1]):
            return (_from_array(gd @ bd.T) if n[0] else None,
                    _from_array(ad.T @ gd) if n[1] else None)
    a, b = ctx.saved
    # t() of the (2-D) saved operands without the public method's checks: same op, same node
    return (MM.call(g, T_OP.call(_conj(b))) if n[0] else None,
            MM.call(T_OP.call(_conj(a)), g) if n[1] else None)


def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors."""
    a, b = as_tensor_arg(input), as_tensor_arg(mat2)
    if a._data.ndim != 2 or b._data.ndim != 2:
        raise RuntimeError(f"{'self' if a._data.ndim != 2 else 'mat2'} must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x"
                           f"{a._data.shape[1]} and {b._data.shape[0]}x{b._data.shape[1]})")
    _check_same_dtype(a, b, "mm")
    return _out(MM.call(a, b), out)


BMM = primitive("bmm", lambda a, b, p: np.matmul(a, b), save=((0, 1), (1, 0)))


@BMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (BMM.call(g, _conj(b).transpose(1, 2)) if n[0] else None,
            BMM.call(_conj(a).transpose(1, 2), g) if n[1] else None)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors (no broadcasting)."""
    a, b = as_tensor_arg(input), as_tensor_arg(mat2)
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a._data.shape[0] != b._data.shape[0] or a._data.shape[2] != b._data.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._data.shape[0]}, {a._data.shape[2]}] but got: "
                           f"[{b._data.shape[0]}, {b._data.shape[1]}].")
    _check_same_dtype(a, b, "bmm")
    return _out(BMM.call(a, b), out)


MV = primitive("mv", lambda a, v, p: a @ v, save=((0, 1), (1, 0)))


@MV.def_vjp
def _(ctx, g):
    a, v = ctx.saved
    n = ctx._next
    return (g.unsqueeze(1) * _conj(v).unsqueeze(0) if n[0] else None,
            MV.call(_conj(a).t(), g) if n[1] else None)


def _mv_error(a, v, c=None):
    sa, sv = a._data.shape, v._data.shape
    inp = sa[0] if c is None else (c._data.shape[0] if c._data.ndim else 1)
    return RuntimeError(f"size mismatch, got input ({inp}), mat ({sa[0]}x"
                        f"{sa[1] if len(sa) > 1 else 0}), vec ({sv[0] if sv else 0})")


def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    a, v = as_tensor_arg(input), as_tensor_arg(vec)
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._data.ndim}, "
                           f"{v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise _mv_error(a, v)
    _check_same_dtype(a, v, "mv")
    return _out(MV.call(a, v), out)


DOT = primitive("dot", lambda a, b, p: np.asarray(np.dot(a, b)), save=((0, 1), (1, 0)))


@DOT.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g * _conj(b) if n[0] else None, g * _conj(a) if n[1] else None)


def _check_1d_pair(a, b, name):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and "
                           f"{b._data.ndim}D tensors")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and "
                           f"src [{b._data.shape[0]}] to have the same number of elements, but "
                           f"got {a._data.shape[0]} and {b._data.shape[0]} elements respectively")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_tname(a)} and {_tname(b)}")
    if a._data.dtype.kind == "b":
        raise NotImplementedError('"dot" not implemented for \'Bool\'')


def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors (no conjugation)."""
    a, b = as_tensor_arg(input), as_tensor_arg(tensor)
    _check_1d_pair(a, b, "dot")
    return _out(DOT.call(a, b), out)


VDOT = primitive("vdot", lambda a, b, p: np.asarray(np.vdot(a, b)), save=((0, 1), (1, 0)))


@VDOT.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    # vdot(a, b) = sum(conj(a) * b): the conjugate-Wirtinger rule gives conj(g) b and g a.
    return (_conj(g) * b if n[0] else None, g * a if n[1] else None)


def vdot(input, other, *, out=None):
    """``sum(conj(input) * other)`` of two 1-D tensors."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    _check_1d_pair(a, b, "vdot")
    return _out(VDOT.call(a, b), out)


def inner(input, other, *, out=None):
    """Inner product over the last dimension (``tensordot`` of the last dims)."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if a._data.ndim == 0 or b._data.ndim == 0:
        return _out(a * b, out)
    if a._data.shape[-1] != b._data.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(a._data.shape)} and {list(b._data.shape)}")
    return _out(tensordot(a, b, dims=([-1], [-1])), out)


def _strides_foldable(t):
    """t.reshape(-1, t.size(-1)) would be a view (leading dims contiguous among themselves)."""
    d = t._data
    st, sh = d.strides, d.shape
    for i in range(d.ndim - 2):
        if st[i] != st[i + 1] * sh[i + 1]:
            return False
    return True


def _should_fold(t1, t2):
    """torch's matmul folding test (aten LinearAlgebra.cpp should_fold), for (larger, smaller)."""
    larger = t1._data.ndim >= t2._data.ndim
    big = t1 if larger else t2.mT
    small_dim = t2._data.ndim if larger else t1._data.ndim
    small = t2 if larger else t1
    if not (big._data.ndim >= 3 and small_dim <= 2):
        return False
    if small.requires_grad:
        return True
    if t1._data.ndim == 2:
        return False
    if big._data.size == 0:
        return True
    return _strides_foldable(big)


def matmul(input, other, *, out=None):
    """Matrix product with torch's rank rules (dot, mv, mm, folded or broadcast batched),
    the same intermediate nodes as torch (MmBackward0 under UnsafeViewBackward0, ...).

    >>> x = ndgrad.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    >>> (x @ x).sum().backward()
    >>> x.grad
    tensor([[ 7., 11.],
            [ 9., 13.]])
    """
    if type(input) is Tensor and type(other) is Tensor and out is None:
        # Fast path for the common 2-D @ 2-D case (the checks mm would make, inline).
        ad, bd = input._data, other._data
        if ad.ndim == 2 and bd.ndim == 2 and ad.shape[1] == bd.shape[0] and \
                ad.dtype == bd.dtype and ad.dtype.kind != "b":
            return MM.call(input, other)
    from .shape import UNSAFE_VIEW
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return _out(dot(a, b), out)
    if da == 2 and db == 1:
        return _out(mv(a, b), out)
    if da == 1 and db == 2:
        return _out(SQUEEZE_INPLACE.call(mm(a.unsqueeze(0), b), params=0), out)
    if da == 2 and db == 2:
        return _out(mm(a, b), out)
    if da == 3 and db == 3 and (a._data.shape[0] == 1) != (b._data.shape[0] == 1):
        # torch drops a lone batch of one so the product can fold into a single mm.
        return matmul(a.squeeze(0) if a._data.shape[0] == 1 else a,
                      b.squeeze(0) if b._data.shape[0] == 1 else b, out=out)
    if _should_fold(a, b):
        transpose = db > da
        t1 = b.mT if transpose else a
        t2 = (a.t() if da == 2 else a) if transpose else b
        lead = t1._data.shape[:-1]
        folded = t1.reshape(-1, t1._data.shape[-1])
        if t2._data.ndim == 2:
            prod = mm(folded, t2)
            res = UNSAFE_VIEW.call(prod, params=lead + (t2._data.shape[1],))
            return _out(res.mT.contiguous() if transpose else res, out)
        prod = mv(folded, t2)
        return _out(UNSAFE_VIEW.call(prod, params=lead), out)
    # General broadcast batched product through bmm.
    sa, sb = a._data.shape, b._data.shape
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    batch = _broadcast_shapes(sa[:-2] if da > 2 else (), sb[:-2] if db > 2 else ())
    nb = int(np.prod(batch)) if batch else 1
    ea = a.expand(batch + (n, m1)).reshape(nb, n, m1)
    if db == 1:
        eb = b.expand(batch + (m2,)).reshape(nb, m2).unsqueeze(2)
    else:
        eb = b.expand(batch + (m2, p)).reshape(nb, m2, p)
    shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    prod = bmm(ea, eb)
    if db == 1:
        prod = prod.squeeze(-1)
    return _out(UNSAFE_VIEW.call(prod, params=shape), out)


# torch squeezes the (1, n) product in place: its node is SqueezeBackward4 (squeeze_.dim).
SQUEEZE_INPLACE = primitive("squeeze_dim_", lambda x, d: np.squeeze(x, d), "SqueezeBackward4",
                            linear=True)
SQUEEZE_INPLACE.def_vjp(lambda ctx, g: (g.unsqueeze(ctx._params),))


def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors."""
    a, b = as_tensor_arg(input), as_tensor_arg(vec2)
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {a._data.ndim}-D"
                           if a._data.ndim != 1 else
                           f"outer: Expected 1-D argument vec2, but got {b._data.ndim}-D")
    return _out(a.reshape(-1, 1) * b, out)


ger = outer


def _out(result, out):
    if out is None:
        return result
    from .elementwise import _out as _eout
    return _eout(result, out)


# ---------------------------------------------------------------------------- add*mm family
def _scaled_sum(c, prod, beta, alpha):
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return np.broadcast_to(np.zeros((), prod.dtype), prod.shape) + prod
    return prod + (c if beta == 1 else beta * c)


def _addmm_fwd(c, a, b, p):
    return _scaled_sum(c, a @ b, *p)


def _scale(g, s):
    return g if s == 1 else g * s


ADDMM = primitive("addmm", _addmm_fwd, save=((1, 2), (2, 1)))


@ADDMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    return (_scale(g, _conj_s(beta)) if n[0] else None,
            _scale(g.mm(_conj(b).t()), _conj_s(alpha)) if n[1] else None,
            _scale(_conj(a).t().mm(g), _conj_s(alpha)) if n[2] else None)


def _conj_s(s):
    return s.conjugate() if isinstance(s, complex) else s


def _check_bias(c, shape, name):
    """`c` must expand to `shape` (torch's expand error: the first bad dim from the right)."""
    cs = c._data.shape
    if len(cs) > len(shape):
        raise RuntimeError(f"The expanded size of the tensor ({shape[0] if shape else 1}) must "
                           f"match the existing size ({cs[0]}) at non-singleton dimension 0.  "
                           f"Target sizes: {list(shape)}.  Tensor sizes: {list(cs)}")
    for i in range(1, len(cs) + 1):
        if cs[-i] != 1 and cs[-i] != shape[-i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[-i]}) must match the "
                               f"existing size ({cs[-i]}) at non-singleton dimension "
                               f"{len(shape) - i}.  Target sizes: {list(shape)}.  Tensor "
                               f"sizes: {list(cs)}")


def _check_add_dtypes(c, a, b, batched):
    if batched:
        for x in (a, b, c):
            if x._data.dtype != a._data.dtype:
                raise RuntimeError(f"expected scalar type {_tname(a)} but found {_tname(x)}")
    else:
        if c._data.dtype != b._data.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_tname(c)} "
                               f"and {_tname(b)}")
        if a._data.dtype != b._data.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_tname(a)} "
                               f"and {_tname(b)}")


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``, input broadcast to the product's shape."""
    c, a, b = as_tensor_arg(input), as_tensor_arg(mat1), as_tensor_arg(mat2)
    if a._data.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a._data.ndim}-D tensor")
    if b._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b._data.ndim}-D tensor")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x"
                           f"{a._data.shape[1]} and {b._data.shape[0]}x{b._data.shape[1]})")
    _check_bias(c, (a._data.shape[0], b._data.shape[1]), "addmm")
    _check_add_dtypes(c, a, b, False)
    return _out(_reduce_meta(ADDMM.call(c, a, b, params=(beta, alpha)), c, a, b), out)


ADDMV = primitive("addmv", lambda c, a, v, p: _scaled_sum(c, a @ v, *p),
                  save=((1, 2), (2, 1)))


@ADDMV.def_vjp
def _(ctx, g):
    a, v = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    return (_scale(g, _conj_s(beta)) if n[0] else None,
            _scale(g.unsqueeze(1) * _conj(v).unsqueeze(0), _conj_s(alpha)) if n[1] else None,
            _scale(_conj(a).t().mv(g), _conj_s(alpha)) if n[2] else None)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    c, a, v = as_tensor_arg(input), as_tensor_arg(mat), as_tensor_arg(vec)
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {c._data.ndim}, "
                           f"{a._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0] or \
            (c._data.ndim and c._data.shape[0] not in (1, a._data.shape[0])) or c._data.ndim > 1:
        raise _mv_error(a, v, c)
    if not c._data.dtype == a._data.dtype == v._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_tname(c)}, {_tname(a)}, and {_tname(v)}")
    if a._data.dtype.kind == "b":
        raise NotImplementedError('"addmv_impl_cpu" not implemented for \'Bool\'')
    return _out(_reduce_meta(ADDMV.call(c, a, v, params=(beta, alpha)), c, a, v), out)


BADDBMM = primitive("baddbmm", lambda c, a, b, p: _scaled_sum(c, np.matmul(a, b), *p),
                    save=((1, 2), (2, 1)))


@BADDBMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    return (_scale(g, _conj_s(beta)) if n[0] else None,
            _scale(g.bmm(_conj(b).transpose(1, 2)), _conj_s(alpha)) if n[1] else None,
            _scale(_conj(a).transpose(1, 2).bmm(g), _conj_s(alpha)) if n[2] else None)


def _check_bmm_pair(a, b):
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a._data.shape[0] != b._data.shape[0] or a._data.shape[2] != b._data.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._data.shape[0]}, {a._data.shape[2]}] but got: "
                           f"[{b._data.shape[0]}, {b._data.shape[1]}].")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    c, a, b = as_tensor_arg(input), as_tensor_arg(batch1), as_tensor_arg(batch2)
    _check_bmm_pair(a, b)
    _check_bias(c, (a._data.shape[0], a._data.shape[1], b._data.shape[2]), "baddbmm")
    _check_add_dtypes(c, a, b, True)
    return _out(_reduce_meta(BADDBMM.call(c, a, b, params=(beta, alpha)), c, a, b), out)


ADDBMM = primitive("addbmm", lambda c, a, b, p: _scaled_sum(c, np.matmul(a, b).sum(0), *p),
                   save=((1, 2), (2, 1)))


@ADDBMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    ge = g.unsqueeze(0).expand(a._data.shape[0], *g._data.shape) if (n[1] or n[2]) else None
    return (_scale(g, _conj_s(beta)) if n[0] else None,
            _scale(ge.bmm(_conj(b).transpose(1, 2)), _conj_s(alpha)) if n[1] else None,
            _scale(_conj(a).transpose(1, 2).bmm(ge), _conj_s(alpha)) if n[2] else None)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    c, a, b = as_tensor_arg(input), as_tensor_arg(batch1), as_tensor_arg(batch2)
    _check_bmm_pair(a, b)
    _check_bias(c, (a._data.shape[1], b._data.shape[2]), "addbmm")
    _check_add_dtypes(c, a, b, True)
    return _out(_reduce_meta(ADDBMM.call(c, a, b, params=(beta, alpha)), c, a, b), out)


# ============================================================================ einsum
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation, shapes):
    """Canonical form of an einsum: explicit, ellipsis-free, numpy-ready subscripts.

    Returns (input subscripts, output subscripts). Size-1 dims that broadcast against a larger
    size get a private letter in their operand (so NumPy sums a length-1 axis instead of
    refusing to broadcast), which is also what the gradient needs.
    """
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    used = {c for c in eq if c.isalpha()}
    fresh = iter(c for c in _LETTERS if c not in used)
    ell_dims = 0
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        for c in term.replace("...", ""):
            if not c.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{lhs.index(c)} in the equation string, subscripts must "
                                   f"be in [a-zA-Z]")
        n_explicit = len(term.replace("...", ""))
        if "..." in term:
            if len(shape) < n_explicit:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({n_explicit}) is more than the number of dimensions "
                                   f"({len(shape)}) for operand {k}")
            ell_dims = builtins.max(ell_dims, len(shape) - n_explicit)
        elif n_explicit != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({n_explicit}) does not match the number of dimensions "
                               f"({len(shape)}) for operand {k} and no ellipsis was given")
    ell = "".join(next(fresh) for _ in range(ell_dims))
    subs = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            k = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ell[ell_dims - k:] if k else "")
        subs.append(list(term))
    if rhs is None:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = rhs.replace("...", ell)
        for c in out:
            if not any(c in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   f"equation for any input operand")
        if len(set(out)) != len(out):
            raise RuntimeError(f"einsum(): output subscript {out[0]} appears more than once in "
                               f"the output")
    sizes = {}
    for k, (s, shape) in enumerate(zip(subs, shapes)):
        for c, n in zip(s, shape):
            seen = sizes.get(c)
            if seen is not None and seen != n and seen != 1 and n != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which "
                                   f"does not broadcast with previously seen size {seen}")
            if seen is None or seen == 1:
                sizes[c] = n
    for s, shape in zip(subs, shapes):
        for j, (c, n) in enumerate(zip(s, shape)):
            if n == 1 and sizes[c] != 1 and s.count(c) == 1:
                s[j] = next(fresh)
    return ["".join(s) for s in subs], out


def _einsum_fwd(*arrays):
    *arrays, spec = arrays
    ins, out = spec
    eq = ",".join(ins) + "->" + out
    # NumPy's path optimiser (BLAS through tensordot) pays off for chains and large
    # operands; for small ones its planning costs more than the plain loop.
    big = len(arrays) > 2 or sum(x.size for x in arrays) > 10000
    res = np.einsum(eq, *arrays, optimize=big)
    return np.asarray(res)


_EINSUM_BY_ARITY = {}


def _einsum_op(n):
    """The einsum primitive for n operands (the saved-inputs spec depends on the arity)."""
    op = _EINSUM_BY_ARITY.get(n)
    if op is None:
        op = primitive(f"einsum_{n}", _einsum_fwd, "EinsumBackward0",
                       save=tuple((i, None) for i in range(n)))
        op.def_vjp(_einsum_vjp)
        op.def_jvp(_einsum_jvp)
        _EINSUM_BY_ARITY[n] = op
    return op


def _einsum_grad(spec, operands, g, i):
    """Gradient for operand i: an einsum of the other (conjugated) operands and g."""
    ins, out = spec
    target = ins[i]
    used = set("".join(ins) + out)
    fresh = iter(c for c in _LETTERS if c not in used)
    terms = [ins[j] for j in range(len(ins)) if j != i] + [out]
    ops = [_conj(operands[j]) for j in range(len(ins)) if j != i] + [g]
    shape = operands[i]._data.shape
    real_dt = g._data.dtype
    new_target = []
    first = {}
    for c, n in zip(target, shape):
        if c in first:  # repeated subscript: a diagonal; route it through an identity
            c2 = next(fresh)
            terms.append(c + c2)
            ops.append(Tensor(np.eye(n, dtype=real_dt)))
            new_target.append(c2)
        else:
            first[c] = n
            new_target.append(c)
    have = set("".join(terms))
    for c, n in first.items():
        if c not in have:  # summed away in the forward: the gradient broadcasts
            terms.append(c)
            ops.append(Tensor(np.ones(n, dtype=real_dt)))
    return _einsum_call((terms, "".join(new_target)), ops)


def _einsum_call(spec, ops):
    terms, out = spec
    return _einsum_op(len(ops)).call(*ops, params=(tuple(terms), out))


def _einsum_jvp(ctx, *tangents):
    # Multilinear: the sum over operands of the einsum with that operand's tangent in place.
    r = None
    for i, t in enumerate(tangents):
        if t is not None:
            ops = list(ctx.inputs)
            ops[i] = t
            r = _sum_tangents(r, _einsum_call(ctx.params, ops))
    return r


def _sum_tangents(r, s):
    return s if r is None else (r if s is None else r + s)


def _einsum_vjp(ctx, g):
    spec = ctx._params
    operands = ctx.saved[:len(spec[0])]
    return tuple(_einsum_grad(spec, operands, g, i) if ctx._next[i] else None
                 for i in range(len(spec[0])))


def _sublist_equation(args):
    """torch's sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])`` as an equation."""
    def term(sub):
        out = []
        for v in sub:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, int) and 0 <= v < 52:
                out.append(chr(ord("A") + v) if v < 26 else chr(ord("a") + v - 26))
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the valid "
                                 "range [0, 52)")
        return "".join(out)
    ops = list(args[0::2][:len(args) // 2])
    subs = [term(x) for x in args[1::2][:len(args) // 2]]
    eq = ",".join(subs)
    if len(args) % 2:
        eq += "->" + term(args[-1])
    return eq, ops


def einsum(equation, *operands):
    """Einstein summation (``torch.einsum``): explicit or implicit output, ellipsis,
    repeated subscripts (diagonals), size-1 broadcasting, and the sublist form. Backward is
    itself an einsum.

    >>> ndgrad.einsum("ij,j->i", ndgrad.tensor([[2., 1.], [1., 3.]]), ndgrad.tensor([1., 1.]))
    tensor([3., 4.])
    """
    if not isinstance(equation, str):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ops = [as_tensor_arg(o) for o in operands]
    if len(ops) > 26:
        raise RuntimeError("einsum(): at most 26 operands are supported")
    dts = {o._data.dtype for o in ops}
    if len(dts) > 1:
        dt = ops[0]._data.dtype
        for o in ops[1:]:
            if o._data.dtype != dt:
                raise RuntimeError(f"expected scalar type {_tname(ops[0])} but found "
                                   f"{_tname(o)}")
    if len(ops) > 1 and ops[0]._data.dtype.kind == "b":
        raise NotImplementedError('"bmm" not implemented for \'Bool\'')
    ins, out = _parse_einsum(equation, [o._data.shape for o in ops])
    return _einsum_call((ins, out), ops)


# ============================================================================ tensordot
def tensordot(a, b, dims=2, out=None):
    """Contract `dims` of a with `dims` of b (an int: last dims of a with first of b)."""
    a, b = as_tensor_arg(a), as_tensor_arg(b)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a._data.ndim, b._data.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(-dims, 0))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    na, nb = a._data.ndim, b._data.ndim
    ca = [d % na if na else d for d in da]
    cb = [d % nb if nb else d for d in db]
    for x, y, dx, dy in zip(ca, cb, da, db):
        if a._data.shape[x] != b._data.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._data.shape[x]} in dim {dx} and second has size "
                               f"{b._data.shape[y]} in dim {dy}")
    free_a = [d for d in range(na) if d not in ca]
    free_b = [d for d in range(nb) if d not in cb]
    k = int(np.prod([a._data.shape[d] for d in ca])) if ca else 1
    ra = a.permute(free_a + ca).reshape(int(np.prod([a._data.shape[d] for d in free_a])), k)
    rb = b.permute(cb + free_b).reshape(k, int(np.prod([b._data.shape[d] for d in free_b])))
    shape = [a._data.shape[d] for d in free_a] + [b._data.shape[d] for d in free_b]
    return _out(mm(ra, rb).reshape(shape), out)


# ============================================================================ cross
def _cross_fwd(a, b, dim):
    return np.cross(a, b, axis=dim)


CROSS = primitive("linalg_cross", _cross_fwd, "LinalgCrossBackward0", save=((0, 1), (1, 0)))


@CROSS.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    dim = ctx._params
    n = ctx._next
    return (CROSS.call(_conj(b).expand_as(g), g, params=dim) if n[0] else None,
            CROSS.call(g, _conj(a).expand_as(g), params=dim) if n[1] else None)


def _cross(a, b, dim, name):
    a, b = as_tensor_arg(a), as_tensor_arg(b)
    if a._data.ndim != b._data.ndim:
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    shape = _broadcast_shapes(a._data.shape, b._data.shape)
    nd = len(shape)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}]"
                         f", but got {dim})")
    d = dim % nd
    if a._data.shape[d] != 3 or b._data.shape[d] != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got "
                           f"{a._data.shape[d]} and {b._data.shape[d]}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_tname(a)} but found {_tname(b)}")
    if a._data.dtype.kind == "b":
        raise NotImplementedError('"cross" not implemented for \'Bool\'')
    return _reduce_meta(CROSS.call(a, b, params=d), a, b)


def cross(input, other, dim=None, *, out=None):
    """Cross product along `dim` (default: the first dimension of size 3, as torch)."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if dim is None:
        shape = _broadcast_shapes(a._data.shape, b._data.shape)
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return _out(_cross(a, b, dim, "linalg.cross"), out)


def linalg_cross(input, other, *, dim=-1, out=None):
    return _out(_cross(input, other, dim, "linalg.cross"), out)


# ============================================================================ decompositions
def _pad(gs, n):
    """Output gradients of a multi-output node, one per output (the engine may pass fewer)."""
    gs = tuple(gs)
    return gs + (None,) * (n - len(gs))


def _named(name, fields):
    import collections
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    return cls


_InvEx = _named("linalg_inv_ex", ["inverse", "info"])
_SolveEx = _named("linalg_solve_ex", ["result", "info"])
_CholEx = _named("linalg_cholesky_ex", ["L", "info"])
_Slogdet = _named("linalg_slogdet", ["sign", "logabsdet"])
_SlogdetT = _named("slogdet", ["sign", "logabsdet"])
_QR = _named("linalg_qr", ["Q", "R"])
_QRT = _named("qr", ["Q", "R"])
_Eigh = _named("linalg_eigh", ["eigenvalues", "eigenvectors"])
_Eig = _named("linalg_eig", ["eigenvalues", "eigenvectors"])
_SVD = _named("linalg_svd", ["U", "S", "Vh"])
_SVDT = _named("svd", ["U", "S", "V"])
_Lstsq = _named("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_TriSolve = _named("triangular_solve", ["solution", "cloned_coefficient"])


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


def _first_zero_pivot(m):
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK getrf's info)."""
    a = np.array(m, dtype=np.complex128 if m.dtype.kind == "c" else np.float64)
    n = a.shape[0]
    first = 0
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            first = first or k + 1
            continue
        if p != k:
            a[[k, p]] = a[[p, k]]
        a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return first


def _raise_singular_inv(arr):
    n = arr.shape[-1]
    flat = arr.reshape(-1, n, n)
    for b, m in enumerate(flat):
        k = _first_zero_pivot(m)
        if k:
            break
    else:
        b, k = 0, n
    raise LinAlgError(f"linalg.inv: {_batch_prefix(arr, b)}The diagonal element {k} is zero, "
                      "the inversion could not be completed because the input matrix is "
                      "singular.")


def _lu_solve_unchecked(a, b):
    """A^{-1} B through LU without raising on singular A (inf/nan appear, as LAPACK's)."""
    pm, low, up = _lu_np(a)[:3]
    with np.errstate(all="ignore"):
        y = _trisolve_np(low, np.swapaxes(pm, -1, -2) @ b, False, True, True)
        return _trisolve_np(up, y, True, True, False)


def _inv_np(a, ex=False):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        if not ex:
            _raise_singular_inv(a)
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return _lu_solve_unchecked(a, eye).astype(a.dtype)


# params: None, or "ex" for linalg.inv_ex(check_errors=False) (no error on singular input).
INV = primitive("linalg_inv_ex", lambda a, p: _inv_np(a, p == "ex"), "LinalgInvExBackward0",
                save=(("out", None),))


@INV.def_vjp
def _(ctx, g):
    (ainv,) = ctx.saved
    h = _mH(ainv)
    return (-matmul(h, matmul(g, h)),)


def linalg_inv(A, *, out=None):
    """Inverse of square matrices (LinAlgError naming the zero pivot when singular).

    >>> ndgrad.linalg.inv(ndgrad.tensor([[2., 1.], [1., 3.]]))
    tensor([[ 0.6000, -0.2000],
            [-0.2000,  0.4000]])
    """
    A = _check_matrix(A, "linalg.inv")
    return _out(INV.call(A), out)


def inverse(input, *, out=None):
    return linalg_inv(input, out=out)


def _pivot_info(a):
    """LAPACK getrf's info per batch element: the first zero pivot (1-based), 0 if none."""
    if a.size == 0:
        return np.zeros(a.shape[:-2], np.int32)
    return _lu_np(a)[4]


def linalg_inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): info > 0 names the zero pivot of a singular matrix instead of raising
    (unless check_errors)."""
    A = _check_matrix(A, "linalg.inv_ex")
    if check_errors:
        try:
            inv = INV.call(A)
        except LinAlgError as e:
            raise LinAlgError(str(e).replace("linalg.inv:", "linalg.inv_ex:", 1)) from None
        return _InvEx(inv, Tensor(np.zeros(A._data.shape[:-2], np.int32)))
    inv = INV.call(A, params="ex")
    bad = not np.all(np.isfinite(inv._data))
    info = _pivot_info(A._data) if bad else np.zeros(A._data.shape[:-2], np.int32)
    return _InvEx(inv, wrap(np.asarray(info, np.int32)))


# ---------------------------------------------------------------------------- solve
def _is_vector_rhs(A, B):
    sb = B._data.shape
    return len(sb) == 1 or (len(sb) == A._data.ndim - 1 and sb == A._data.shape[:-1])


def _solve_np(a, b, left, vector, ex=False):
    if vector:
        b = b[..., None]
    if not left:
        a = np.swapaxes(a, -1, -2)
        b = np.swapaxes(b, -1, -2)
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        if ex:
            x = _lu_solve_unchecked(a, b).astype(np.result_type(a, b))
            if not left:
                x = np.swapaxes(x, -1, -2)
            return x[..., 0] if vector else x
        n = a.shape[-1]
        flat = np.broadcast_to(a, np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (n, n))
        flat = flat.reshape(-1, n, n)
        idx = next((i for i, m in enumerate(flat) if _first_zero_pivot(m)), 0)
        pre = _batch_prefix(a, idx) if a.ndim > 2 or b.ndim > 2 else ""
        raise LinAlgError(f"torch.linalg.solve: {pre}The solver failed because the input matrix "
                          "is singular.") from None
    if not left:
        x = np.swapaxes(x, -1, -2)
    return x[..., 0] if vector else x


SOLVE = primitive("linalg_solve_ex", lambda a, b, p: _solve_np(a, b, *p),
                  "LinalgSolveExBackward0", save=((0, None), ("out", 0)))


@SOLVE.def_vjp
def _(ctx, g):
    a, x = ctx.saved
    left, vector = ctx._params[:2]
    n = ctx._next
    gb = SOLVE.call(_mH(a), g, params=(left, vector))
    ga = None
    if n[0]:
        if vector:
            ga = -(gb.unsqueeze(-1) * _conj(x).unsqueeze(-2))
        else:
            ga = -matmul(gb, _mH(x)) if left else -matmul(_mH(x), gb)
    return ga, (gb if n[1] else None)


def linalg_solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (or ``X A = B`` with left=False); B may be a (batch of) vector(s).

    >>> ndgrad.linalg.solve(ndgrad.tensor([[2., 1.], [1., 3.]]), ndgrad.tensor([1., 2.]))
    tensor([0.2000, 0.6000])
    """
    A = _check_matrix(A, "linalg.solve", half="lu_cpu")
    B = as_tensor_arg(B)
    vector = _is_vector_rhs(A, B)
    _solve_checks(A, B, left, vector)
    return _out(_reduce_meta(SOLVE.call(A, B, params=(left, vector)), A, B), out)


def _solve_checks(A, B, left, vector):
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_tname(A)} and B of type {_tname(B)} instead")
    n = A._data.shape[-1]
    sb = B._data.shape
    k = (sb[-1] if vector else (sb[-2] if left else sb[-1])) if sb else 0
    if B._data.ndim == 0 or k != n:
        eq = "AX = B" if left else "XA = B"
        bs = "x".join(str(s) for s in sb[-2:]) if not vector else str(sb[-1] if sb else 0)
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {bs})")
    _broadcast_shapes(A._data.shape[:-2], sb[:-1] if vector else sb[:-2])


def linalg_solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info) of ``linalg.solve``; info > 0 flags a singular A instead of raising
    (unless check_errors)."""
    if check_errors:
        try:
            x = linalg_solve(A, B, left=left)
        except LinAlgError as e:
            raise LinAlgError(str(e).replace("torch.linalg.solve:", "torch.linalg.solve_ex:",
                                             1)) from None
        return _SolveEx(x, Tensor(np.zeros(as_tensor_arg(A)._data.shape[:-2], np.int32)))
    A = _check_matrix(A, "linalg.solve", half="lu_cpu")
    B = as_tensor_arg(B)
    vector = _is_vector_rhs(A, B)
    _solve_checks(A, B, left, vector)
    x = _reduce_meta(SOLVE.call(A, B, params=(left, vector, True)), A, B)
    bad = not np.all(np.isfinite(x._data))
    info = _pivot_info(A._data) if bad else np.zeros(A._data.shape[:-2], np.int32)
    return _SolveEx(x, wrap(np.asarray(info, np.int32)))


# ---------------------------------------------------------------------------- det / slogdet
DET = primitive("linalg_det", lambda a, p: np.asarray(np.linalg.det(a)), "LinalgDetBackward0",
                save=((0, None), ("out", None)))


@DET.def_vjp
def _(ctx, g):
    a, det = ctx.saved
    gd = g * _conj(det)
    d = det._data
    if not _grad_on():
        # First-order backward, as torch's LU-solve path: det * A^{-H}; an exactly singular
        # matrix (det == 0) gets a zero gradient (the solve of a zero right-hand side).
        zero = d == 0
        if not np.any(zero):
            return (gd.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(a)),)
        eye = np.broadcast_to(np.eye(a._data.shape[-1], dtype=a._data.dtype), a._data.shape)
        safe = Tensor(np.where(zero[..., None, None], eye, a._data))
        ga = gd.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(safe))
        return (where(Tensor(zero[..., None, None]), 0.0, ga),)
    eps = np.finfo(a._data.dtype).eps
    if not np.any(np.abs(d) < 100 * eps):
        return (gd.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(a)),)
    # Singular matrices under create_graph: the cofactor matrix through the SVD,
    # A = U diag(S) Vh, cof(A)^* = conj(det U det Vh) U diag(prod_{j != i} S_j) Vh.
    u, s, vh = linalg_svd(a)
    alpha = _conj(DET.call(u) * DET.call(vh))
    n = s._data.shape[-1]
    eye = Tensor(np.eye(n, dtype=s._data.dtype))
    others = (s.unsqueeze(-2) * (1 - eye) + eye).prod(-1)
    dd = (g * alpha).unsqueeze(-1) * others
    return (matmul(u * dd.unsqueeze(-2), vh),)


def linalg_det(A, *, out=None):
    """Determinant of square matrices (gradient also defined at singular matrices).

    >>> ndgrad.linalg.det(ndgrad.tensor([[2., 1.], [1., 3.]]))
    tensor(5.)
    """
    A = _check_matrix(A, "linalg.det", half="lu_cpu")
    return _out(DET.call(A), out)


def det(input):
    return linalg_det(input)


def _slogdet_fwd(a, p):
    s, la = np.linalg.slogdet(a)
    return np.asarray(s), np.asarray(la)


SLOGDET = primitive("linalg_slogdet", _slogdet_fwd, "LinalgSlogdetBackward0", n_out=2,
                    save=((0, None), ("out", None)))


@SLOGDET.def_vjp
def _(ctx, gs):
    a, sign = ctx.saved
    g_sign, g_log = _pad(gs, 2)
    gg = g_log
    if a._data.dtype.kind == "c" and g_sign is not None:
        t = (g_sign * _conj(sign)).imag * 1j
        gg = t if gg is None else gg + t
    if gg is None:
        return (None,)
    return (gg.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(a)),)


def linalg_slogdet(A, *, out=None):
    """(sign, log|det|) of square matrices."""
    A = _check_matrix(A, "linalg.slogdet")
    return _Slogdet(*SLOGDET.call(A))


def slogdet(input):
    return _SlogdetT(*linalg_slogdet(input))


def logdet(input):
    """log(det(A)): NaN for a negative determinant of a real matrix (as torch)."""
    _check_matrix(input, "logdet")
    sign, la = linalg_slogdet(input)
    if la._data.dtype == sign._data.dtype:
        return where(sign < 0, float("nan"), la)
    return _log(sign) + la


# ---------------------------------------------------------------------------- cholesky
def _potf2_partial(m):
    """LAPACK potf2's result on a matrix that is not positive-definite: the columns before the
    failing one, the failing diagonal value, the rest of the lower triangle untouched."""
    a = np.tril(np.array(m, copy=True))
    n = a.shape[-1]
    for j in range(n):
        d = a[j, j] - np.vdot(a[j, :j], a[j, :j])
        if not (d.real > 0):
            a[j, j] = d
            return a, j + 1
        a[j, j] = np.sqrt(d)
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ np.conj(a[j, :j])) / a[j, j]
    return a, 0


def _chol_np(a, upper):
    ex = False
    if type(upper) is tuple:  # (upper, "ex"): cholesky_ex without check_errors
        upper, ex = upper[0], True
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        if ex:
            n = a.shape[-1]
            flat = a.reshape(-1, n, n)
            low = np.stack([np.linalg.cholesky(m) if _potf2_partial(m)[1] == 0 else
                            _potf2_partial(m)[0] for m in flat]).reshape(a.shape)
            return np.conj(np.swapaxes(low, -1, -2)) if upper else low
        n = a.shape[-1]
        flat = a.reshape(-1, n, n)
        for b, m in enumerate(flat):
            order = 0
            for k in range(1, n + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    order = k
                    break
            if order:
                break
        else:
            b, order = 0, n
        raise LinAlgError(f"linalg.cholesky: {_batch_prefix(a, b)}The factorization could not "
                          "be completed because the input is not positive-definite (the leading "
                          f"minor of order {order} is not positive-definite).") from None
    return np.conj(np.swapaxes(low, -1, -2)) if upper else low


def _chol_vjp(ctx, g):
    (l_,) = ctx.saved
    upper = ctx._params
    if type(upper) is tuple:
        upper = upper[0]
    low = _mH(l_) if upper else l_
    gl = _mH(g) if upper else g
    ga = _tril(matmul(_mH(low), gl))
    ga = 0.5 * (ga + _mH(_tril(ga, -1)))
    ga = linalg_solve_triangular(_mH(low), ga, upper=True, left=True)
    ga = linalg_solve_triangular(low, ga, upper=False, left=False)
    return (ga,)


CHOLESKY = primitive("linalg_cholesky_ex", lambda a, p: _chol_np(a, p),
                     "LinalgCholeskyExBackward0", save=(("out", None),))
CHOLESKY.def_vjp(_chol_vjp)
CHOLESKY_LEGACY = primitive("cholesky", lambda a, p: _chol_np(a, p), "CholeskyBackward0",
                            save=(("out", None),))
CHOLESKY_LEGACY.def_vjp(_chol_vjp)


def linalg_cholesky(A, *, upper=False, out=None):
    """Cholesky factor L (A = L L^H) of Hermitian positive-definite matrices.

    >>> ndgrad.linalg.cholesky(ndgrad.tensor([[2., 1.], [1., 3.]]))
    tensor([[1.4142, 0.0000],
            [0.7071, 1.5811]])
    """
    A = _check_matrix(A, "linalg.cholesky", half="cholesky_cpu")
    return _out(CHOLESKY.call(A, params=bool(upper)), out)


def linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info > 0 is the order of the leading minor that is not positive-definite
    (then L holds LAPACK's partial factor) instead of an error, unless check_errors."""
    A = _check_matrix(A, "linalg.cholesky_ex", half="cholesky_cpu")
    if check_errors:
        try:
            L = CHOLESKY.call(A, params=bool(upper))
        except LinAlgError as e:
            raise LinAlgError(str(e).replace("linalg.cholesky:", "linalg.cholesky_ex:", 1)) \
                from None
        return _CholEx(L, Tensor(np.zeros(L._data.shape[:-2], np.int32)))
    L = CHOLESKY.call(A, params=(bool(upper), "ex"))
    n = A._data.shape[-1]
    flat = A._data.reshape(-1, n, n)
    info = np.array([_potf2_partial(m)[1] for m in flat], np.int32).reshape(A._data.shape[:-2]) \
        if n and not _is_pd(A._data) else np.zeros(A._data.shape[:-2], np.int32)
    return _CholEx(L, wrap(info))


def _is_pd(a):
    try:
        np.linalg.cholesky(a)
        return True
    except np.linalg.LinAlgError:
        return False


def cholesky(input, upper=False, *, out=None):
    """Deprecated torch.cholesky (CholeskyBackward0)."""
    A = _check_matrix(input, "linalg.cholesky", kernel="cholesky_cpu")
    return _out(CHOLESKY_LEGACY.call(A, params=bool(upper)), out)


# ---------------------------------------------------------------------------- triangular
def _trisolve_np(a, b, upper, left, unit):
    """Solve with the `upper`/lower triangle of a (unit diagonal if `unit`), like trsm."""
    n = a.shape[-1]
    a = np.triu(a) if upper else np.tril(a)
    if unit:
        a = a.copy()
        idx = np.arange(n)
        a[..., idx, idx] = 1
    if not left:
        a = np.swapaxes(a, -1, -2)
        b = np.swapaxes(b, -1, -2)
        upper = not upper
    try:
        with np.errstate(all="ignore"):
            x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        # A zero on the diagonal: substitute by hand so the result holds inf/nan as trsm's.
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, shape + a.shape[-2:])
        x = np.array(np.broadcast_to(b, shape + b.shape[-2:]),
                     dtype=np.result_type(a, b))
        order = range(n - 1, -1, -1) if upper else range(n)
        with np.errstate(all="ignore"):
            for i in order:
                rest = slice(i + 1, n) if upper else slice(0, i)
                s = x[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, rest], x[..., rest, :])
                x[..., i, :] = s / a[..., i, i][..., None]
    if not left:
        x = np.swapaxes(x, -1, -2)
    return x


SOLVE_TRI = primitive("linalg_solve_triangular", lambda a, b, p: _trisolve_np(a, b, *p),
                      "LinalgSolveTriangularBackward0", save=((0, None), ("out", 0)))


@SOLVE_TRI.def_vjp
def _(ctx, g):
    a, x = ctx.saved
    upper, left, unit = ctx._params
    n = ctx._next
    gb = SOLVE_TRI.call(_mH(a), g, params=(not upper, left, unit))
    ga = None
    if n[0]:
        ga = -matmul(gb, _mH(x)) if left else -matmul(_mH(x), gb)
        ga = _triu(ga, int(unit)) if upper else _tril(ga, -int(unit))
    return ga, (gb if n[1] else None)


def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve a triangular system ``A X = B`` (``X A = B`` with left=False)."""
    A = _check_matrix(A, "linalg.solve_triangular", kernel="triangular_solve_cpu")
    B = as_tensor_arg(B)
    if B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    n = A._data.shape[-1]
    k = B._data.shape[-2] if left else B._data.shape[-1]
    if k != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({n}x{n} and {B._data.shape[-2]}x{B._data.shape[-1]})")
    if A._data.dtype != B._data.dtype:  # torch computes in A's dtype
        B = B.to(_dtype.from_np(A._data.dtype))
    _broadcast_shapes(A._data.shape[:-2], B._data.shape[:-2])
    res = SOLVE_TRI.call(A, B, params=(bool(upper), bool(left), bool(unitriangular)))
    return _out(_reduce_meta(res, A, B), out)


def _tri_legacy_fwd(b, a, p):
    upper, transpose, unit = p
    if transpose:
        a = np.swapaxes(a, -1, -2)
        upper = not upper
    x = _trisolve_np(a, b, upper, True, unit)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return x, np.array(np.broadcast_to(a if not transpose else np.swapaxes(a, -1, -2),
                                       shape + a.shape[-2:]))


TRI_LEGACY = primitive("triangular_solve", _tri_legacy_fwd, "TriangularSolveBackward0",
                       n_out=2, save=((1, None), ("out", None)))


@TRI_LEGACY.def_vjp
def _(ctx, gs):
    a, x = ctx.saved
    gx, gm = _pad(gs, 2)
    upper, transpose, unit = ctx._params
    n = ctx._next
    gb = ga = None
    if gx is not None:
        at = a.transpose(-2, -1) if transpose else a
        gb = SOLVE_TRI.call(_mH(at), gx, params=(upper == transpose, True, unit))
        if n[1]:
            ga = -matmul(_conj(x), gb.transpose(-2, -1)) if transpose else -matmul(gb, _mH(x))
            ga = _triu(ga, int(unit)) if upper else _tril(ga, -int(unit))
    if gm is not None and n[1]:
        ga = gm if ga is None else ga + gm
    return (gb if n[0] else None), ga


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Deprecated torch.triangular_solve: (solution, cloned_coefficient)."""
    A = _check_matrix(A, "linalg.solve_triangular", kernel="triangular_solve_cpu")
    b = as_tensor_arg(b)
    if b._data.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b._data.ndim} dimensions instead")
    if b._data.shape[-2] != A._data.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A._data.shape[-2]} by {A._data.shape[-1]} but each b matrix is "
                           f"{b._data.shape[-2]} by {b._data.shape[-1]}")
    res = TRI_LEGACY.call(b, A, params=(bool(upper), bool(transpose), bool(unitriangular)))
    return _TriSolve(*_reduce_meta(res, b, A))


def _chol_solve_np(b, l_, upper):
    low = np.conj(np.swapaxes(l_, -1, -2)) if upper else l_
    y = _trisolve_np(low, b, False, True, False)
    return _trisolve_np(np.conj(np.swapaxes(low, -1, -2)), y, True, True, False)


CHOL_SOLVE = primitive("cholesky_solve", lambda b, l_, p: _chol_solve_np(b, l_, p),
                       save=((1, None), ("out", 1)))


@CHOL_SOLVE.def_vjp
def _(ctx, g):
    l_, x = ctx.saved
    upper = ctx._params
    n = ctx._next
    gb = CHOL_SOLVE.call(g, l_, params=upper)
    gl = None
    if n[1]:
        common = matmul(gb, _mH(x))
        common = common + _mH(common)
        gl = -matmul(l_, common) if upper else -matmul(common, l_)
    return (gb if n[0] else None), gl


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solve ``A X = B`` given the Cholesky factor L of A."""
    B, L = as_tensor_arg(B), as_tensor_arg(L)
    if B._data.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B._data.ndim} "
                           f"dimensions instead")
    if L._data.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L._data.ndim} "
                           f"dimensions instead")
    if L._data.shape[-1] != L._data.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{L._data.shape[-2]} by {L._data.shape[-1]} matrices")
    if B._data.shape[-2] != L._data.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L._data.shape[-2]} by {L._data.shape[-1]} but each b matrix is "
                           f"{B._data.shape[-2]} by {B._data.shape[-1]}")
    if B._data.dtype != L._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(B)} and A of type {_tname(L)} instead.")
    _check_lapack_dtype(L, "cholesky_solve", kernel="cholesky_solve_cpu")
    _broadcast_shapes(B._data.shape[:-2], L._data.shape[:-2])
    return _out(_reduce_meta(CHOL_SOLVE.call(B, L, params=bool(upper)), B, L), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """Inverse of A from its Cholesky factor."""
    L = as_tensor_arg(L)
    eye = Tensor(np.broadcast_to(np.eye(L._data.shape[-1], dtype=L._data.dtype),
                                 L._data.shape).copy())
    return _out(cholesky_solve(eye, L, upper), out)


# ---------------------------------------------------------------------------- qr
def _qr_fwd(a, mode):
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.zeros((0,), a.dtype), r
    q, r = np.linalg.qr(a, mode=mode)
    return q, r


QR = primitive("linalg_qr", _qr_fwd, "LinalgQrBackward0", n_out=2,
               save=(("out", None), ("out1", None)))


def _qr_square_backward(gq, gr, q, r):
    """gA for A = QR with m >= n (R square): (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q,
    copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re(diag(M))."""
    m_ = None
    if gr is not None:
        m_ = matmul(r, _mH(gr))
    if gq is not None:
        t = matmul(_mH(gq), q)
        m_ = -t if m_ is None else m_ - t
    low = _tril(m_, -1)
    d = _diag(m_)
    if d._data.dtype.kind == "c":  # the gauge fixes diag(R) real: only Re(diag M) remains
        d = d.real
    sym = low + _mH(low) + _diag_embed(d)
    b = matmul(q, sym)
    if gq is not None:
        b = b + gq
    return linalg_solve_triangular(_mH(r), b, upper=False, left=False)


@QR.def_vjp
def _(ctx, gs):
    q, r = ctx.saved
    gq, gr = _pad(gs, 2)
    mode = ctx._params
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    m, n = q._data.shape[-2], r._data.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if m >= n:
        return (_qr_square_backward(gq, gr, q, r),)
    # Wide A = Q [U | V]: X = A[:, :m] = QU is square-case, Y = A[:, m:] = QV.
    u = r[..., :, :m]
    y_r = r[..., :, m:]
    gu = gr[..., :, :m] if gr is not None else None
    gv = gr[..., :, m:] if gr is not None else None
    y = matmul(q, y_r)
    gq2 = gq
    if gv is not None:
        extra = matmul(y, _mH(gv))
        gq2 = extra if gq2 is None else gq2 + extra
    gx = _qr_square_backward(gq2, gu, q, u)
    gy = matmul(q, gv) if gv is not None else gx.new_zeros(*y._data.shape)
    from .shape import cat as _cat
    return (_cat([gx, gy], -1),)


def linalg_qr(A, mode="reduced", *, out=None):
    """QR decomposition: mode 'reduced' (default), 'complete' or 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    A = _check_matrix(A, "linalg.qr", square=False, half="geqrf_cpu")
    return _QR(*QR.call(A, params=mode))


def qr(input, some=True, *, out=None):
    return _QRT(*linalg_qr(input, "reduced" if some else "complete"))


# ---------------------------------------------------------------------------- eigh
def _eigh_fwd(a, uplo):
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, v


EIGH = primitive("linalg_eigh", _eigh_fwd, "LinalgEighBackward0", n_out=2,
                 save=(("out", None), ("out1", None)))


@EIGH.def_vjp
def _(ctx, gs):
    lam, v = ctx.saved
    gl, gv = _pad(gs, 2)
    if gv is None:
        return (matmul(v * gl.unsqueeze(-2), _mH(v)),)
    vhgv = matmul(_mH(v), gv)
    if v._data.dtype.kind == "c":
        im = np.imag(np.diagonal(vhgv._data, 0, -2, -1))
        if not np.allclose(im, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this quantity, so it is ill-defined.")
    vhgv = 0.5 * (vhgv - _mH(vhgv))
    n = lam._data.shape[-1]
    eye = Tensor(np.eye(n, dtype=lam._data.dtype))
    e = lam.unsqueeze(-2) - lam.unsqueeze(-1) + eye
    ret = vhgv / e
    if gl is not None:
        ret = ret * (1 - eye) + _diag_embed(gl)
    return (matmul(v, matmul(ret, _mH(v))),)


def _check_uplo(uplo, fname):
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


def linalg_eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices.

    >>> ndgrad.linalg.eigh(ndgrad.tensor([[2., 1.], [1., 3.]])).eigenvalues
    tensor([1.3820, 3.6180])
    """
    A = _check_matrix(A, "linalg.eigh", kernel="linalg_eigh_cpu")
    return _Eigh(*EIGH.call(A, params=_check_uplo(UPLO, "linalg.eigh")))


def linalg_eigvalsh(A, UPLO="L", *, out=None):
    A = _check_matrix(A, "linalg.eigh", kernel="linalg_eigh_cpu")
    uplo = _check_uplo(UPLO, "linalg.eigvalsh")
    if not (A.requires_grad and _grad_on()) and not _special():
        return wrap(np.linalg.eigvalsh(A._data, UPLO=uplo))
    return _out(EIGH.call(A, params=uplo)[0], out)


def _grad_on():
    from .. import _state
    return _state.tls.grad_enabled


def _special():
    """A dual level (forward AD), the profiler or anomaly mode is active: they observe the
    primitives, so the values-only shortcuts must not be taken."""
    from .. import _state
    return _state.special


# ---------------------------------------------------------------------------- svd
def _svd_fwd(a, full):
    return tuple(np.linalg.svd(a, full_matrices=full))


SVD = primitive("linalg_svd", _svd_fwd, "LinalgSvdBackward0", n_out=3,
                save=(("out", None), ("out1", None), ("out2", None)))


@SVD.def_vjp
def _(ctx, gs):
    u, s, vh = ctx.saved
    gu, gs_, gvh = _pad(gs, 3)
    full = ctx._params
    k = s._data.shape[-1]
    if full:
        u = u[..., :, :k]
        vh = vh[..., :k, :]
        gu = gu[..., :, :k] if gu is not None else None
        gvh = gvh[..., :k, :] if gvh is not None else None
    m, n = u._data.shape[-2], vh._data.shape[-1]
    if gu is None and gvh is None:
        return (matmul(u, gs_.unsqueeze(-1) * vh) if m >= n else
                matmul(u * gs_.unsqueeze(-2), vh),)
    is_complex = u._data.dtype.kind == "c"
    uhgu = vhgv = None
    if gu is not None:
        uhgu = matmul(_mH(u), gu)
        uhgu = uhgu - _mH(uhgu)
    if gvh is not None:
        vhgv = matmul(vh, _mH(gvh))
        vhgv = vhgv - _mH(vhgv)
    if is_complex:
        zero = np.zeros(s._data.shape)
        iu = np.imag(np.diagonal(uhgu._data, 0, -2, -1)) if uhgu is not None else zero
        iv = np.imag(np.diagonal(vhgv._data, 0, -2, -1)) if vhgv is not None else zero
        if not np.allclose(iu, -iv, rtol=1e-2, atol=1e-2):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this phase term, making it ill-defined.")
    eye = Tensor(np.eye(k, dtype=s._data.dtype))
    s2 = s * s
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye
    if uhgu is not None and vhgv is not None:
        ret = (uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv) / e
    elif uhgu is not None:
        ret = (uhgu / e) * s.unsqueeze(-2)
    else:
        ret = s.unsqueeze(-1) * (vhgv / e)
    if gs_ is not None:
        ret = ret + _diag_embed(gs_)
    if is_complex and uhgu is not None:
        ret = ret + _diag_embed(_diag(uhgu) / (2 * s))
    if m > n and gu is not None:
        ga = matmul(u, ret)
        gus = gu / s.unsqueeze(-2)
        ga = ga + gus - matmul(u, matmul(_mH(u), gus))
        ga = matmul(ga, vh)
    elif m < n and gvh is not None:
        ga = matmul(ret, vh)
        sgv = gvh / s.unsqueeze(-1)
        ga = ga + sgv - matmul(matmul(sgv, _mH(vh)), vh)
        ga = matmul(u, ga)
    else:
        ga = matmul(u, matmul(ret, vh)) if m >= n else matmul(matmul(u, ret), vh)
    return (ga,)


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition A = U diag(S) Vh (singular values descending).

    >>> ndgrad.linalg.svd(ndgrad.tensor([[2., 1.], [1., 3.]])).S
    tensor([3.6180, 1.3820])
    """
    A = _check_matrix(A, "linalg.svd", square=False, half="linalg_svd_cpu")
    return _SVD(*SVD.call(A, params=bool(full_matrices)))


def linalg_svdvals(A, *, driver=None, out=None):
    A = _check_matrix(A, "linalg.svd", square=False, half="linalg_svd_cpu")
    if not (A.requires_grad and _grad_on()) and not _special():
        return _out(wrap(np.linalg.svd(A._data, compute_uv=False)), out)
    return _out(SVD.call(A, params=False)[1], out)


def svd(input, some=True, compute_uv=True, *, out=None):
    """Deprecated torch.svd: (U, S, V) with V (not Vh); reduced unless some=False."""
    A = _check_matrix(input, "linalg.svd", square=False, half="linalg_svd_cpu")
    if not compute_uv:
        s = linalg_svdvals(A)
        m, n = A._data.shape[-2:]
        zu = Tensor(np.zeros(A._data.shape[:-2] + (m, m if not some else min(m, n)),
                             A._data.dtype))
        zv = Tensor(np.zeros(A._data.shape[:-2] + (n, n if not some else min(m, n)),
                             A._data.dtype))
        return _SVDT(zu, s, zv)
    u, s, vh = linalg_svd(A, full_matrices=not some)
    return _SVDT(u, s, _mH(vh))


# ---------------------------------------------------------------------------- pinv / lstsq
def _pinv_np(a, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        w, v = np.linalg.eigh(a)
        s = np.abs(w)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    smax = s.max(-1, keepdims=True)
    tol = np.maximum(atol, rtol * smax)
    keep = s > tol
    with np.errstate(divide="ignore"):
        if hermitian:
            winv = np.where(keep, 1 / np.where(keep, w, 1), 0).astype(w.dtype)
            return (v * winv[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(s.dtype)
    return (np.conj(np.swapaxes(vh, -1, -2)) * sinv[..., None, :]) @ \
        np.conj(np.swapaxes(u, -1, -2))


PINV = primitive("linalg_pinv", lambda a, p: _pinv_np(a, *p), "LinalgPinvBackward0",
                 save=((0, None), ("out", None)))


def _pinv_backward(g, pinv_a, a):
    m, n = a._data.shape[-2:]
    pinv_ah = _mH(pinv_a)
    gh = _mH(g)
    if m <= n:
        k = matmul(gh, pinv_a)
        k_pinv_ah = matmul(k, pinv_ah)
        return (-_mH(matmul(pinv_a, k)) + k_pinv_ah - matmul(matmul(a, pinv_a), k_pinv_ah)
                + matmul(matmul(pinv_ah, pinv_a), gh - matmul(k, a)))
    k = matmul(pinv_a, gh)
    pinv_ah_k = matmul(pinv_ah, k)
    return (-_mH(matmul(k, pinv_a)) + matmul(matmul(gh - matmul(a, k), pinv_a), pinv_ah)
            + pinv_ah_k - matmul(matmul(pinv_ah_k, pinv_a), a))


@PINV.def_vjp
def _(ctx, g):
    a, p = ctx.saved
    return (_pinv_backward(g, p, a),)


def _pinv_tols(A, atol, rtol, rcond):
    if rcond is not None:
        rtol = rcond
    if isinstance(atol, Tensor):
        atol = atol._data
    if isinstance(rtol, Tensor):
        rtol = rtol._data
    if rtol is None:
        m, n = A._data.shape[-2:]
        eps = np.finfo(A._data.dtype).eps
        rtol = 0.0 if (atol is not None and np.any(np.asarray(atol) > 0)) else eps * max(m, n)
    if atol is None:
        atol = 0.0
    return np.asarray(atol)[..., None] if np.ndim(atol) else atol, \
        np.asarray(rtol)[..., None] if np.ndim(rtol) else rtol


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Moore-Penrose pseudo-inverse (SVD-based; singular values below the tolerance dropped)."""
    A = as_tensor_arg(A)
    if A._data.ndim < 2 or A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        shape = ", ".join(str(s) for s in A._data.shape)
        raise RuntimeError(f"linalg.pinv({_tname(A)}{{[{shape}]}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    atol_, rtol_ = _pinv_tols(A, atol, rtol, rcond)
    return _out(PINV.call(A, params=(atol_, rtol_, bool(hermitian))), out)


def pinverse(input, rcond=1e-15):
    return linalg_pinv(input, rtol=rcond)


def _lstsq_fwd(a, b, p):
    rcond, vector, want_res = p
    m, n = a.shape[-2:]
    rtol = rcond if rcond is not None else np.finfo(a.dtype).eps * max(m, n)
    pa = _pinv_np(a, 0.0, rtol, False)
    bm = b[..., None] if vector else b
    x = pa @ bm
    if want_res:
        r = np.abs(a @ x - bm) ** 2
        res = r.sum(-2)
        res = res[..., 0] if vector else res
    else:
        res = np.zeros((0,), np.abs(x[..., :0, :0]).dtype)
    return (x[..., 0] if vector else x), res


LSTSQ = primitive("linalg_lstsq", _lstsq_fwd, "LinalgLstsqBackward0", n_out=2,
                  save=((0, None), (1, None), ("out", None)))


@LSTSQ.def_vjp
def _(ctx, gs):
    a, b, x = ctx.saved
    _, vector, want_res = ctx._params
    gx, gr = _pad(gs, 2)
    if not want_res:
        gr = None
    n = ctx._next
    ga = gb = None
    xm = x.unsqueeze(-1) if vector else x
    bm = b.unsqueeze(-1) if vector else b
    if gx is not None:
        pinv_a = linalg_pinv(a)
        gxm = gx.unsqueeze(-1) if vector else gx
        if n[0]:
            ga = _pinv_backward(matmul(gxm, _mH(bm)), pinv_a, a)
        if n[1]:
            gb = matmul(_mH(pinv_a), gxm)
    if gr is not None:
        # residuals = sum |A x - B|^2 with x optimal: only the explicit A and B terms remain.
        res = matmul(a, xm) - bm
        w = (gr.unsqueeze(-1) if vector else gr).unsqueeze(-2) * res * 2
        if n[0]:
            t = matmul(w, _mH(xm))
            ga = t if ga is None else ga + t
        if n[1]:
            gb = -w if gb is None else gb - w
    if vector and gb is not None:
        gb = gb.squeeze(-1)
    return ga, gb


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X = B`` (minimum norm when rank-deficient, as 'gelsy').

    Returns (solution, residuals, rank, singular_values) like torch's default CPU driver:
    residuals only for tall full-rank A, singular_values only for the gelsd/gelss drivers.

    >>> A = ndgrad.tensor([[1., 0.], [0., 1.], [1., 1.]])
    >>> ndgrad.linalg.lstsq(A, ndgrad.tensor([[1.], [2.], [3.]])).solution
    tensor([[1.],
            [2.]])
    """
    A, B = as_tensor_arg(A), as_tensor_arg(B)
    if driver is not None and driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B._data.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_tname(A)} and other's dtype "
                           f"{_tname(B)}")
    vector = B._data.ndim == A._data.ndim - 1
    if (B._data.shape[-1] if vector else B._data.shape[-2]) != A._data.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
                           if not vector else
                           "torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
    m, n = A._data.shape[-2:]
    drv = driver or "gelsy"
    s = np.linalg.svd(A._data, compute_uv=False) if A._data.size else \
        np.zeros(A._data.shape[:-2] + (0,), A._data.real.dtype)
    rtol = rcond if rcond is not None else np.finfo(A._data.dtype).eps * max(m, n)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else s
    rank = (s > rtol * smax).sum(-1).astype(np.int64) if s.shape[-1] else \
        np.zeros(A._data.shape[:-2], np.int64)
    empty_real = np.zeros((0,), A._data.real.dtype)
    # Residuals exist for tall, full-rank A with drivers other than gelsy (torch's rule).
    want_res = bool(m > n and drv != "gelsy" and np.all(rank == n))
    x, residuals = LSTSQ.call(A, B, params=(rcond, vector, want_res))
    _reduce_meta((x, residuals), A, B)
    rank_t = wrap(np.asarray(rank, np.int64)) if drv != "gels" else \
        Tensor(np.zeros((0,), np.int64))
    sv = Tensor(s) if drv in ("gelsd", "gelss") else Tensor(empty_real)
    return _Lstsq(x, residuals, rank_t, sv)


# ---------------------------------------------------------------------------- matrix_exp
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _expm_np(a):
    """exp of (batched) matrices: scaling and squaring with the [13/13] Pade approximant
    (Higham 2005), computed in double precision and cast back."""
    if a.size == 0:
        return a.copy()
    dt = a.dtype
    x = a.astype(np.complex128 if dt.kind == "c" else np.float64)
    n = x.shape[-1]
    norm = np.abs(x).sum(-2).max(-1)
    with np.errstate(divide="ignore"):
        s = np.ceil(np.log2(norm / _THETA13))
    s = np.where(np.isfinite(s) & (s > 0), s, 0).astype(np.int64)
    x = x / (2.0 ** s)[..., None, None]
    b = _PADE13
    eye = np.eye(n, dtype=x.dtype)
    a2 = x @ x
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = x @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    top = int(s.max()) if s.size else 0
    for k in range(top):
        if r.ndim == 2:
            r = r @ r
        else:
            sel = s > k
            r[sel] = r[sel] @ r[sel]
    return r.astype(dt)


MATRIX_EXP = primitive("linalg_matrix_exp", lambda a, p: _expm_np(a),
                       "LinalgMatrixExpBackward0", save=((0, None),))


@MATRIX_EXP.def_vjp
def _(ctx, g):
    # The adjoint of the Frechet derivative: the top-right block of exp([[A^H, G], [0, A^H]]).
    (a,) = ctx.saved
    from .shape import cat
    n = a._data.shape[-1]
    ah = _mH(a)
    zero = Tensor(np.zeros(a._data.shape, a._data.dtype))
    big = cat([cat([ah, g], -1), cat([zero, ah], -1)], -2)
    return (MATRIX_EXP.call(big)[..., :n, n:],)


def linalg_matrix_exp(A):
    """The matrix exponential of (batches of) square matrices."""
    A = as_tensor_arg(A)
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(A)}")
    return MATRIX_EXP.call(A)


def matrix_exp(input):
    return linalg_matrix_exp(input)


# ---------------------------------------------------------------------------- eig
def _eig_fwd(a, p):
    w, v = np.linalg.eig(a)
    cdt = np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128
    return w.astype(cdt), v.astype(cdt)


EIG = primitive("linalg_eig", _eig_fwd, "LinalgEigBackward0", n_out=2,
                save=(("out", None), ("out1", None)))


@EIG.def_vjp
def _(ctx, gs):
    lam, v = ctx.saved
    gl, gv = _pad(gs, 2)
    n = lam._data.shape[-1]
    eye = Tensor(np.eye(n, dtype=lam._data.dtype))
    vh = _mH(v)
    if gv is None:
        ret = _diag_embed(gl)
    else:
        vhgv = matmul(vh, gv)
        im = np.imag(np.diagonal(vhgv._data, 0, -2, -1))
        if not np.allclose(im, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this quantity, so it is ill-defined.")
        # Project out the normalisation (||v|| = 1) direction, then divide by the gaps.
        vhgv = vhgv - matmul(vh, v * _diag(vhgv).real.unsqueeze(-2))
        lc = _conj(lam)
        e = lc.unsqueeze(-2) - lc.unsqueeze(-1) + eye
        ret = vhgv / e
        if gl is not None:
            ret = ret * (1 - eye) + _diag_embed(gl)
    return (linalg_solve(vh, matmul(ret, vh)),)


def linalg_eig(A, *, out=None):
    """Eigenvalues and eigenvectors (complex) of general square matrices."""
    A = _check_matrix(A, "linalg.eig", floating=False)
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(A)}")
    return _Eig(*EIG.call(A))


def linalg_eigvals(A, *, out=None):
    A = _check_matrix(A, "linalg.eigvals", floating=False)
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(A)}")
    if not (A.requires_grad and _grad_on()) and not _special():
        return _out(wrap(_eig_fwd(A._data, None)[0]), out)
    return _out(EIG.call(A)[0], out)


# ---------------------------------------------------------------------------- LU
def _lu_np(a):
    """LU with partial pivoting (LAPACK getrf's pivots): returns (P, L, U, pivots, info), with
    A = P L U, 1-based int32 pivots and info the first zero pivot (0 if none), per batch."""
    shape = a.shape
    m, n = shape[-2:]
    k = min(m, n)
    work = np.array(a.reshape((-1, m, n)), copy=True)
    nb = work.shape[0]
    perm = np.tile(np.arange(m), (nb, 1))
    piv = np.zeros((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    rows = np.arange(nb)
    for j in range(k):
        p = j + np.argmax(np.abs(work[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        swap = p != j
        if np.any(swap):
            r = rows[swap]
            pj = p[swap]
            work[r, j], work[r, pj] = work[r, pj].copy(), work[r, j].copy()
            perm[r, j], perm[r, pj] = perm[r, pj].copy(), perm[r, j].copy()
        pivot = work[:, j, j]
        zero = pivot == 0
        info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
        safe = np.where(zero, 1, pivot)
        work[:, j + 1:, j] = np.where(zero[:, None], work[:, j + 1:, j],
                                      work[:, j + 1:, j] / safe[:, None])
        work[:, j + 1:, j + 1:] -= work[:, j + 1:, j:j + 1] * work[:, j:j + 1, j + 1:]
    low = np.tril(work[:, :, :k], -1) + np.eye(m, k, dtype=work.dtype)
    up = np.triu(work[:, :k, :])
    pm = np.zeros((nb, m, m), work.dtype)
    pm[rows[:, None], perm, np.arange(m)[None, :]] = 1
    batch = shape[:-2]
    return (pm.reshape(batch + (m, m)), low.reshape(batch + (m, k)), up.reshape(batch + (k, n)),
            piv.reshape(batch + (k,)), info.reshape(batch), work.reshape(shape))


def _lu_backward(gl, gu, p, low, up):
    """torch's linalg_lu_backward: gA for A = P L U (square, wide and tall cases)."""
    m, n = low._data.shape[-2], up._data.shape[-1]
    k = min(m, n)
    from .shape import cat
    if m == n:
        ga = _tril(matmul(_mH(low), gl), -1) if gl is not None else None
        if gu is not None:
            t = _triu(matmul(gu, _mH(up)))
            ga = t if ga is None else ga + t
        ga = linalg_solve_triangular(_mH(up), ga, upper=False, left=False)
        ga = linalg_solve_triangular(_mH(low), ga, upper=True, left=True, unitriangular=True)
        return matmul(p, ga)
    if m < n:
        u1 = up[..., :, :k]
        ga = matmul(_mH(low), gl) if gl is not None else None
        if gu is not None:
            t = matmul(_triu(gu), _mH(up))
            ga = -t if ga is None else ga - t
        ga = linalg_solve_triangular(_mH(u1), _tril(ga, -1), upper=False, left=False)
        if gu is not None:
            ga = cat([ga + _triu(gu[..., :, :k]), gu[..., :, k:]], -1)
        ga = linalg_solve_triangular(_mH(low), ga, upper=True, left=True, unitriangular=True)
        if gu is None:
            ga = cat([ga, Tensor(np.zeros(up._data.shape[:-1] + (n - k,), up._data.dtype))],
                     -1)
        return matmul(p, ga)
    l1 = low[..., :k, :]
    ga = matmul(gu, _mH(up)) if gu is not None else None
    if gl is not None:
        t = matmul(_mH(low), _tril(gl, -1))
        ga = -t if ga is None else ga - t
    ga = linalg_solve_triangular(_mH(l1), _triu(ga), upper=True, left=True, unitriangular=True)
    if gl is not None:
        ga = cat([ga + _tril(gl[..., :k, :], -1), gl[..., k:, :]], -2)
    ga = linalg_solve_triangular(_mH(up), ga, upper=False, left=False)
    if gl is None:
        ga = cat([ga, Tensor(np.zeros(low._data.shape[:-2] + (m - k, k), low._data.dtype))],
                 -2)
    return matmul(p, ga)


LU = primitive("linalg_lu", lambda a, p: _lu_np(a)[:3], "LinalgLuBackward0", n_out=3,
               diff_outs=(False, True, True), save=(("out", None), ("out1", None),
                                                    ("out2", None)))


@LU.def_vjp
def _(ctx, gs):
    p, low, up = ctx.saved
    _, gl, gu = _pad(gs, 3)
    return (_lu_backward(gl, gu, p, low, up),)


def _lu_factor_fwd(a, p):
    pm, _, _, piv, info, packed = _lu_np(a)
    return packed, piv, info, pm


# Outputs: LU (packed), pivots, info, and P (internal, for the backward).
LU_FACTOR = primitive("linalg_lu_factor_ex", _lu_factor_fwd, "LinalgLuFactorExBackward0",
                      n_out=4, diff_outs=(True, False, False, False),
                      save=(("out", None), ("out3", None)))


def _unpack_lu(lu):
    """Differentiable L (unit lower) and U of a packed LU tensor."""
    m, n = lu._data.shape[-2:]
    k = min(m, n)
    low = _tril(lu[..., :, :k], -1) + Tensor(np.eye(m, k, dtype=lu._data.dtype))
    return low, _triu(lu[..., :k, :])


@LU_FACTOR.def_vjp
def _(ctx, gs):
    lu, p = ctx.saved
    g = gs[0]
    low, up = _unpack_lu(lu)
    k = min(lu._data.shape[-2:])
    return (_lu_backward(_tril(g[..., :, :k], -1), _triu(g[..., :k, :]), p, low, up),)


_Lu = _named("linalg_lu", ["P", "L", "U"])
_LuFactor = _named("linalg_lu_factor", ["LU", "pivots"])
_LuFactorEx = _named("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LuUnpack = _named("lu_unpack", ["P", "L", "U"])


def _check_lu_input(A, fname):
    A = as_tensor_arg(A)
    if A._data.ndim < 2:
        raise RuntimeError(f"{fname}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._data.shape)} instead")
    _check_lapack_dtype(A, fname, kernel="lu_cpu")
    return A


def linalg_lu(A, *, pivot=True, out=None):
    """A = P L U with partial pivoting (P a permutation, L unit lower, U upper)."""
    A = _check_lu_input(A, "linalg.lu")
    if not pivot:
        raise NotImplementedError("linalg.lu: pivot=False is not implemented in ndgrad (torch "
                                  "supports it on CUDA only)")
    return _Lu(*LU.call(A))


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    A = _check_lu_input(A, "torch.linalg.lu_factor_ex")
    packed, piv, info = LU_FACTOR.call(A)[:3]
    if check_errors and np.any(info._data):
        raise LinAlgError(f"torch.linalg.lu_factor_ex: U[{int(info._data.max())},"
                          f"{int(info._data.max())}] is zero")
    return _LuFactorEx(packed, piv, info)


def linalg_lu_factor(A, *, pivot=True, out=None):
    """The packed LU factorisation (LU, pivots) that ``lu_solve`` consumes."""
    A = _check_lu_input(A, "torch.linalg.lu_factor")
    packed, piv, info = LU_FACTOR.call(A)[:3]
    bad = info._data.reshape(-1)
    if np.any(bad):
        k = int(bad[bad != 0][0])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{k},{k}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to "
                           "perform the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    return _LuFactor(packed, piv)


def _perm_from_pivots(piv, m):
    """The permutation matrices P (A = P L U) of 1-based LAPACK pivots (..., k)."""
    k = piv.shape[-1]
    flat = piv.reshape(-1, k)
    perms = np.tile(np.arange(m), (flat.shape[0], 1))
    for b in range(flat.shape[0]):
        for j in range(k):
            q = flat[b, j] - 1
            perms[b, j], perms[b, q] = perms[b, q], perms[b, j]
    pm = np.zeros((flat.shape[0], m, m))
    pm[np.arange(flat.shape[0])[:, None], perms, np.arange(m)[None, :]] = 1
    return pm.reshape(piv.shape[:-1] + (m, m))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from a packed LU factorisation; L and U are differentiable in LU_data."""
    lu = as_tensor_arg(LU_data)
    m = lu._data.shape[-2]
    pm = Tensor(_perm_from_pivots(np.asarray(as_tensor_arg(LU_pivots)._data), m)
                .astype(lu._data.dtype))
    low, up = _unpack_lu(lu)
    return _LuUnpack(pm, low, up)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve with a packed LU factorisation (composite of triangular solves, so gradients
    reach LU and B)."""
    lu, B = as_tensor_arg(LU), as_tensor_arg(B)
    n = lu._data.shape[-1]
    k = B._data.shape[-2] if left else B._data.shape[-1]
    if k != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {B._data.shape[-2]}x{B._data.shape[-1]})")
    pm, low, up = lu_unpack(lu, pivots)
    # A = P L U.  left: A X = B, A^H X = B;  right: X A = B, X A^H = B.
    if left and not adjoint:
        y = linalg_solve_triangular(low, matmul(pm.mT, B), upper=False, unitriangular=True)
        x = linalg_solve_triangular(up, y, upper=True)
    elif left:
        y = linalg_solve_triangular(_mH(up), B, upper=False)
        x = matmul(pm, linalg_solve_triangular(_mH(low), y, upper=True, unitriangular=True))
    elif not adjoint:
        y = linalg_solve_triangular(up, B, upper=True, left=False)
        x = matmul(linalg_solve_triangular(low, y, upper=False, left=False, unitriangular=True),
                   pm.mT)
    else:
        y = linalg_solve_triangular(_mH(low), matmul(B, pm), upper=True, left=False,
                                    unitriangular=True)
        x = linalg_solve_triangular(_mH(up), y, upper=False, left=False)
    return _out(x, out)


# ---------------------------------------------------------------------------- forward rules
# Explicit JVPs for the common ops (the generic rule derives them from the VJPs otherwise).
@INV.def_jvp
def _(ctx, t):
    x = ctx.outputs[0]
    return -matmul(x, matmul(t, x))


@SOLVE.def_jvp
def _(ctx, ta, tb):
    a = ctx.inputs[0]
    x = ctx.outputs[0]
    left, vector = ctx.params[:2]
    rhs = tb
    if ta is not None:
        if vector:
            prod = matmul(ta, x.unsqueeze(-1)).squeeze(-1)
        else:
            prod = matmul(ta, x) if left else matmul(x, ta)
        rhs = -prod if rhs is None else rhs - prod
    return SOLVE.call(a, rhs, params=(left, vector))


def _bilinear_jvp(fn):
    def jvp(ctx, ta, tb):
        a, b = ctx.inputs
        return _sum_tangents(fn(ta, b, ctx) if ta is not None else None,
                             fn(a, tb, ctx) if tb is not None else None)
    return jvp


VDOT.def_jvp(_bilinear_jvp(lambda a, b, ctx: VDOT.call(a, b)))
CROSS.def_jvp(_bilinear_jvp(lambda a, b, ctx: CROSS.call(a, b, params=ctx.params)))


def _add_product_jvp(prod):
    """JVP of ``beta * c + alpha * prod(a, b)``."""
    def jvp(ctx, tc, ta, tb):
        _, a, b = ctx.inputs
        beta, alpha = ctx.params
        r = _sum_tangents(prod(ta, b) if ta is not None else None,
                          prod(a, tb) if tb is not None else None)
        if r is not None and alpha != 1:
            r = r * alpha
        if tc is not None and beta != 0:
            c = tc if beta == 1 else tc * beta
            r = c.expand_as(ctx.outputs[0]) if r is None else r + c
        return r
    return jvp


ADDMV.def_jvp(_add_product_jvp(lambda a, b: MV.call(a, b)))
BADDBMM.def_jvp(_add_product_jvp(lambda a, b: BMM.call(a, b)))
ADDBMM.def_jvp(_add_product_jvp(lambda a, b: BMM.call(a, b).sum(0)))


# ---------------------------------------------------------------------------- composites
def linalg_matrix_power(A, n, *, out=None):
    """A**n by repeated squaring (the same products as torch; n < 0 inverts first)."""
    A = as_tensor_arg(A)
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        eye = Tensor(np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype),
                                     A._data.shape).copy())
        return _out(A.clone().copy_(eye) if A.requires_grad else eye, out)
    a = A
    if n < 0:
        a = linalg_inv(A)
        n = -n
    if n == 1:
        return _out(a.clone(), out)
    if n == 2:
        return _out(matmul(a, a), out)
    if n == 3:
        return _out(matmul(matmul(a, a), a), out)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return _out(result, out)


def matrix_power(input, n):
    return linalg_matrix_power(input, n)


def _multi_dot_order(shapes):
    """Optimal parenthesisation (the classic O(n^3) dynamic programme), as split indices."""
    k = len(shapes)
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = s
    return split


def linalg_multi_dot(tensors, *, out=None):
    """Product of a chain of matrices in the cheapest order (first/last may be vectors)."""
    ts = [as_tensor_arg(t) for t in tensors]
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    d0, dl = ts[0]._data.ndim, ts[-1]._data.ndim
    if d0 not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {d0}D")
    if dl not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {dl}D")
    for i in range(1, n - 1):
        if ts[i]._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{ts[i]._data.ndim}D")
    dt = ts[0]._data.dtype
    for i, t in enumerate(ts[1:], 1):
        if t._data.dtype != dt:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_c_type(ts[0])} and tensor {i} {_c_type(t)}")
    mats = list(ts)
    if d0 == 1:
        mats[0] = mats[0].unsqueeze(0)
    if dl == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i]._data.shape[1] != mats[i + 1]._data.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(ts[i]._data.shape)} and {list(ts[i + 1]._data.shape)} "
                               f"cannot be multiplied")
    if n == 2:
        res = mm(mats[0], mats[1])
    else:
        split = _multi_dot_order([m._data.shape for m in mats])

        def chain(i, j):
            if i == j:
                return mats[i]
            s = split[i][j]
            return mm(chain(i, s), chain(s + 1, j))
        res = chain(0, n - 1)
    shape = ([mats[0]._data.shape[0]] if d0 == 2 else []) + \
        ([mats[-1]._data.shape[1]] if dl == 2 else [])
    return _out(res.view(shape), out)


def chain_matmul(*matrices, out=None):
    if len(matrices) == 1:
        return matrices[0]
    return linalg_multi_dot(matrices, out=out)


# ---------------------------------------------------------------------------- norms
def _norm_dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    out = []
    for d in dim:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        out.append(d % max(ndim, 1) if ndim else 0)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return tuple(out)


def _vn_fwd(x, p):
    ord, dims, keepdim = p
    axis = dims if x.ndim else None
    a = np.abs(x)
    if ord == math.inf:
        r = a.max(axis=axis, keepdims=keepdim)
    elif ord == -math.inf:
        r = a.min(axis=axis, keepdims=keepdim)
    elif ord == 0:
        r = (a != 0).sum(axis=axis, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = a.sum(axis=axis, keepdims=keepdim)
    elif ord == 2:
        r = np.sqrt((a * a).sum(axis=axis, keepdims=keepdim))
    else:
        with np.errstate(divide="ignore"):
            r = (a ** ord).sum(axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r, dtype=a.dtype)


VECTOR_NORM = primitive("linalg_vector_norm", _vn_fwd, "LinalgVectorNormBackward0",
                        save=((0, None), ("out", None)))


@VECTOR_NORM.def_vjp
def _(ctx, g):
    x, norm = ctx.saved
    ord, dims, keepdim = ctx._params
    if not keepdim and x._data.ndim:
        for d in sorted(dims):
            g = g.unsqueeze(d)
            norm = norm.unsqueeze(d)
    if ord == 0:
        return (x * 0,)
    if ord == 1:
        return (sgn(x) * g,)
    if ord == 2:
        return (x * where(norm == 0, 0.0, g / norm),)
    ax = _abs(x)
    if ord in (math.inf, -math.inf):
        mask = (ax == norm)
        count = mask.sum(dims, keepdim=True) if x._data.ndim else mask.sum()
        return (sgn(x) * where(mask, g / count, 0.0),)
    if ord < 1:
        scaled = sgn(x) * where(x == 0, 0.0, ax ** (ord - 1))
        return (scaled * g * norm ** (1 - ord),)
    scale = where(norm == 0, 0.0, g / norm ** (ord - 1))
    if ord < 2:
        return (sgn(x) * ax ** (ord - 1) * scale,)
    return (x * ax ** (ord - 2) * scale,)


def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector ord-norm over `dim` (all elements when None)."""
    x = as_tensor_arg(x)
    if not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(x)}")
    if dtype is not None:
        x = _norm_dtype(x, dtype, "linalg.vector_norm")
    dims = _norm_dims(dim, x._data.ndim)
    if ord < 0 or ord == math.inf:
        empty = x._data.size == 0 if dim is None else \
            any(x._data.shape[d] == 0 for d in dims) if x._data.ndim else False
        if empty:
            name = "inf" if ord == math.inf else ("-inf" if ord == -math.inf else
                                                  _fmt_num(ord))
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty "
                               "tensor because the operation does not have an identity")
    return _out(VECTOR_NORM.call(x, params=(float(ord), dims, bool(keepdim))), out)


def _norm_dtype(x, dtype, fname):
    """Cast for the ``dtype=`` argument of the norms, with torch's checks."""
    dt = _dtype.to_dtype(dtype)
    src = _dtype.from_np(x._data.dtype)
    name = _TYPE_NAMES.get(dt.name, dt.name)
    if src.is_complex and not dt.is_complex:
        raise RuntimeError(f"{fname}: dtype should be complex for complex inputs, but got "
                           f"{name}")
    if not src.is_complex and dt.is_complex:
        raise RuntimeError(f"{fname}: dtype should be real for real inputs, but got {name}")
    if _dtype.promote_types(src, dt) != dt:
        raise RuntimeError(f"{fname}: the dtype of the input ({_tname(x)}) should be "
                           f"convertible without narrowing to the specified dtype ({name})")
    return x.to(dt)


def _fmt_num(v):
    return str(int(v)) if float(v).is_integer() else str(v)


def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norms: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf over the two dims in `dim`."""
    A = as_tensor_arg(A)
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(A)}")
    if dtype is not None:
        A = _norm_dtype(A, dtype, "linalg.matrix_norm")
    if isinstance(dim, int) or len(dim) != 2:
        given = dim if isinstance(dim, int) else " ".join(str(d) for d in dim)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {given}")
    nd = A._data.ndim
    for d in dim:
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {d})")
    dims = (dim[0] % nd, dim[1] % nd)
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if (ord in ("nuc", 2, -2)) and A._data.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{_tname(A)}")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt_num(ord)} not supported.")
    if A._data.shape[dims[0]] == 0 or A._data.shape[dims[1]] == 0:
        # An empty matrix has norm 0 for every order (torch); the 2-norm path gives that 0.
        return _out(linalg_vector_norm(A, 2, dims, keepdim), out)
    if isinstance(ord, str):
        if ord == "fro":
            return _out(linalg_vector_norm(A, 2, dims, keepdim), out)
        res = linalg_svdvals(A.movedim(dims, (-2, -1))).sum(-1)
    else:
        if abs(ord) == 2:
            sv = linalg_svdvals(A.movedim(dims, (-2, -1)))
            res = sv.amax(-1) if ord > 0 else sv.amin(-1)
        else:
            d0, d1 = dims
            if abs(ord) == 1:
                inner_d, outer_d = d0, d1
            else:
                inner_d, outer_d = d1, d0
            s = linalg_vector_norm(A, 1, inner_d, keepdim=keepdim)
            if not keepdim and inner_d < outer_d:
                outer_d -= 1
            res = s.amax(outer_d, keepdim=keepdim) if ord > 0 else \
                s.amin(outer_d, keepdim=keepdim)
            return _out(res, out)
    if keepdim:
        for d in sorted(dims):
            res = res.unsqueeze(d)
    return _out(res, out)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm, chosen by `dim` and `ord` as torch.linalg.norm.

    >>> ndgrad.linalg.norm(ndgrad.tensor([3., 4.]))
    tensor(5.)
    """
    A = as_tensor_arg(A)
    if dim is not None:
        if isinstance(ord, str):
            return linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)
        if isinstance(dim, int) or len(dim) == 1:
            return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype,
                                      out=out)
        return linalg_matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype,
                                  out=out)
    if ord is not None:
        if A._data.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A._data.ndim}D.")
        if A._data.ndim == 2 or isinstance(ord, str):
            return linalg_matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
        return linalg_vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
    return linalg_vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)


def linalg_cond(A, p=None):
    """Condition number (2-norm by default: ratio of extreme singular values)."""
    A = _check_matrix(A, "linalg.svd" if p in (None, 2, -2) else "linalg.cond",
                      square=p not in (None, 2, -2), half="linalg_svd_cpu")
    if p in (None, 2, -2):
        s = linalg_svdvals(A)
        hi, lo = s[..., :1], s[..., -1:]
        return (hi / lo if p != -2 else lo / hi).squeeze(-1)
    return linalg_matrix_norm(A, p) * linalg_matrix_norm(linalg_inv(A), p)


def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """Number of singular values above the tolerance (no gradient)."""
    A = _check_matrix(A, "linalg.matrix_rank", square=False, floating=False)
    if A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol = tol
    atol_, rtol_ = _pinv_tols(A, atol, rtol, None)
    d = A._data
    s = np.abs(np.linalg.eigvalsh(d)) if hermitian else np.linalg.svd(d, compute_uv=False)
    if s.shape[-1] == 0:
        return Tensor(np.zeros(d.shape[:-2], np.int64))
    smax = s.max(-1, keepdims=True)
    tol_ = np.maximum(atol_, rtol_ * smax)
    return Tensor(np.asarray((s > tol_).sum(-1), np.int64))


def linalg_tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a matrix (first `ind` dims as rows), reshaped back."""
    A = as_tensor_arg(A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = A._data.shape[:ind], A._data.shape[ind:]
    pr, pc = int(np.prod(rows)), int(np.prod(cols))
    if pr != pc:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pc} != {pr}")
    return _out(linalg_inv(A.reshape(pr, pc)).reshape(tuple(cols) + tuple(rows)), out)


def linalg_tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) == B``."""
    A, B = as_tensor_arg(A), as_tensor_arg(B)
    if dims is not None:
        nd = A._data.ndim
        dims = [d % nd for d in dims]
        A = A.movedim(dims, list(range(nd - len(dims), nd)))
    k = B._data.ndim
    rest = A._data.shape[k:]
    pr, pl = int(np.prod(rest)), B._data.size
    if pr != pl:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {pr} != {pl}")
    x = linalg_solve(A.reshape(pl, pr), B.reshape(-1))
    return _out(x.reshape(rest), out)


def linalg_vander(x, *, N=None):
    """Vandermonde matrix: columns x**0, x**1, ..., x**(N-1) (products, as torch)."""
    x = as_tensor_arg(x)
    n = (x._data.shape[-1] if x._data.ndim else 0) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from .shape import cat
    ones = Tensor(np.ones(x._data.shape + (1,), x._data.dtype))
    powers = x.unsqueeze(-1).expand(*x._data.shape, n - 1).cumprod(-1)
    return cat([ones, powers], -1)


def linalg_householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, with v_i the i-th column
    of A below the diagonal (unit diagonal): LAPACK's orgqr, as a composite of ndgrad ops."""
    A, tau = as_tensor_arg(A), as_tensor_arg(tau)
    name = "torch.linalg.householder_product"
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{A._data.ndim}")
    k = tau._data.shape[-1]
    if n < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tau._data.shape[:-1] != A._data.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._data.shape[:-1])}")
    _check_lapack_dtype(A, name, kernel="orgqr_cpu")
    if tau._data.dtype != A._data.dtype:
        raise RuntimeError(f"{name}: tau dtype {_tname(tau)} does not match input dtype "
                           f"{_tname(A)}")
    dt = A._data.dtype
    eye = np.eye(m, n, dtype=dt)
    q = Tensor(np.broadcast_to(eye, A._data.shape[:-2] + (m, n)).copy())
    # Apply H_k, ..., H_1 from the left to the first n columns of I (orgqr's order).
    for i in range(k - 1, -1, -1):
        below = np.zeros((m, 1), dtype=dt)
        below[i + 1:] = 1
        unit = np.zeros((m, 1), dtype=dt)
        unit[i] = 1
        v = A[..., :, i:i + 1] * Tensor(below) + Tensor(unit)
        w = matmul(_mH(v), q)
        q = q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ w
    return _out(q, out)


def linalg_vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)``."""
    x, y = as_tensor_arg(x), as_tensor_arg(y)
    if x._data.ndim == 1 and y._data.ndim == 1:
        return _out(vdot(x, y), out)
    return _out((_conj(x) * y).sum(dim), out)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return as_tensor_arg(A).diagonal(offset, dim1, dim2)


def linalg_matmul(input, other, *, out=None):
    return matmul(input, other, out=out)


def _inplace_add(op, fn, out_shape):
    """The in-place ``addmm_``-style method of `fn`: checks as `fn`, self must have the full
    result shape (no broadcasting of self), then the primitive is applied in place."""
    def method(self, m1, m2, *, beta=1, alpha=1):
        from .inplace import apply_inplace
        a, b = as_tensor_arg(m1), as_tensor_arg(m2)
        fn(self.detach(), a.detach(), b.detach(), beta=beta, alpha=alpha)  # torch's checks
        shape = out_shape(a._data.shape, b._data.shape)
        if self._data.shape != shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self._data.shape)} "
                               f"and output tensor size {list(shape)} should match")
        return apply_inplace(op, self, a, b, params=(beta, alpha))
    return method


def _bind_methods():
    # Set directly (not methods.bind): methods.py imports this module while it initialises.
    for name, fn in {
        "inverse": lambda self: linalg_inv(self),
        "det": lambda self: linalg_det(self),
        "logdet": lambda self: logdet(self),
        "slogdet": lambda self: slogdet(self),
        "cholesky": lambda self, upper=False: cholesky(self, upper),
        "cholesky_solve": lambda self, input2, upper=False: cholesky_solve(self, input2, upper),
        "cholesky_inverse": lambda self, upper=False: cholesky_inverse(self, upper),
        "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False:
            triangular_solve(self, A, upper, transpose, unitriangular),
        "qr": lambda self, some=True: qr(self, some),
        "svd": lambda self, some=True, compute_uv=True: svd(self, some, compute_uv),
        "pinverse": lambda self, rcond=1e-15: pinverse(self, rcond),
        "matrix_power": lambda self, n: linalg_matrix_power(self, n),
        "addmv": lambda self, mat, vec, *, beta=1, alpha=1: addmv(self, mat, vec, beta=beta,
                                                                 alpha=alpha),
        "baddbmm": lambda self, b1, b2, *, beta=1, alpha=1: baddbmm(self, b1, b2, beta=beta,
                                                                    alpha=alpha),
        "addbmm": lambda self, b1, b2, *, beta=1, alpha=1: addbmm(self, b1, b2, beta=beta,
                                                                  alpha=alpha),
        "addmm": lambda self, m1, m2, *, beta=1, alpha=1: addmm(self, m1, m2, beta=beta,
                                                                alpha=alpha),
        "cross": lambda self, other, dim=None: cross(self, other, dim),
        "vdot": lambda self, other: vdot(self, other),
        "outer": lambda self, other: outer(self, other),
        "ger": lambda self, other: outer(self, other),
        "inner": lambda self, other: inner(self, other),
        "matrix_exp": lambda self: linalg_matrix_exp(self),
        "adjoint": lambda self: _mH(self),
        "addmm_": _inplace_add(ADDMM, addmm, lambda sa, sb: (sa[0], sb[1])),
        "addmv_": _inplace_add(ADDMV, addmv, lambda sa, sb: (sa[0],)),
        "baddbmm_": _inplace_add(BADDBMM, baddbmm, lambda sa, sb: (sa[0], sa[1], sb[2])),
        "addbmm_": _inplace_add(ADDBMM, addbmm, lambda sa, sb: (sa[1], sb[2])),
    }.items():
        setattr(Tensor, name, fn)


_bind_methods()
