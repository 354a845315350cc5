"""Matrix factorisations and what is computed from them: determinants (``linalg.det``,
``slogdet``, ``logdet``), Cholesky (``linalg.cholesky``/``cholesky_ex`` and the deprecated
``torch.cholesky``), QR, the Hermitian and general eigendecompositions (``eigh``,
``eigvalsh``, ``eig``, ``eigvals``), the SVD (``linalg.svd``, ``svdvals``, ``torch.svd``),
the matrix exponential, LU (``linalg.lu``, ``lu_factor``/``lu_factor_ex``, ``lu_unpack``
and ``lu_solve`` on the packed factors) and ``householder_product``.

Invariants: every backward rule is torch's (FunctionsManual.cpp) written in ndgrad ops, so
double backward works; complex gradients use the conjugate transpose ``mH`` where the real
formula has a transpose, and the gauge checks raise torch's error when a loss depends on the
arbitrary phase of complex eigen- or singular vectors. Forward kernels are NumPy's LAPACK
wrappers (LU is emulated: NumPy has no getrf); the values-only shortcuts (``eigvalsh``,
``svdvals``, ``eigvals`` without grad) are skipped while a dual level, the profiler or anomaly
mode observes the primitives.
"""

import numpy as np

from .._tensor import Tensor
from .comparison import where
from .linalg_common import (
    LinAlgError,
    _batch_prefix,
    _check_lapack_dtype,
    _check_matrix,
    _diag,
    _diag_embed,
    _mH,
    _named,
    _out,
    _pad,
    _tname,
    _tril,
    _triu,
)
from .matmul import matmul
from .pointwise import _conj
from .pointwise import log as _log
from .registry import (add_tangents, as_tensor_arg, no_forward_ad, primitive, reads_values,
                       sizes_decide, wrap)
from .solvers import _lu_np, linalg_inv, linalg_solve, linalg_solve_triangular
from .. import _state
from .joins import cat

__all__ = ["cholesky", "det", "logdet", "lu_unpack", "matrix_exp", "qr", "slogdet", "svd"]


_CholEx = _named("linalg_cholesky_ex", ["L", "info"])
_Slogdet = _named("linalg_slogdet", ["sign", "logabsdet"])
_SlogdetT = _named("slogdet", ["sign", "logabsdet"])
_QR = _named("linalg_qr", ["Q", "R"])
_QRT = _named("qr", ["Q", "R"])
_Eigh = _named("linalg_eigh", ["eigenvalues", "eigenvectors"])
_Eig = _named("linalg_eig", ["eigenvalues", "eigenvectors"])
_SVD = _named("linalg_svd", ["U", "S", "Vh"])
_SVDT = _named("svd", ["U", "S", "V"])


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
        reads_values("det's backward (whether the determinant is zero)")
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
        gg = add_tangents(gg, (g_sign * _conj(sign)).imag * 1j)
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


def _chol_jvp(ctx, ta):
    """torch's tangent: L Phi(L^-1 dA L^-H), Phi = the lower triangle with half the diagonal.
    dA is used whole (not its lower triangle, which alone the factorisation reads): the
    tangent agrees with finite differences for Hermitian dA, as torch's."""
    upper = ctx.params[0] if type(ctx.params) is tuple else ctx.params
    res = ctx.outputs[0]
    low = _mH(res) if upper else res
    x = linalg_solve_triangular(low, ta, upper=False, left=True)
    x = linalg_solve_triangular(_mH(low), x, upper=True, left=False)
    x = _tril(x) - 0.5 * _diag_embed(_diag(x))
    dl = matmul(low, x)
    return _mH(dl) if upper else dl


