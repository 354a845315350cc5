"""The matrix products: ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``inner``, ``matmul`` (with
torch's rank rules, folding and intermediate nodes: MmBackward0 under UnsafeViewBackward0, ...),
``outer``/``ger``, the fused ``addmm``/``addmv``/``baddbmm``/``addbmm`` (and their in-place
methods), ``einsum``, ``tensordot``, ``cross``/``linalg.cross``, and the product composites
``linalg.matrix_power``, ``linalg.multi_dot``/``chain_matmul``, ``linalg.vecdot``,
``linalg.vander``, ``linalg.diagonal`` and ``linalg.matmul``.

Each primitive declares its rules next to its forward: the VJP, the JVP (the products are
bilinear: ``registry.bilinear_jvp``; the add*mm family adds ``beta``'s term) and, for mm, bmm,
mv, dot and addmm, the batched VJP and JVP that ``autograd.grad(is_grads_batched=True)`` and
vectorized Jacobians use: a leading batch dimension B on the gradient or tangent, which
``matmul`` broadcasts over (the other ops run their plain rule once per batch element).

Invariants: every rule is written in ndgrad ops, so double backward and forward-over-reverse
work; complex gradients follow torch's conjugate-Wirtinger convention (the conjugate
transpose where the real formula has a transpose, conjugated ``alpha``/``beta``); the checks
before each kernel reproduce torch's errors per kernel and dtype, since NumPy's differ. The
hot ``mm`` VJP may compute on raw arrays (no graph, no observers), giving exactly the values
its ndgrad-op formula would.
"""

import builtins

import numpy as np

from .. import _state
from .._tensor import Tensor, _from_array
from .._graph_core import FREED, SavedTensor
from .linalg_common import _broadcast_shapes, _mH, _out, _reduce_meta, _tname
from .arguments import scalar_first
from .pointwise import _conj
from .registry import as_tensor_arg, bilinear_jvp, jvp_from_parts, primitive, sizes_decide
from .shape import PERMUTE, T_OP, TRANSPOSE
from .inplace import apply_inplace
from .joins import cat
from .shape import UNSAFE_VIEW
from .vmap_helpers import align

_tls = _state.tls

__all__ = [
    "addbmm",
    "addmm",
    "addmv",
    "baddbmm",
    "bmm",
    "chain_matmul",
    "cross",
    "dot",
    "einsum",
    "ger",
    "inner",
    "matmul",
    "matrix_power",
    "mm",
    "mv",
    "outer",
    "tensordot",
    "vdot",
]


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
    if t is not None and t._grad_fn is None and not t._rg and getattr(s, "_rg", False):
        return None  # detached in place since saved: unpack raises torch's error
    sd = t._data if t is not None else s._data
    return sd if sd.dtype is dt else None


# The view ops whose node on an mm operand's edge means the operand is a transposed matrix
# (mm's operands are 2-D, so a permute or transpose there swaps the two dims).
_TRANSPOSING = (T_OP.node, TRANSPOSE.node, PERMUTE.node)


def _transposed_operand(edge):
    """Whether mm's operand on `edge` was made by transposing a matrix. Its gradient is then
    computed transposed, ``(b @ g.T).T`` for input 0 and ``(g.T @ a).T`` for input 1, as
    torch's mm backward does for a column-major operand: the transposing view's backward
    turns it back into the row-major layout of the matrix below, so accumulating it into
    ``.grad`` needs no copy (``x @ w.t()`` with a row-major ``w``, the linear layer written
    by hand). Same products, computed in the other order of the operands."""
    return edge is not None and type(edge[0]) in _TRANSPOSING


