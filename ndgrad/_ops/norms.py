"""Norms and the matrix scalars built on them: ``linalg.vector_norm`` (a primitive with its
own VJP, every ``ord`` including 0, +-inf and fractional), ``linalg.matrix_norm`` ('fro',
'nuc', +-1, +-2, +-inf as composites of vector norms, singular values and reductions),
``linalg.norm`` (torch's choice between the two), ``torch.norm`` (the older interface over
both), ``linalg.cond`` and ``linalg.matrix_rank``.

Invariants: the checks before the kernels reproduce torch's errors (dtype, dims, orders,
empty inputs for orders without an identity); the ``dtype=`` argument casts first, with
torch's no-narrowing rule; ``matrix_rank`` returns an integer tensor and records no node.
"""

import math
import warnings

import numpy as np

from .. import _dtype
from .._creation import zeros_like
from .._tensor import Tensor
from .comparison import isnan, where
from .decompositions import linalg_svdvals
from .linalg_common import _TYPE_NAMES, _check_matrix, _out, _tname
from .pointwise import abs as _abs
from .pointwise import sgn
from .registry import as_tensor_arg, primitive
from .solvers import _pinv_tols, linalg_inv


# ---------------------------------------------------------------------------- norms
def _norm_dims(dim, ndim):
    """`dim` wrapped to a tuple of dims, or None when it is None (a 0-d input takes dims 0 and
    -1). Empty means every dim, as None does; the node keeps `dim` as given, as torch's."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    out = []
    for d in dim:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        d = d % max(ndim, 1) if ndim else 0
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(out)


def _reduced_dims(dims, ndim):
    """The dims a vector norm with params `dims` reduces: all of them for None or ()."""
    if not ndim:
        return ()
    return dims if dims else tuple(range(ndim))


def _vector_norm_kernel(x, p):
    ord, dims, keepdim = p
    axis = _reduced_dims(dims, x.ndim) or None
    a = np.abs(x)
    res_dtype = a.dtype
    if res_dtype == np.float16:
        a = a.astype(np.float32)  # torch accumulates half precision in float32
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if ord == math.inf:
            r = a.max(axis=axis, keepdims=keepdim)
        elif ord == -math.inf:
            r = a.min(axis=axis, keepdims=keepdim)
        elif ord == 0:
            r = (a != 0).sum(axis=axis, keepdims=keepdim)
        elif ord == 1:
            r = a.sum(axis=axis, keepdims=keepdim)
        elif ord == 2:
            r = np.sqrt((a * a).sum(axis=axis, keepdims=keepdim))
        else:
            r = (a ** ord).sum(axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r, dtype=res_dtype)


# The one vector-norm primitive: linalg.vector_norm, linalg.norm, matrix_norm's 'fro' and
# +-1 orders and torch.norm all reach it through ``linalg_vector_norm``.
VECTOR_NORM = primitive("linalg_vector_norm", _vector_norm_kernel, "LinalgVectorNormBackward0",
                        save=((0, None), ("out", None)))


def _norm_backward(g, x, norm, ord, dims):
    """torch's norm_backward for orders other than 0, with `g` and `norm` shaped as a
    keepdim result (or as `x`): 0 where 0/0 appears at a zero norm for orders >= 1, ties of
    the inf norms share the gradient (a NaN counts as a tie, as in torch)."""
    if ord == 1:
        return sgn(x) * g
    if ord == 2:
        return g * where(norm == 0, 0.0, x / norm)
    ax = _abs(x)
    if ord in (math.inf, -math.inf):
        mask = (ax == norm) | isnan(ax.detach())
        count = mask.sum(dims, keepdim=True) if dims else mask.to(g.dtype)
        return sgn(x) * ((g / count) * mask)
    if ord < 1:
        scaled = sgn(x) * where(x == 0, 0.0, ax ** (ord - 1))
        return scaled * g * norm ** (1 - ord)
    scaled = sgn(x) * ax ** (ord - 1) if ord < 2 else x * ax ** (ord - 2)
    return scaled * where(norm == 0, 0.0, g / norm ** (ord - 1))


def _keepdim_shaped(t, dims, keepdim):
    if not keepdim:
        for d in sorted(dims):
            t = t.unsqueeze(d)
    return t


@VECTOR_NORM.def_vjp
def _(ctx, g):
    # the 0-"norm" is piecewise constant: torch returns no gradient at all (not zeros)
    x, norm = ctx.saved
    ord, dims, keepdim = ctx._params
    if ord == 0:
        return (None,)
    dims = _reduced_dims(dims, x._data.ndim)
    return (_norm_backward(_keepdim_shaped(g, dims, keepdim), x,
                           _keepdim_shaped(norm, dims, keepdim), ord, dims),)


@VECTOR_NORM.def_jvp
def _(ctx, t):
    # torch's linalg_vector_norm_jvp: the VJP's elementwise factors applied to conj(t), summed
    # over the reduced dims (the real part: the norm is real)
    (x,), (norm,) = ctx.inputs, ctx.outputs
    ord, dims, keepdim = ctx.params
    if ord == 0:
        return zeros_like(norm)
    dims = _reduced_dims(dims, x._data.ndim)
    r = _norm_backward(t.conj(), x, _keepdim_shaped(norm, dims, keepdim), ord, dims)
    if dims:
        r = r.sum(dims, keepdim=keepdim)
    return r.real if r.is_complex() else r


def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector ord-norm over `dim` (all elements when None or empty); torch.norm's numeric
    orders come here too, as in torch."""
    x = as_tensor_arg(x)
    if not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(x)}")
    if dtype is not None:
        x = _norm_dtype(x, dtype, "linalg.vector_norm")
    shape = x._data.shape
    dims = _norm_dims(dim, len(shape))
    if (ord < 0 or ord == math.inf) and x._data.size == 0:
        name = "inf" if ord == math.inf else ("-inf" if ord == -math.inf else _fmt_num(ord))
        if not dims:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty "
                               "tensor because the operation does not have an identity")
        given = (dim,) if isinstance(dim, int) else tuple(dim)
        for d, g in zip(dims, given):
            if shape and shape[d] == 0:
                # torch's message, without the space before "because"
                raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the "
                                   f"dimension {g}because this dimension is empty and the "
                                   "operation does not have an identity")
    return _out(VECTOR_NORM.call(x, params=(float(ord), dims, bool(keepdim))), out)