CHOLESKY.def_jvp_parts(_chol_jvp)
CHOLESKY_LEGACY.def_jvp(no_forward_ad("cholesky"))  # torch's deprecated cholesky has none


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
    if n and A._data.size and not _is_pd(A._data):
        flat = A._data.reshape(-1, n, n)
        info = np.array([_potf2_partial(m)[1] for m in flat], np.int32).reshape(
            A._data.shape[:-2])
    else:  # positive definite, or empty (no matrix to factor)
        info = np.zeros(A._data.shape[:-2], np.int32)
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
        m_ = add_tangents(m_, -matmul(_mH(gq), q))
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
        gq2 = add_tangents(gq2, matmul(y, _mH(gv)))
    gx = _qr_square_backward(gq2, gu, q, u)
    gy = matmul(q, gv) if gv is not None else gx.new_zeros(*y._data.shape)
    return (cat([gx, gy], -1),)


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
        reads_values("eigh's backward phase check")
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


@EIGH.def_jvp_parts
def _(ctx, ta):
    """torch's tangents: with dP = V^H dA V, d lambda = diag dP (real part) and
    dV = V (dP / (lambda_j - lambda_i)) with a zero diagonal. dA is used whole (not the UPLO
    triangle the kernel reads): they agree with finite differences for Hermitian dA."""
    lam, v = ctx.outputs
    dp = matmul(_mH(v), matmul(ta, v))
    dlam = _diag(dp)
    if dlam._data.dtype.kind == "c":
        dlam = dlam.real
    n = lam._data.shape[-1]
    eye = Tensor(np.eye(n, dtype=lam._data.dtype))
    e = lam.unsqueeze(-2) - lam.unsqueeze(-1) + eye
    return dlam, matmul(v, (dp / e) * (1 - eye))


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
    return _state.tls.grad_enabled


def _special():
    """A dual level (forward AD), the profiler or anomaly mode is active: they observe the
    primitives, so the values-only shortcuts must not be taken."""
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
    sizes_decide()  # products grouped by m >= n
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
        reads_values("svd's backward phase check")
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
        reads_values("eig's backward phase check")
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
def _lu_backward(gl, gu, p, low, up):
    """torch's linalg_lu_backward: gA for A = P L U (square, wide and tall cases)."""
    m, n = low._data.shape[-2], up._data.shape[-1]
    k = min(m, n)
    if m == n:
        ga = _tril(matmul(_mH(low), gl), -1) if gl is not None else None
        if gu is not None:
            ga = add_tangents(ga, _triu(matmul(gu, _mH(up))))
        ga = linalg_solve_triangular(_mH(up), ga, upper=False, left=False)
        ga = linalg_solve_triangular(_mH(low), ga, upper=True, left=True, unitriangular=True)
        return matmul(p, ga)
    if m < n:
        u1 = up[..., :, :k]
        ga = matmul(_mH(low), gl) if gl is not None else None
        if gu is not None:
            ga = add_tangents(ga, -matmul(_triu(gu), _mH(up)))
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
        ga = add_tangents(ga, -matmul(_mH(low), _tril(gl, -1)))
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
    if check_errors:
        reads_values("lu_factor_ex(check_errors=True)")
    if check_errors and np.any(info._data):
        raise LinAlgError(f"torch.linalg.lu_factor_ex: U[{int(info._data.max())},"
                          f"{int(info._data.max())}] is zero")
    return _LuFactorEx(packed, piv, info)


def linalg_lu_factor(A, *, pivot=True, out=None):
    """The packed LU factorisation (LU, pivots) that ``lu_solve`` consumes."""
    A = _check_lu_input(A, "torch.linalg.lu_factor")
    packed, piv, info = LU_FACTOR.call(A)[:3]
    reads_values("lu_factor's singularity check")
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


# ---------------------------------------------------------------------------- householder_product
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


def _bind_methods():
    # Set directly, as the other linalg modules do (see matmul._bind_methods).
    for name, fn in {
        "det": lambda self: linalg_det(self),
        "logdet": lambda self: logdet(self),
        "slogdet": lambda self: slogdet(self),
        "cholesky": lambda self, upper=False: cholesky(self, upper),
        "qr": lambda self, some=True: qr(self, some),
        "svd": lambda self, some=True, compute_uv=True: svd(self, some, compute_uv),
        "matrix_exp": lambda self: linalg_matrix_exp(self),
    }.items():
        setattr(Tensor, name, fn)


_bind_methods()