@MM.def_vjp
def _(ctx, g):
    n = ctx._next
    ta = _transposed_operand(n[0])
    tb = _transposed_operand(n[1])
    if not _tls.grad_enabled and not _state.special and type(g) is Tensor and \
            ctx._saved is not FREED and g._data.dtype.kind == "f":
        gd = g._data
        dt = gd.dtype
        bd = _mm_raw_saved(ctx, 1, dt) if n[0] else None
        ad = _mm_raw_saved(ctx, 0, dt) if n[1] else None
        if (bd is not None or not n[0]) and (ad is not None or not n[1]):
            ga = gb = None
            if n[0]:
                ga = _from_array((bd @ gd.T).T if ta else gd @ bd.T)
            if n[1]:
                gb = _from_array((gd.T @ ad).T if tb else ad.T @ gd)
            return ga, gb
    a, b = ctx.saved
    # t() of the (2-D) operands without the public method's checks: same op, same node
    ga = gb = None
    if n[0]:
        ga = T_OP.call(MM.call(_conj(b), T_OP.call(g))) if ta else \
            MM.call(g, T_OP.call(_conj(b)))
    if n[1]:
        gb = T_OP.call(MM.call(T_OP.call(g), _conj(a))) if tb else \
            MM.call(T_OP.call(_conj(a)), g)
    return ga, gb


MM.def_jvp(bilinear_jvp(lambda a, b, ctx: MM.call(a, b)))


# Batching rules of the products: matmul's broadcasting over a leading dim is the batch.
@MM.def_vmap
def _(batched, p, a, b):
    if batched[1] and not batched[0]:
        # (a b_i) = (b_i^T a^T)^T: the batch folds into one product instead of a broadcast
        return matmul(b.transpose(-2, -1), a.transpose(-2, -1)).transpose(-2, -1)
    return matmul(a, b)


def _batched_product_vjp(ctx, g):
    """mm's and bmm's VJP for a gradient with a leading batch dim: matmul broadcasts the
    saved operands over it."""
    a, b = ctx.saved
    n = ctx._next
    return (matmul(g, _conj(b).mT) if n[0] else None,
            matmul(_conj(a).mT, g) if n[1] else None)


# Batched tangents: ta (B, n, k) @ b and a @ tb (B, k, p) broadcast the same way.
_batched_product_jvp = bilinear_jvp(lambda a, b, ctx: matmul(a, b))
MM.def_batched_vjp(_batched_product_vjp)
MM.def_batched_jvp(_batched_product_jvp)


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


def _bmm_fwd(a, b, p):
    """bmm's kernel; two shortcuts for the shapes vmap(grad) produces."""
    if a.shape[2] == 1:
        # A batch of outer products (per-sample weight gradients under vmap): NumPy's matmul
        # takes a slow non-BLAS loop for an inner size of 1; the broadcast product is exact.
        return np.multiply(a, b)
    if b.strides[0] == 0 and a.shape[0] > 1 and a.size and b.size:  # (empty: any stride)
        # One matrix broadcast over the batch (an unbatched weight under vmap): one product
        # over the folded batch instead of a loop of small ones.
        n, k = a.shape[1], a.shape[2]
        return (a.reshape(-1, k) @ b[0]).reshape(a.shape[0], n, b.shape[2])
    return np.matmul(a, b)


BMM = primitive("bmm", _bmm_fwd, save=((0, 1), (1, 0)))


@BMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (BMM.call(g, _conj(b).transpose(1, 2)) if n[0] else None,
            BMM.call(_conj(a).transpose(1, 2), g) if n[1] else None)


BMM.def_jvp(bilinear_jvp(lambda a, b, ctx: BMM.call(a, b)))
BMM.def_vmap(lambda batched, p, a, b: matmul(a, b))
BMM.def_batched_vjp(_batched_product_vjp)
BMM.def_batched_jvp(_batched_product_jvp)


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


MV.def_jvp(bilinear_jvp(lambda a, v, ctx: MV.call(a, v)))


@MV.def_vmap
def _(batched, p, a, v):
    if not batched[1]:
        return matmul(a, v)
    if not batched[0]:  # one product: the batch of vectors times the matrix transposed
        return matmul(v, a.transpose(-2, -1))
    return matmul(a, v.unsqueeze(-1)).squeeze(-1)



