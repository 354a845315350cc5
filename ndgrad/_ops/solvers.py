"""Inverses and linear solves: ``linalg.inv``/``inv_ex`` (and ``torch.inverse``),
``linalg.solve``/``solve_ex``, triangular solves (``linalg.solve_triangular`` and the deprecated
``torch.triangular_solve``), ``cholesky_solve``/``cholesky_inverse``, the pseudo-inverse
(``linalg.pinv``, ``pinverse``), least squares (``linalg.lstsq``) and ``tensorinv`` /
``tensorsolve``; also the pivoted LU kernel (an emulation of LAPACK's getrf, which NumPy lacks)
that reports singular pivots here and factorises for ``linalg.lu`` in ``decompositions.py``.

Invariants: singular input raises ``LinAlgError`` naming the zero pivot (and batch element) as
torch does, except in the ``*_ex`` variants, which return LAPACK's inf/nan results and an
``info`` tensor instead; every VJP and JVP is written in ndgrad ops (the solvers themselves
and ``matmul``), so double backward and forward-over-reverse work.
"""

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .linalg_common import (
    LinAlgError,
    _batch_prefix,
    _broadcast_shapes,
    _check_lapack_dtype,
    _check_matrix,
    _mH,
    _named,
    _out,
    _pad,
    _reduce_meta,
    _tname,
    _tril,
    _triu,
)
from .matmul import matmul
from .pointwise import _conj
from .registry import add_tangents, as_tensor_arg, primitive, reads_values, sizes_decide, wrap

__all__ = ["cholesky_inverse", "cholesky_solve", "inverse", "pinverse", "triangular_solve"]

_InvEx = _named("linalg_inv_ex", ["inverse", "info"])
_SolveEx = _named("linalg_solve_ex", ["result", "info"])
_Lstsq = _named("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_TriSolve = _named("triangular_solve", ["solution", "cloned_coefficient"])


# ---------------------------------------------------------------------------- inv
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


@INV.def_jvp
def _(ctx, t):
    x = ctx.outputs[0]
    return -matmul(x, matmul(t, x))


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


@SOLVE.def_jvp
def _(ctx, ta, tb):
    a = ctx.inputs[0]
    x = ctx.outputs[0]
    left, vector = ctx.params[:2]
    # X_t solves the system with right-hand side B_t - A_t X (X A_t for left=False).
    prod = None
    if ta is not None:
        if vector:
            prod = matmul(ta, x.unsqueeze(-1)).squeeze(-1)
        else:
            prod = matmul(ta, x) if left else matmul(x, ta)
        prod = -prod
    return SOLVE.call(a, add_tangents(tb, prod), params=(left, vector))


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
        ga = add_tangents(ga, gm)
    return (gb if n[0] else None), ga


@TRI_LEGACY.def_jvp
def _(ctx, tb, ta):
    # torch 2.13's formula: X_t = op(tri(A))^-1 (B_t - A_t X), A_t used untransposed and
    # unprojected (it differs from the VJP's transpose off the triangle).
    a = ctx.inputs[1]
    x = ctx.outputs[0]
    rhs = add_tangents(tb, -matmul(ta, x) if ta is not None else None)
    sol = TRI_LEGACY.call(rhs, a, params=ctx.params)[0] if rhs is not None else None
    return sol, ta


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
    sizes_decide()  # the formula by m <= n
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
        sizes_decide()  # rtol = eps * max(m, n)
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
            ga = add_tangents(ga, matmul(w, _mH(xm)))
        if n[1]:
            gb = add_tangents(gb, -w)
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
    sizes_decide()
    reads_values("lstsq's rank (whether residuals exist)")
    want_res = bool(m > n and drv != "gelsy" and np.all(rank == n))
    x, residuals = LSTSQ.call(A, B, params=(rcond, vector, want_res))
    _reduce_meta((x, residuals), A, B)
    rank_t = wrap(np.asarray(rank, np.int64)) if drv != "gels" else \
        Tensor(np.zeros((0,), np.int64))
    sv = Tensor(s) if drv in ("gelsd", "gelss") else Tensor(empty_real)
    return _Lstsq(x, residuals, rank_t, sv)


# ---------------------------------------------------------------------------- LU kernel
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
    # LAPACK's pivot is the first largest entry by |re| + |im| (i?amax's cabs1), not |z|
    size = (lambda c: np.abs(c.real) + np.abs(c.imag)) if work.dtype.kind == "c" else np.abs
    for j in range(k):
        p = j + np.argmax(size(work[:, j:, j]), axis=1)
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


# ------------------------------------------------------------------- tensorinv / tensorsolve
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


def _bind_methods():
    # Set directly, as the other linalg modules do (see matmul._bind_methods).
    for name, fn in {
        "inverse": lambda self: linalg_inv(self),
        "cholesky_solve": lambda self, input2, upper=False: cholesky_solve(self, input2, upper),
        "cholesky_inverse": lambda self, upper=False: cholesky_inverse(self, upper),
        "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False:
            triangular_solve(self, A, upper, transpose, unitriangular),
        "pinverse": lambda self, rcond=1e-15: pinverse(self, rcond),
    }.items():
        setattr(Tensor, name, fn)


_bind_methods()
