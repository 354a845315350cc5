"""The LDL^T (or LDL^H) factorisation of symmetric / Hermitian matrices with Bunch-Kaufman
pivoting, as LAPACK's ``?sytf2`` / ``?hetf2`` (lower triangle) compute it, and the solve
``?sytrs`` / ``?hetrs`` on its result: ``linalg.ldl_factor``, ``linalg.ldl_factor_ex`` and
``linalg.ldl_solve``.

Conventions are LAPACK's, which torch returns unchanged: ``LD`` holds the unit lower factor L
below the diagonal and the block-diagonal D (1x1 and symmetric 2x2 blocks) on the diagonal and
the first subdiagonal of each 2x2 block; the upper triangle is zero. ``pivots`` (int32,
1-based): ``pivots[k] = p > 0`` means rows/columns k and p-1 were interchanged and D[k, k] is
a 1x1 block; ``pivots[k] = pivots[k+1] = -p < 0`` means rows/columns k+1 and p-1 were
interchanged and D[k:k+2, k:k+2] is a 2x2 block. For matrices up to LAPACK's block size (64)
torch's ``?sytrf`` runs exactly this unblocked algorithm; larger ones are blocked there, with
the same pivot decisions up to rounding.

torch defines no derivatives for these (its nodes refuse backward: "derivative for
aten::linalg_ldl_factor_ex is not implemented"); so do the nodes here.
"""

import math

import numpy as np

from .linalg_common import _check_lapack_dtype, _named, _tname
from .registry import as_tensor_arg, primitive

__all__ = []

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0

_LdlFactor = _named("linalg_ldl_factor", ["LD", "pivots"])
_LdlFactorEx = _named("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _cabs1(v):
    """LAPACK's |Re| + |Im| for complex entries (|v| for real ones)."""
    return np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)


def _first_max(v):
    """I?AMAX: the index of the first largest magnitude (NaN-free input)."""
    return int(np.argmax(_cabs1(v)))


def _factor_one(a, hermitian):
    """LAPACK ?sytf2 / ?hetf2 with UPLO = 'L' on one matrix (a copy): (LD, pivots, info)."""
    a = a.copy()
    n = a.shape[0]
    piv = np.zeros(n, np.int32)
    info = 0
    herm = hermitian and np.iscomplexobj(a)
    cj = np.conj if herm else (lambda v: v)
    if herm:
        a[np.diag_indices(n)] = a.diagonal().real
    k = 0
    while k < n:
        kstep = 1
        akk = a[k, k]
        absakk = abs(akk.real) if herm else float(_cabs1(akk))
        if k < n - 1:
            imax = k + 1 + _first_max(a[k + 1:, k])
            colmax = float(_cabs1(a[imax, k]))
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + _first_max(a[imax, k:imax])
                rowmax = float(_cabs1(a[imax, jmax]))
                if imax < n - 1:
                    jmax = imax + 1 + _first_max(a[imax + 1:, imax])
                    rowmax = max(rowmax, float(_cabs1(a[jmax, imax])))
                aimax = abs(a[imax, imax].real) if herm else float(_cabs1(a[imax, imax]))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif aimax >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                # interchange rows and columns kk and kp of the trailing lower triangle
                if kp < n - 1:
                    tmp = a[kp + 1:, kk].copy()
                    a[kp + 1:, kk] = a[kp + 1:, kp]
                    a[kp + 1:, kp] = tmp
                tmp = cj(a[kk + 1:kp, kk].copy())
                a[kk + 1:kp, kk] = cj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = tmp
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    if herm:
                        a[k, k] = a[k, k].real
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    r1 = 1.0 / (a[k, k].real if herm else a[k, k])
                    x = a[k + 1:, k].copy()
                    # ?syr / ?her: the lower triangle of A22 -= r1 x x^T (x x^H)
                    upd = np.tril(np.outer(x, cj(-r1 * x) if herm else -r1 * x))
                    a[k + 1:, k + 1:] += upd
                    if herm:
                        idx = np.arange(k + 1, n)
                        a[idx, idx] = a[idx, idx].real
                    a[k + 1:, k] = x * r1
            elif k < n - 2:
                if herm:
                    d = abs(a[k + 1, k])
                    d11 = a[k + 1, k + 1].real / d
                    d22 = a[k, k].real / d
                    tt = 1.0 / (d11 * d22 - 1.0)
                    d21 = a[k + 1, k] / d
                    d = tt / d
                    wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
                    wkp1 = d * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
                    _lower_update(a, k, np.conj(wk), np.conj(wkp1))
                    idx = np.arange(k + 2, n)
                    a[idx, idx] = a[idx, idx].real
                else:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    t = 1.0 / (d11 * d22 - 1.0)
                    d21 = t / d21
                    wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                    wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                    _lower_update(a, k, wk, wkp1)
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), piv, info


def _lower_update(a, k, wk, wkp1):
    """A22(i, j) = A22(i, j) - A(i, k) wk(j) - A(i, k+1) wkp1(j) on the lower triangle, in
    LAPACK's order of operations."""
    sub = a[k + 2:, k + 2:]
    new = sub - np.outer(a[k + 2:, k], wk) - np.outer(a[k + 2:, k + 1], wkp1)
    low = np.tril(np.ones(sub.shape, bool))
    sub[low] = new[low]