@MV.def_batched_vjp
def _(ctx, g):
    # g (B, n): outer products g[b] v^H, and g @ conj(A) for the vector.
    a, v = ctx.saved
    n = ctx._next
    return (g.unsqueeze(-1) * _conj(v) if n[0] else None,
            matmul(g, _conj(a)) if n[1] else None)


# ta (B, n, k) @ v, and A @ tv for tv (B, k) as tv @ A^T.
MV.def_batched_jvp(jvp_from_parts((lambda ctx, ta: matmul(ta, ctx.inputs[1]),
                                   lambda ctx, tv: matmul(tv, ctx.inputs[0].mT))))


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


DOT.def_jvp(bilinear_jvp(lambda a, b, ctx: DOT.call(a, b)))
DOT.def_vmap(lambda batched, p, a, b: (a * b).sum(-1))


@DOT.def_batched_vjp
def _(ctx, g):
    a, b = ctx.saved
    n = ctx._next
    return (g.unsqueeze(-1) * _conj(b) if n[0] else None,
            g.unsqueeze(-1) * _conj(a) if n[1] else None)


DOT.def_batched_jvp(bilinear_jvp(lambda a, b, ctx: (a * b).sum(-1)))


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


VDOT.def_jvp(bilinear_jvp(lambda a, b, ctx: VDOT.call(a, b)))


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
        return _out(MATMUL_SQUEEZE.call(mm(a.unsqueeze(0), b), params=0), out)
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
        # the row count spelled out: -1 cannot be inferred when the contracted dim is 0
        folded = t1.reshape(int(np.prod(lead, dtype=np.int64)), t1._data.shape[-1])
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


# torch squeezes matmul's (1, n) product in place (squeeze_.dim, node SqueezeBackward4), so
# the result is no view. A primitive of its own, named apart from shape.py's view squeeze_
# (squeeze_dim_): the fresh product needs no in-place machinery and keeps vmap and forward AD.
MATMUL_SQUEEZE = primitive("matmul_squeeze", lambda x, d: np.squeeze(x, d), "SqueezeBackward4",
                           linear=True)
MATMUL_SQUEEZE.def_vmap(lambda batched, d, x: MATMUL_SQUEEZE.call(x, params=d + 1))
MATMUL_SQUEEZE.def_vjp(lambda ctx, g: (g.unsqueeze(ctx._params),))


def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors."""
    a, b = as_tensor_arg(input), as_tensor_arg(vec2)
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {a._data.ndim}-D"
                           if a._data.ndim != 1 else
                           f"outer: Expected 1-D argument vec2, but got {b._data.ndim}-D")
    return _out(a.reshape(-1, 1) * b, out)


ger = outer


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


def _add_product_jvp(prod, batched=False):
    """JVP of ``beta * c + alpha * prod(a, b)`` (the add*mm family). `batched`: the tangents
    carry a leading batch dim B, which `prod` broadcasts over and c's tangent is aligned to."""
    def c_part(ctx, tc):
        beta = ctx.params[0]
        if beta == 0:  # torch ignores input (and its nan/inf) when beta is 0
            return None
        shape = ctx.outputs[0]._data.shape
        if batched:
            cs = ctx.inputs[0]._data.shape
            B = tc._data.shape[0]
            tc = tc.reshape((B,) + (1,) * (len(shape) - len(cs)) + cs)
            shape = (B,) + shape
        return _scale(tc, beta).expand(shape)
    return jvp_from_parts((c_part,
                           lambda ctx, ta: _scale(prod(ta, ctx.inputs[2]), ctx.params[1]),
                           lambda ctx, tb: _scale(prod(ctx.inputs[1], tb), ctx.params[1])))


ADDMM = primitive("addmm", _addmm_fwd, save=((1, 2), (2, 1)))


@ADDMM.def_vjp
def _(ctx, g):
    a, b = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    return (_scale(g, _conj_s(beta)) if n[0] else None,
            _scale(g.mm(_conj(b).t()), _conj_s(alpha)) if n[1] else None,
            _scale(_conj(a).t().mm(g), _conj_s(alpha)) if n[2] else None)


