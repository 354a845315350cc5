"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``).

Halko, Martinsson and Tropp's range finder (arXiv:0909.4061, algorithm 4.4): a Gaussian test
matrix, ``niter`` subspace iterations re-orthonormalised by QR, then the SVD of the small
projected matrix. Compositions of ndgrad ops (``randn``, ``matmul``, ``linalg.qr``,
``linalg.svd``), so gradients, tangents and batching are those ops' rules.

Invariants: the draws are torch's: one ``randn(n, q)`` from the default generator per call, in
the input's dtype (float32 for a non-floating input), so under the same seed the factors equal
torch's. A wide matrix (m < n) is factorised through its conjugate transpose, as in torch.
"""

__all__ = ["svd_lowrank", "pca_lowrank"]


def _nd():
    import ndgrad
    return ndgrad


def _floating(A):
    return A.dtype if (A.dtype.is_floating_point or A.dtype.is_complex) else _nd().float32


def get_approximate_basis(A, q, niter=2, M=None):
    """An orthonormal ``(m, q)`` basis ``Q`` with ``Q Q^H (A - M)`` close to ``A - M``."""
    t = _nd()
    niter = 2 if niter is None else niter
    R = t.randn(A.shape[-1], q, dtype=_floating(A))

    def times(X):  # (A - M) X, with M optional
        return A.matmul(X) if M is None else A.matmul(X) - M.matmul(X)

    def h_times(X):  # (A - M)^H X
        return A.mH.matmul(X) if M is None else A.mH.matmul(X) - M.mH.matmul(X)

    Q = t.linalg.qr(times(R)).Q
    for _ in range(niter):
        Q = t.linalg.qr(h_times(Q)).Q
        Q = t.linalg.qr(times(Q)).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    t = _nd()
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:
        A = A.mH
        M = None if M is None else M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = t.linalg.svd(B, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~ U diag(S) V^H`` of rank ``q`` (default 6)."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of ``A``'s rows: the low-rank SVD of ``A`` minus its column means."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter)