def _norm_dtype(x, dtype, fname):
    """Cast for the ``dtype=`` argument of the norms, with torch's checks."""
    dt = _dtype.to_dtype(dtype)
    src = _dtype.from_np(x._data.dtype)
    name = _TYPE_NAMES.get(dt.name, dt.name)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname}: dtype should be floating point or complex, but got "
                           f"{name}")
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


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector p-norm over `dim` (linalg.vector_norm, as torch's); "fro" is
    the 2-norm, "nuc" a matrix norm."""
    x = as_tensor_arg(input)
    if isinstance(p, str):
        if p == "nuc":
            return linalg_matrix_norm(x, "nuc", dim if dim is not None else (-2, -1), keepdim,
                                      dtype=dtype)
        if p != "fro" or (isinstance(dim, (tuple, list)) and len(dim) > 2):
            # torch hands these to linalg.matrix_norm, which refuses them
            dims = list(dim) if isinstance(dim, (tuple, list)) else dim
            if isinstance(dims, list) and len(dims) != 2:
                raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got " +
                                   " ".join(str(d) for d in dims))
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        p = 2
    if p is None:
        p = 2
    return linalg_vector_norm(x, p, dim, keepdim, dtype=dtype, out=out)


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


# ---------------------------------------------------------------------------- deprecated norms
# torch keeps these for TorchScript and weight_norm; each warns as torch's.
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of singular values over `dim` (two dims; the last two by default)."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
                  "will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    return linalg_matrix_norm(input, "nuc", tuple(dim), keepdim)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The 2-norm of the entries over `dim`."""
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning, stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return linalg_vector_norm(input, 2, dims, keepdim)


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm over every dim but `dim`, keeping all dims (weight_norm's g); dim=-1
    gives the norm of the whole tensor."""
    x = as_tensor_arg(v)
    if dim == -1:
        return linalg_vector_norm(x, pow)
    nd = x._data.ndim
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}]"
                         f", but got {dim})")
    d = dim % nd
    others = tuple(i for i in range(nd) if i != d)
    return linalg_vector_norm(x, pow, others, True)