ADDMM.def_jvp(_add_product_jvp(lambda a, b: MM.call(a, b)))


@ADDMM.def_vmap
def _(batched, p, c, a, b):
    beta, alpha = p
    prod = matmul(a, b)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    (c,) = align(batched[:1], (c,), 2)
    return prod + (c * beta if beta != 1 else c)



@ADDMM.def_batched_vjp
def _(ctx, g):
    a, b = ctx.saved
    beta, alpha = ctx._params
    n = ctx._next
    return (_scale(g, _conj_s(beta)) if n[0] else None,
            _scale(matmul(g, _conj(b).mT), _conj_s(alpha)) if n[1] else None,
            _scale(matmul(_conj(a).mT, g), _conj_s(alpha)) if n[2] else None)


ADDMM.def_batched_jvp(_add_product_jvp(matmul, batched=True))


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


def addmm(input, mat1, mat2, *legacy, beta=1, alpha=1, out=None):
    if legacy:  # the deprecated addmm(beta, input[, alpha], mat1, mat2)
        (input, mat1, mat2), kw = scalar_first("addmm", (input, mat1, mat2) + legacy,
                                            beta != 1 or alpha != 1)
        beta, alpha = kw["beta"], kw.get("alpha", 1)
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


ADDMV.def_jvp(_add_product_jvp(lambda a, b: MV.call(a, b)))


def addmv(input, mat, vec, *legacy, beta=1, alpha=1, out=None):
    if legacy:  # the deprecated addmv(beta, input[, alpha], mat, vec)
        (input, mat, vec), kw = scalar_first("addmv", (input, mat, vec) + legacy,
                                            beta != 1 or alpha != 1)
        beta, alpha = kw["beta"], kw.get("alpha", 1)
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


BADDBMM.def_jvp(_add_product_jvp(lambda a, b: BMM.call(a, b)))


def _check_bmm_pair(a, b):
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a._data.shape[0] != b._data.shape[0] or a._data.shape[2] != b._data.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._data.shape[0]}, {a._data.shape[2]}] but got: "
                           f"[{b._data.shape[0]}, {b._data.shape[1]}].")


def baddbmm(input, batch1, batch2, *legacy, beta=1, alpha=1, out=None):
    if legacy:  # the deprecated baddbmm(beta, input[, alpha], batch1, batch2)
        (input, batch1, batch2), kw = scalar_first("baddbmm", (input, batch1, batch2) + legacy,
                                            beta != 1 or alpha != 1)
        beta, alpha = kw["beta"], kw.get("alpha", 1)
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


ADDBMM.def_jvp(_add_product_jvp(lambda a, b: BMM.call(a, b).sum(0)))


def addbmm(input, batch1, batch2, *legacy, beta=1, alpha=1, out=None):
    if legacy:  # the deprecated addbmm(beta, input[, alpha], batch1, batch2)
        (input, batch1, batch2), kw = scalar_first("addbmm", (input, batch1, batch2) + legacy,
                                            beta != 1 or alpha != 1)
        beta, alpha = kw["beta"], kw.get("alpha", 1)
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
        # Multilinear: one part per operand, the einsum with that operand's tangent in place.
        op.def_jvp_parts(*[_einsum_jvp_part(i) for i in range(n)])
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


def _einsum_jvp_part(i):
    def part(ctx, t):
        ops = list(ctx.inputs)
        ops[i] = t
        return _einsum_call(ctx.params, ops)
    return part


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
        sx, sy = a._data.shape[x], b._data.shape[y]
        # a contracted dim of size 1 broadcasts (torch's rule): the other side is summed over
        # it first, keeping it as size 1
        if sy == 1 and sx != 1:
            a = a.sum(x, keepdim=True)
        elif sx == 1 and sy != 1:
            b = b.sum(y, keepdim=True)
        elif sx != sy:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{sx} in dim {dx} and second has size {sy} in dim {dy}")
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


