"""Matrix products of the foundation: mm, bmm, mv, dot, matmul (torch's dispatch by rank,
with its node names), outer, addmm and linear's building blocks."""

import numpy as np

from .registry import primitive, as_tensor_arg
from .elementwise import _conj

__all__ = ["mm", "bmm", "mv", "dot", "vdot", "matmul", "outer", "addmm", "inner"]


def _check_same_dtype(a, b, name):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name if hasattr(a.dtype, 'name') else a.dtype} != "
                           f"{b.dtype.name}" if name == "mm" else
                           f"{name}: expected both tensors to have same dtype, but found "
                           f"{a.dtype} and {b.dtype}")


MM = primitive("mm", lambda a, b, p: a @ b, save=((0, 1), (1, 0)))


@MM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g.mm(_conj(b).t()) if n[0] else None,
            _conj(a).t().mm(g) if n[1] else None)


def mm(input, mat2):
    a, b = as_tensor_arg(input), as_tensor_arg(mat2)
    if a._data.ndim != 2 or b._data.ndim != 2:
        raise RuntimeError(f"{'self' if a._data.ndim != 2 else 'mat2'} must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x"
                           f"{a._data.shape[1]} and {b._data.shape[0]}x{b._data.shape[1]})")
    _check_same_dtype(a, b, "mm")
    return MM.call(a, b)


BMM = primitive("bmm", lambda a, b, p: np.matmul(a, b), save=((0, 1), (1, 0)))


@BMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g.bmm(_conj(b).transpose(1, 2)) if n[0] else None,
            _conj(a).transpose(1, 2).bmm(g) if n[1] else None)


def bmm(input, mat2):
    a, b = as_tensor_arg(input), as_tensor_arg(mat2)
    if a._data.ndim != 3 or b._data.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if a._data.shape[0] != b._data.shape[0] or a._data.shape[2] != b._data.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._data.shape[0]}, {a._data.shape[2]}] but got: "
                           f"[{b._data.shape[0]}, {b._data.shape[1]}].")
    _check_same_dtype(a, b, "bmm")
    return BMM.call(a, b)


MV = primitive("mv", lambda a, v, p: a @ v, save=((0, 1), (1, 0)))


@MV.def_vjp
def _(ctx, g):
    a, v = ctx.saved
    n = ctx._next
    return (g.unsqueeze(1) * _conj(v).unsqueeze(0) if n[0] else None,
            _conj(a).t().mv(g) if n[1] else None)


def mv(input, vec):
    a, v = as_tensor_arg(input), as_tensor_arg(vec)
    if a._data.ndim != 2 or v._data.ndim != 1 or a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._data.shape[0]}), mat "
                           f"({a._data.shape[0]}x{a._data.shape[1] if a._data.ndim > 1 else 0}),"
                           f" vec ({v._data.shape[0] if v._data.ndim else 0})")
    _check_same_dtype(a, v, "mv")
    return MV.call(a, v)


DOT = primitive("dot", lambda a, b, p: np.asarray(np.dot(a, b)), save=((0, 1), (1, 0)))


@DOT.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g * _conj(b) if n[0] else None, g * _conj(a) if n[1] else None)


def dot(input, tensor):
    a, b = as_tensor_arg(input), as_tensor_arg(tensor)
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and "
                           f"{b._data.ndim}D tensors")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and "
                           f"src [{b._data.shape[0]}] to have the same number of elements, but "
                           "got {} and {} elements respectively".format(a._data.shape[0],
                                                                         b._data.shape[0]))
    _check_same_dtype(a, b, "dot")
    return DOT.call(a, b)


def vdot(input, other):
    return dot(_conj(as_tensor_arg(input)), other)


def inner(input, other):
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    if a._data.ndim == 0 or b._data.ndim == 0:
        return a * b
    return matmul(a, b.movedim(-1, 0).reshape(b._data.shape[-1], -1)).reshape(
        a._data.shape[:-1] + b._data.shape[:-1])


def matmul(input, other):
    """Matrix product with torch's rank rules (dot, mv, mm, broadcast batched)."""
    a, b = as_tensor_arg(input), as_tensor_arg(other)
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        return mm(a.unsqueeze(0), b).squeeze(0)
    if da == 2 and db == 2:
        return mm(a, b)
    if da >= 3 and db <= 2:
        # Fold the batch into the rows: one mm, then an unsafe view back.
        from .shape import UNSAFE_VIEW, _remember_shape
        lead = a._data.shape[:-1]
        folded = a.reshape(-1, a._data.shape[-1])
        if db == 1:
            out = mv(folded, b)
            return _remember_shape(UNSAFE_VIEW.call(out, params=lead), out)
        out = mm(folded, b)
        return _remember_shape(UNSAFE_VIEW.call(out, params=lead + (b._data.shape[-1],)), out)
    # General broadcast batched product.
    a2 = a.unsqueeze(0) if da == 1 else a
    b2 = b.unsqueeze(-1) if db == 1 else b
    if a2._data.shape[-1] != b2._data.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b2._data.shape[0]}, {a2._data.shape[-1]}] but got: "
                           f"[{b2._data.shape[0]}, {b2._data.shape[-2]}].")
    batch = np.broadcast_shapes(a2._data.shape[:-2], b2._data.shape[:-2])
    ea = a2.expand(batch + a2._data.shape[-2:]).reshape(-1, *a2._data.shape[-2:])
    eb = b2.expand(batch + b2._data.shape[-2:]).reshape(-1, *b2._data.shape[-2:])
    from .shape import UNSAFE_VIEW, _remember_shape
    out = bmm(ea, eb)
    shape = batch + (a2._data.shape[-2], b2._data.shape[-1])
    out = _remember_shape(UNSAFE_VIEW.call(out, params=shape), out)
    if da == 1:
        out = out.squeeze(-2)
    if db == 1:
        out = out.squeeze(-1)
    return out


def outer(input, vec2):
    a, b = as_tensor_arg(input), as_tensor_arg(vec2)
    return a.unsqueeze(1) * b.unsqueeze(0)


ger = outer


def _addmm_fwd(c, a, b, p):
    beta, alpha = p
    out = a @ b
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return np.broadcast_to(np.zeros((), out.dtype), out.shape) + out
    return out + (c if beta == 1 else beta * c)


ADDMM = primitive("addmm", _addmm_fwd, save=((1, 2), (2, 1)))


@ADDMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    gc = (g if beta == 1 else g * beta) if n[0] else None
    ga = gb = None
    if n[1]:
        ga = g.mm(_conj(b).t())
        ga = ga if alpha == 1 else ga * alpha
    if n[2]:
        gb = _conj(a).t().mm(g)
        gb = gb if alpha == 1 else gb * alpha
    return gc, ga, gb


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, input broadcast to the product's shape."""
    c, a, b = as_tensor_arg(input), as_tensor_arg(mat1), as_tensor_arg(mat2)
    if a._data.ndim != 2 or b._data.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got {}-D tensor".format(a._data.ndim))
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x"
                           f"{a._data.shape[1]} and {b._data.shape[0]}x{b._data.shape[1]})")
    out = ADDMM.call(c, a, b, params=(beta, alpha))
    node = out._grad_fn
    if node is not None and c._data.shape != out._data.shape:
        node._meta = ((c._data.shape, c._data.dtype), None, None)
    return out