def _factor(a, hermitian):
    batch = a.shape[:-2]
    n = a.shape[-1]
    if a.size == 0:
        return a.copy(), np.zeros(batch + (n,), np.int32), np.zeros(batch, np.int32)
    flat = a.reshape((-1, n, n))
    ld = np.empty_like(flat)
    piv = np.empty(flat.shape[:2], np.int32)
    info = np.empty(flat.shape[0], np.int32)
    for b in range(flat.shape[0]):
        ld[b], piv[b], info[b] = _factor_one(flat[b], hermitian)
    return ld.reshape(a.shape), piv.reshape(batch + (n,)), info.reshape(batch)


LDL_FACTOR = primitive("linalg_ldl_factor_ex", lambda a, p: _factor(a, p), "NotImplemented",
                       n_out=3, diff_outs=(True, False, False))


@LDL_FACTOR.def_vjp
def _(ctx, gs):
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


def _check_square(A, fname):
    A = as_tensor_arg(A)
    if A._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(A)}")
    _check_lapack_dtype(A, fname, kernel="ldl_factor_kernel_cpu")
    return A


def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): the Bunch-Kaufman LDL factorisation; info > 0 marks an exactly
    singular D (its first zero pivot, 1-based)."""
    A = _check_square(A, "torch.linalg.ldl_factor_ex")
    ld, piv, info = LDL_FACTOR.call(A, params=bool(hermitian))
    if check_errors:
        _raise_on_info(info, "torch.linalg.ldl_factor_ex")
    return _LdlFactorEx(ld, piv, info)


def linalg_ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots): the Bunch-Kaufman LDL factorisation of a symmetric (or Hermitian) A."""
    A = _check_square(A, "torch.linalg.ldl_factor_ex")
    ld, piv, info = LDL_FACTOR.call(A, params=bool(hermitian))
    _raise_on_info(info, "torch.linalg.ldl_factor")
    return _LdlFactor(ld, piv)


def _raise_on_info(info, fname):
    bad = info._data.reshape(-1)
    if np.any(bad):
        # torch 2.13 reports a singular D through an internal assert with this text
        raise RuntimeError(f"{fname}: Unknown error code: {int(bad[bad != 0][0])}.")


# ----------------------------------------------------------------------------- solve
def _solve_one(ld, piv, b, hermitian):
    """LAPACK ?sytrs / ?hetrs with UPLO = 'L': X with A X = B from A's factorisation."""
    n = ld.shape[0]
    b = b.copy()
    herm = hermitian and np.iscomplexobj(ld)
    cj = np.conj if herm else (lambda v: v)
    k = 0
    while k < n:                                  # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] = b[k] / (ld[k, k].real if herm else ld[k, k])
            k += 1
        else:
            kp = -piv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(ld[k + 2:, k], b[k])
                b[k + 2:] -= np.outer(ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / cj(akm1k)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / cj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:                                 # L^T X = Y (L^H for Hermitian)
        if piv[k] > 0:
            if k < n - 1:
                b[k] -= cj(ld[k + 1:, k]) @ b[k + 1:]
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= cj(ld[k + 1:, k]) @ b[k + 1:]
                b[k - 1] -= cj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _solve(ld, piv, b, hermitian):
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    n, nrhs = ld.shape[-1], b.shape[-1]
    if n == 0 or nrhs == 0 or 0 in batch:
        return np.zeros(batch + (n, nrhs), np.result_type(ld, b))
    ldb = np.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n))
    pb = np.broadcast_to(piv, batch + (n,)).reshape((-1, n))
    bb = np.broadcast_to(b, batch + (n, nrhs)).reshape((-1, n, nrhs))
    out = np.empty(bb.shape, np.result_type(ld, b))
    for i in range(bb.shape[0]):
        out[i] = _solve_one(ldb[i], pb[i], bb[i].astype(out.dtype), hermitian)
    return out.reshape(batch + (n, nrhs))


LDL_SOLVE = primitive("linalg_ldl_solve", lambda ld, piv, b, p: _solve(ld, piv, b, p),
                      "NotImplemented")


@LDL_SOLVE.def_vjp
def _(ctx, g):
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def linalg_ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve A X = B from ``ldl_factor``'s (LD, pivots)."""
    LD, pivots, B = as_tensor_arg(LD), as_tensor_arg(pivots), as_tensor_arg(B)
    fname = "torch.linalg.ldl_solve"
    if LD._data.ndim < 2:
        raise RuntimeError(f"{fname}: LD should have at least 2 dimensions, but has "
                           f"{LD._data.ndim} dimensions instead")
    if B._data.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B._data.ndim, 1)}, {max(B._data.ndim, 1) - 1}], but got -2)")
    n = LD._data.shape[-1]
    if LD._data.shape[-2] != n:
        raise RuntimeError(f"{fname}: LD must be batches of square matrices, but they are "
                           f"{LD._data.shape[-2]} by {n} matrices")
    if B._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {fname}: each A matrix is {n} by "
                           f"{n} but each b matrix is {B._data.shape[-2]} by "
                           f"{B._data.shape[-1]}")
    if pivots._data.dtype.kind not in "iu":
        raise RuntimeError(f"{fname}: Expected pivots to be integers. Got {_tname(pivots)}")
    if B._data.dtype != LD._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(B)} and A of type {_tname(LD)} instead.")
    _check_lapack_dtype(LD, fname, kernel="ldl_solve_kernel_cpu")
    return LDL_SOLVE.call(LD, pivots, B, params=bool(hermitian))