CROSS.def_jvp(bilinear_jvp(lambda a, b, ctx: CROSS.call(a, b, params=ctx.params)))


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
        a = A.inverse()  # linalg.inv (solvers.py sits above this module)
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
    sizes_decide()
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


def linalg_vander(x, *, N=None):
    """Vandermonde matrix: columns x**0, x**1, ..., x**(N-1) (products, as torch)."""
    x = as_tensor_arg(x)
    if x._data.ndim == 0:  # torch reads a 0-d x as one point: a 1 x N matrix
        x = x.reshape(1)
    n = x._data.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = Tensor(np.ones(x._data.shape + (1,), x._data.dtype))
    powers = x.unsqueeze(-1).expand(*x._data.shape, n - 1).cumprod(-1)
    return cat([ones, powers], -1)


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


def _inplace_add(op, fn, out_shape, resizes=False):
    """The in-place ``addmm_``-style method of `fn`: checks as `fn`, self must have the full
    result shape (no broadcasting of self), then the primitive is applied in place. With
    `resizes` (torch's addbmm_, which writes through its out= kernel) a self of another,
    broadcastable shape is resized to the result's and receives it."""
    def method(self, m1, m2, *legacy, beta=1, alpha=1):
        if legacy:  # the deprecated addmm_(beta, alpha, mat1, mat2) and addmm_(beta, ...)
            (self, m1, m2), kw = scalar_first(op.name + "_", (self, m1, m2) + legacy,
                                              beta != 1 or alpha != 1)
            beta, alpha = kw["beta"], kw.get("alpha", 1)
        a, b = as_tensor_arg(m1), as_tensor_arg(m2)
        res = fn(self.detach(), a.detach(), b.detach(), beta=beta, alpha=alpha)  # checks
        shape = out_shape(a._data.shape, b._data.shape)
        if self._data.shape != shape and resizes:
            res = fn(self, a, b, beta=beta, alpha=alpha)
            return self.resize_(shape).copy_(res)
        if self._data.shape != shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self._data.shape)} "
                               f"and output tensor size {list(shape)} should match")
        return apply_inplace(op, self, a, b, params=(beta, alpha))
    return method


def _bind_methods():
    # Set directly (not methods.bind): methods.py imports this module while it initialises,
    # and the other linalg modules do the same.
    for name, fn in {
        "matrix_power": lambda self, n: linalg_matrix_power(self, n),
        "addmv": lambda self, mat, vec, *legacy, beta=1, alpha=1: addmv(
            self, mat, vec, *legacy, beta=beta, alpha=alpha),
        "baddbmm": lambda self, b1, b2, *legacy, beta=1, alpha=1: baddbmm(
            self, b1, b2, *legacy, beta=beta, alpha=alpha),
        "addbmm": lambda self, b1, b2, *legacy, beta=1, alpha=1: addbmm(
            self, b1, b2, *legacy, beta=beta, alpha=alpha),
        "addmm": lambda self, m1, m2, *legacy, beta=1, alpha=1: addmm(
            self, m1, m2, *legacy, beta=beta, alpha=alpha),
        "cross": lambda self, other, dim=None: cross(self, other, dim),
        "vdot": lambda self, other: vdot(self, other),
        "outer": lambda self, other: outer(self, other),
        "ger": lambda self, other: outer(self, other),
        "inner": lambda self, other: inner(self, other),
        "adjoint": lambda self: _mH(self),
        "addmm_": _inplace_add(ADDMM, addmm, lambda sa, sb: (sa[0], sb[1])),
        "addmv_": _inplace_add(ADDMV, addmv, lambda sa, sb: (sa[0],)),
        "baddbmm_": _inplace_add(BADDBMM, baddbmm, lambda sa, sb: (sa[0], sa[1], sb[2])),
        "addbmm_": _inplace_add(ADDBMM, addbmm, lambda sa, sb: (sa[1], sb[2]), resizes=True),
    }.items():
        setattr(Tensor, name, fn)


_bind_methods()
