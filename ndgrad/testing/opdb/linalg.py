"""Op database entries for linear algebra (``ndgrad._ops`` matmul, solvers, decompositions,
norms; ``ndgrad.linalg``).

Samples are tiny, well-conditioned matrices (a random matrix plus n*I, or X X^H + n*I for
Hermitian positive-definite input), with a batch, a broadcast, a non-contiguous (transposed)
operand and the keyword variants once each. Two wrappers follow PyTorch's OpInfos:
- Hermitian-input ops (cholesky, eigh, eigvalsh, pinv(hermitian=True)) read one triangle only,
  so the op is applied to ``A + A^H`` and finite differences see the symmetric function;
- eigen/singular vectors are defined up to a sign (a phase for complex), so entries return
  gauge-invariant quantities (|v|^2 elementwise, U diag(S) Vh) instead of raw vectors.
"""

import math

import numpy as np

import ndgrad

from . import COMPLEX, FLOATING, OpInfo, SampleInput, Skip, register

_FC = FLOATING + COMPLEX


def _torch():
    import torch  # the test oracle: imported only when a test calls this
    return torch


def _rand(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _t(arr, dtype, rg):
    t = ndgrad.tensor(np.asarray(arr), dtype=dtype)
    if rg and (dtype.is_floating_point or dtype.is_complex):
        t.requires_grad_(True)
    return t


def _sq(rng, n, dtype, batch=()):
    """A well-conditioned square matrix (random plus n * identity)."""
    return _rand(rng, batch + (n, n), dtype) + n * np.eye(n)


def _hpd(rng, n, dtype, batch=()):
    x = _rand(rng, batch + (n, n), dtype)
    return x @ np.conj(np.swapaxes(x, -1, -2)) / n + np.eye(n)


def _tri(rng, n, dtype, upper, batch=()):
    a = _sq(rng, n, dtype, batch)
    return np.triu(a) if upper else np.tril(a)


def _make(op, dtype, rg, shapes):
    rng = np.random.default_rng(0)
    return [_t(_rand(rng, s, dtype), dtype, rg) for s in shapes]


# --------------------------------------------------------------------------- products
def _pairs(*shape_pairs, kwargs=None):
    def gen(op, dtype, requires_grad):
        rng = np.random.default_rng(0)
        for k, (sa, sb) in enumerate(shape_pairs):
            a = _t(_rand(rng, sa, dtype), dtype, requires_grad)
            b = _t(_rand(rng, sb, dtype), dtype, requires_grad)
            yield SampleInput(a, args=(b,), kwargs=kwargs or {}, name=f"{sa}x{sb}")
    return gen


def _matmul_samples(op, dtype, requires_grad):
    yield from _pairs(((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)),
                      ((2, 3, 4), (4,)), ((4,), (2, 4, 3)), ((2, 3, 4), (4, 2)),
                      ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
                      ((0, 3), (3, 2)))(op, dtype, requires_grad)
    rng = np.random.default_rng(1)
    a = _t(_rand(rng, (2, 4, 3), dtype), dtype, requires_grad)
    b = _t(_rand(rng, (2, 4), dtype), dtype, requires_grad)
    yield SampleInput(a.transpose(1, 2), args=(b.t(),), name="transposed")


def _addmm_like(c_shape, a_shape, b_shape, c_broadcast):
    def gen(op, dtype, requires_grad):
        rng = np.random.default_rng(0)
        mk = lambda s: _t(_rand(rng, s, dtype), dtype, requires_grad)
        yield SampleInput(mk(c_shape), args=(mk(a_shape), mk(b_shape)), name="plain")
        yield SampleInput(mk(c_broadcast), args=(mk(a_shape), mk(b_shape)),
                          kwargs={"beta": 0.5, "alpha": 2}, name="broadcast-beta-alpha")
        yield SampleInput(mk(c_shape), args=(mk(a_shape), mk(b_shape)),
                          kwargs={"beta": 0}, name="beta0")
    return gen


def _einsum_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(2, 3), args=(mk(3, 4),), kwargs={"equation": "ij,jk->ik"},
                      name="matmul")
    yield SampleInput(mk(3, 3), kwargs={"equation": "ii"}, name="trace")
    yield SampleInput(mk(3, 3), kwargs={"equation": "ii->i"}, name="diagonal")
    yield SampleInput(mk(2, 2, 3), args=(mk(1, 3, 4),), kwargs={"equation": "...ij,...jk"},
                      name="ellipsis-broadcast")
    yield SampleInput(mk(2, 3), args=(mk(4),), kwargs={"equation": "ij,k->jk"},
                      name="summed-out")
    yield SampleInput(mk(2, 3), args=(mk(3, 4), mk(4, 2)),
                      kwargs={"equation": "ij,jk,kl->il"}, name="three")
    yield SampleInput(mk(2, 1), args=(mk(2, 3),), kwargs={"equation": "ij,ij->i"},
                      name="size1-broadcast")


def _einsum(*ops, equation):
    return ndgrad.einsum(equation, *ops)


def _t_einsum(*ops, equation):
    return _torch().einsum(equation, *ops)


def _tensordot_samples(op, dtype, requires_grad):
    yield from _pairs(((3, 4, 2), (4, 3, 5)), kwargs={"dims": ([1, 0], [0, 1])})(
        op, dtype, requires_grad)
    yield from _pairs(((3, 4), (4, 5)), kwargs={"dims": 1})(op, dtype, requires_grad)
    yield from _pairs(((2, 3), (2, 3)), kwargs={"dims": 2})(op, dtype, requires_grad)
    yield from _pairs(((2,), (3,)), kwargs={"dims": 0})(op, dtype, requires_grad)


def _cross_samples(op, dtype, requires_grad):
    yield from _pairs(((2, 3), (2, 3)), ((2, 3), (1, 3)))(op, dtype, requires_grad)
    yield from _pairs(((3, 2), (3, 2)), kwargs={"dim": 0})(op, dtype, requires_grad)


register(
    OpInfo("matmul", sample_inputs=_matmul_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="matmul", ref=np.matmul),
    OpInfo("mm", sample_inputs=_pairs(((2, 3), (3, 4)), ((1, 0), (0, 2))), dtypes=_FC,
           family="linalg", supports_complex_autograd=True, method="mm", ref=np.matmul),
    OpInfo("bmm", sample_inputs=_pairs(((2, 2, 3), (2, 3, 4))), dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="bmm", ref=np.matmul),
    OpInfo("mv", sample_inputs=_pairs(((2, 3), (3,))), dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="mv", ref=np.matmul),
    OpInfo("dot", sample_inputs=_pairs(((3,), (3,))), dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="dot", ref=np.dot),
    OpInfo("vdot", sample_inputs=_pairs(((3,), (3,))), dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="vdot", ref=np.vdot),
    OpInfo("outer", sample_inputs=_pairs(((3,), (2,))), dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="outer", ref=np.outer, aliases=("ger",)),
    OpInfo("inner", sample_inputs=_pairs(((2, 3), (4, 3)), ((3,), (3,))), dtypes=_FC,
           family="linalg", supports_complex_autograd=True, method="inner", ref=np.inner),
    OpInfo("addmm", sample_inputs=_addmm_like((2, 4), (2, 3), (3, 4), (4,)), dtypes=_FC,
           family="linalg", supports_complex_autograd=True, method="addmm"),
    OpInfo("addmv", sample_inputs=_addmm_like((2,), (2, 3), (3,), (1,)), dtypes=_FC,
           family="linalg", supports_complex_autograd=True, method="addmv"),
    OpInfo("baddbmm", sample_inputs=_addmm_like((2, 2, 4), (2, 2, 3), (2, 3, 4), (1, 4)),
           dtypes=_FC, family="linalg", supports_complex_autograd=True, method="baddbmm"),
    OpInfo("addbmm", sample_inputs=_addmm_like((2, 4), (3, 2, 3), (3, 3, 4), (4,)),
           dtypes=_FC, family="linalg", supports_complex_autograd=True, method="addbmm"),
    OpInfo("einsum", op=_einsum, torch_op=_t_einsum, sample_inputs=_einsum_samples,
           dtypes=_FC, family="linalg", supports_complex_autograd=True, check_grad_fn=False,
           notes="one EinsumBackward0 node (torch composes permute/bmm/view); backward is an "
                 "einsum"),
    OpInfo("tensordot", sample_inputs=_tensordot_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
    OpInfo("cross", sample_inputs=_cross_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, method="cross"),
    OpInfo("linalg.cross", sample_inputs=_pairs(((2, 3), (2, 3)), ((2, 3), (1, 3))),
           dtypes=_FC, family="linalg", supports_complex_autograd=True),
)


# --------------------------------------------------------------------------- square solvers
def _square_samples(n=3, batch=(2,)):
    def gen(op, dtype, requires_grad):
        rng = np.random.default_rng(0)
        yield SampleInput(_t(_sq(rng, n, dtype), dtype, requires_grad), name="square")
        yield SampleInput(_t(_sq(rng, n, dtype, batch), dtype, requires_grad), name="batched")
        a = _t(_sq(rng, n, dtype), dtype, requires_grad)
        yield SampleInput(a.mT, name="transposed")
        yield SampleInput(_t(_sq(rng, 1, dtype), dtype, requires_grad), name="1x1")
    return gen


def _solve_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda a: _t(a, dtype, requires_grad)
    yield SampleInput(mk(_sq(rng, 3, dtype)), args=(mk(_rand(rng, (3, 2), dtype)),),
                      name="matrix")
    yield SampleInput(mk(_sq(rng, 3, dtype, (2,))), args=(mk(_rand(rng, (3, 2), dtype)),),
                      name="broadcast")
    yield SampleInput(mk(_sq(rng, 3, dtype)), args=(mk(_rand(rng, (3,), dtype)),),
                      name="vector")
    yield SampleInput(mk(_sq(rng, 3, dtype, (2,))), args=(mk(_rand(rng, (2, 3), dtype)),),
                      name="batched-vector")
    if not dtype.is_complex:  # torch's complex result has the conj bit: the suite's numpy()
        yield SampleInput(mk(_sq(rng, 3, dtype)), args=(mk(_rand(rng, (2, 3), dtype)),),
                          kwargs={"left": False}, name="right")  # (tests/test_linalg covers it)


def _det_samples(op, dtype, requires_grad):
    # No exactly singular sample: torch's first-order gradient there is 0 (not the cofactor
    # matrix finite differences see); tests/test_linalg.py checks that behaviour directly.
    yield from _square_samples()(op, dtype, requires_grad)


def _slogdet_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    yield SampleInput(_t(_sq(rng, 3, dtype), dtype, requires_grad), name="square")
    yield SampleInput(_t(-_sq(rng, 3, dtype, (2,)), dtype, requires_grad), name="batched-neg")


def _logdet_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    yield SampleInput(_t(_hpd(rng, 3, dtype), dtype, requires_grad), name="spd")
    yield SampleInput(_t(_hpd(rng, 3, dtype, (2,)), dtype, requires_grad), name="batched")


def _matrix_power_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    for n in (3, 5, -2, 1, 2, 0):
        a = _sq(rng, 3, dtype) / 3
        yield SampleInput(_t(a, dtype, requires_grad), args=(n,), name=f"n={n}")


def _multi_dot_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    for shapes in (((2, 3), (3, 4)), ((3,), (3, 4), (4, 2)), ((2, 5), (5, 3), (3, 4), (4,))):
        yield SampleInput([_t(_rand(rng, s, dtype), dtype, requires_grad) for s in shapes],
                          name=str(shapes))


register(
    OpInfo("linalg.inv", sample_inputs=_square_samples(), dtypes=_FC, family="linalg",
           supports_complex_autograd=True, aliases=("inverse",)),
    OpInfo("linalg.solve", sample_inputs=_solve_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
    OpInfo("linalg.det", sample_inputs=_det_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, aliases=("det",),
           notes="singular matrices differentiate through the SVD (cofactor matrix), as torch"),
    OpInfo("linalg.slogdet", sample_inputs=_slogdet_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
    OpInfo("logdet", sample_inputs=_logdet_samples, dtypes=FLOATING, family="linalg",
           method="logdet"),
    OpInfo("linalg.matrix_power", sample_inputs=_matrix_power_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True, aliases=("matrix_power",),
           check_grad_fn=False,
           notes="n=0 returns a copy of the identity (torch: CopyBackwards)"),
    OpInfo("linalg.multi_dot", sample_inputs=_multi_dot_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
)


# --------------------------------------------------------------------------- decompositions
def _herm(lib, a):
    return a + a.mH


def _cholesky(a, upper=False):
    return ndgrad.linalg.cholesky(_herm(ndgrad, a), upper=upper)


def _t_cholesky(a, upper=False):
    return _torch().linalg.cholesky(_herm(None, a), upper=upper)


def _hpd_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    # The wrapper symmetrises: A + A^H with A = H / 2 is the HPD matrix H.
    yield SampleInput(_t(_hpd(rng, 3, dtype) / 2, dtype, requires_grad), name="hpd")
    yield SampleInput(_t(_hpd(rng, 3, dtype, (2,)) / 2, dtype, requires_grad), name="batched")
    yield SampleInput(_t(_hpd(rng, 2, dtype) / 2, dtype, requires_grad), kwargs={"upper": True}
                      if op.name == "linalg.cholesky" else {}, name="kw")


def _gauge_eigh(lib, a, uplo="L"):
    w, v = lib.linalg.eigh(_herm(lib, a), UPLO=uplo)
    return w, (v * v.conj()).real


def _eigvalsh(a, UPLO="L"):
    return ndgrad.linalg.eigvalsh(_herm(ndgrad, a), UPLO=UPLO)


def _t_eigvalsh(a, UPLO="L"):
    return _torch().linalg.eigvalsh(_herm(None, a), UPLO=UPLO)


def _qr_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(4, 3), name="tall")
    yield SampleInput(mk(2, 3, 3), name="batched-square")
    yield SampleInput(mk(3, 5), name="wide")
    yield SampleInput(mk(3, 4), args=("complete",), name="complete-wide")
    yield SampleInput(mk(3, 3), args=("complete",), name="complete-square")


def _gauge_svd(lib, a, full_matrices=False):
    u, s, vh = lib.linalg.svd(a, full_matrices=full_matrices)
    return (u * u.conj()).real, s, (vh * vh.conj()).real


def _svd_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(4, 3), name="tall")
    yield SampleInput(mk(2, 3, 5), name="batched-wide")
    yield SampleInput(mk(3, 3), kwargs={"full_matrices": True}, name="full-square")


def _svdvals_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(4, 3), name="tall")
    yield SampleInput(mk(2, 3, 5), name="batched-wide")


def _pinv_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(4, 3), name="tall")
    yield SampleInput(mk(2, 3, 5), name="batched-wide")
    yield SampleInput(mk(3, 3), kwargs={"rtol": 1e-3}, name="rtol")


def _pinv_herm(a):
    return ndgrad.linalg.pinv(_herm(ndgrad, a), hermitian=True)


def _t_pinv_herm(a):
    return _torch().linalg.pinv(_herm(None, a), hermitian=True)


def _lstsq_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(4, 3), args=(mk(4, 2),), name="tall")
    yield SampleInput(mk(2, 3), args=(mk(2, 2),), name="wide")
    yield SampleInput(mk(2, 4, 3), args=(mk(2, 4, 1),), name="batched")


register(
    OpInfo("linalg.cholesky", op=_cholesky, torch_op=_t_cholesky, sample_inputs=_hpd_samples,
           dtypes=_FC, family="linalg", supports_complex_autograd=True,
           notes="applied to A + A^H (only one triangle is read)"),
    OpInfo("linalg.qr", sample_inputs=_qr_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True,
           notes="mode='r' and mode='complete' with m > n are not differentiable (as torch)"),
    OpInfo("linalg.eigh", op=lambda a, UPLO="L": _gauge_eigh(ndgrad, a, UPLO),
           torch_op=lambda a, UPLO="L": _gauge_eigh(_torch(), a, UPLO),
           sample_inputs=_hpd_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True,
           notes="gauge-invariant outputs: eigenvalues and |V|^2 of A + A^H"),
    OpInfo("linalg.eigvalsh", op=_eigvalsh, torch_op=_t_eigvalsh, sample_inputs=_hpd_samples,
           dtypes=_FC, family="linalg", supports_complex_autograd=True),
    OpInfo("linalg.svd", op=lambda a, full_matrices=False: _gauge_svd(ndgrad, a, full_matrices),
           torch_op=lambda a, full_matrices=False: _gauge_svd(_torch(), a, full_matrices),
           sample_inputs=_svd_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, atol=1e-5, rtol=1e-4,
           notes="gauge-invariant outputs: |U|^2, S, |Vh|^2"),
    OpInfo("linalg.svdvals", sample_inputs=_svdvals_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
    OpInfo("linalg.pinv", sample_inputs=_pinv_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.pinv", variant_test_name="hermitian", op=_pinv_herm, torch_op=_t_pinv_herm,
           sample_inputs=_hpd_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.lstsq", sample_inputs=_lstsq_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, output_process_fn_grad=lambda out: out[0],
           atol=1e-5, rtol=1e-4),
)


def _gauge_eig(lib, a):
    w, v = lib.linalg.eig(a)
    return w, (v * v.conj()).real


def _general_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(3, 3), name="3x3")
    yield SampleInput(mk(2, 2, 2), name="batched")


def _matrix_exp_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(3, 3), name="3x3")
    yield SampleInput(_t(_rand(rng, (2, 2, 2), dtype) * 4, dtype, requires_grad),
                      name="batched-scaled")
    yield SampleInput(mk(1, 1), name="1x1")


register(
    OpInfo("linalg.matrix_exp", sample_inputs=_matrix_exp_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, aliases=("matrix_exp",), atol=1e-5, rtol=1e-5),
    OpInfo("linalg.eig", op=lambda a: _gauge_eig(ndgrad, a),
           torch_op=lambda a: _gauge_eig(_torch(), a), sample_inputs=_general_samples,
           dtypes=_FC, family="linalg", supports_complex_autograd=True, atol=1e-5, rtol=1e-4,
           notes="gauge-invariant outputs: eigenvalues and |V|^2"),
    OpInfo("linalg.eigvals", sample_inputs=_general_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, atol=1e-5, rtol=1e-4),
)


def _lu_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(3, 3), name="square")
    yield SampleInput(mk(2, 3, 3), name="batched")
    yield SampleInput(mk(3, 5), name="wide")
    yield SampleInput(mk(5, 3), name="tall")


def _lu_solve(a, b, left=True, adjoint=False):
    return ndgrad.linalg.lu_solve(*ndgrad.linalg.lu_factor(a), b, left=left, adjoint=adjoint)


def _t_lu_solve(a, b, left=True, adjoint=False):
    t = _torch()
    return t.linalg.lu_solve(*t.linalg.lu_factor(a), b, left=left, adjoint=adjoint)


def _lu_solve_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda a: _t(a, dtype, requires_grad)
    for left in (True, False):
        for adjoint in (False, True):
            if dtype.is_complex and (adjoint or not left):
                continue  # torch returns a conj-bit view the suite cannot read (test_linalg)
            b = _rand(rng, (3, 2) if left else (2, 3), dtype)
            yield SampleInput(mk(_sq(rng, 3, dtype)), args=(mk(b),),
                              kwargs={"left": left, "adjoint": adjoint},
                              name=f"left={left},adjoint={adjoint}")


register(
    OpInfo("linalg.lu", sample_inputs=_lu_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, output_process_fn_grad=lambda out: out[1:],
           notes="P is not differentiable (as torch)"),
    OpInfo("linalg.lu_factor", sample_inputs=lambda op, dt, rg: (
        s for s in _lu_samples(op, dt, rg) if s.name != "tall"), dtypes=_FC, family="linalg",
        supports_complex_autograd=True),
    OpInfo("linalg.lu_solve", op=_lu_solve, torch_op=_t_lu_solve,
           sample_inputs=_lu_solve_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, check_grad_fn=False,
           notes="a composite of triangular solves (torch: LinalgLuSolveBackward0)"),
)


def _one_matrix(*shapes):
    def gen(op, dtype, requires_grad):
        rng = np.random.default_rng(0)
        for sh in shapes:
            yield SampleInput(_t(_sq(rng, sh[-1], dtype, tuple(sh[:-2])), dtype, requires_grad),
                              name=str(sh))
    return gen


def _tensorinv_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    a = _rand(rng, (6, 6), dtype) + 6 * np.eye(6)
    yield SampleInput(_t(a.reshape(2, 3, 6), dtype, requires_grad), kwargs={"ind": 2},
                      name="ind=2")
    yield SampleInput(_t(a.reshape(6, 2, 3), dtype, requires_grad), kwargs={"ind": 1},
                      name="ind=1")


def _tensorsolve_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    a = _rand(rng, (6, 6), dtype) + 6 * np.eye(6)
    b = _rand(rng, (2, 3), dtype)
    yield SampleInput(_t(a.reshape(2, 3, 6), dtype, requires_grad),
                      args=(_t(b, dtype, requires_grad),), name="plain")
    yield SampleInput(_t(a.reshape(2, 6, 3), dtype, requires_grad),
                      args=(_t(b, dtype, requires_grad),), kwargs={"dims": (1,)}, name="dims")


def _vander_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    yield SampleInput(_t(_rand(rng, (3,), dtype), dtype, requires_grad), name="square")
    yield SampleInput(_t(_rand(rng, (2, 3), dtype), dtype, requires_grad), kwargs={"N": 4},
                      name="batched-N")


def _vecdot_samples(op, dtype, requires_grad):
    yield from _pairs(((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)))(op, dtype, requires_grad)
    yield from _pairs(((3, 2), (3, 2)), kwargs={"dim": 0})(op, dtype, requires_grad)


def _cholesky_inverse_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    low = np.linalg.cholesky(_hpd(rng, 3, dtype))
    yield SampleInput(_t(low, dtype, requires_grad), name="lower")
    yield SampleInput(_t(np.conj(low.T), dtype, requires_grad), args=(True,), name="upper")


def _cholesky_inverse(l_, upper=False):
    return ndgrad.cholesky_inverse(l_.triu() if upper else l_.tril(), upper)


def _t_cholesky_inverse(l_, upper=False):
    return _torch().cholesky_inverse(l_.triu() if upper else l_.tril(), upper)


def _householder_samples(op, dtype, requires_grad):
    # geqrf-like input: any matrix with m >= n, and tau in the range reflectors use.
    rng = np.random.default_rng(0)
    mk = lambda a: _t(a, dtype, requires_grad)
    yield SampleInput(mk(_rand(rng, (5, 3), dtype)),
                      args=(mk(rng.uniform(0.5, 1.5, 3).astype(dtype.np)),), name="5x3")
    yield SampleInput(mk(_rand(rng, (2, 4, 4), dtype)),
                      args=(mk(rng.uniform(0.5, 1.5, (2, 3)).astype(dtype.np)),),
                      name="batched-k<n")


register(
    OpInfo("linalg.householder_product", sample_inputs=_householder_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True, check_grad_fn=False,
           notes="a composite of ndgrad ops (torch: LinalgHouseholderProductBackward0)"),
    OpInfo("linalg.tensorinv", sample_inputs=_tensorinv_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, check_grad_fn=False,
           notes="the final reshape is a ViewBackward0 (torch: ReshapeAliasBackward0, as "
                 "its inverse is column-major and ndgrad's row-major)"),
    OpInfo("linalg.tensorsolve", sample_inputs=_tensorsolve_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True),
    OpInfo("linalg.vander", sample_inputs=_vander_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
    OpInfo("linalg.vecdot", sample_inputs=_vecdot_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True),
    OpInfo("linalg.cond", sample_inputs=_one_matrix((3, 3), (2, 3, 3)), dtypes=_FC,
           family="linalg", supports_complex_autograd=True, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.matrix_rank", sample_inputs=_one_matrix((3, 3), (2, 3, 3)), dtypes=_FC,
           family="linalg", supports_autograd=False, differentiable=False),
    OpInfo("pinverse", sample_inputs=_one_matrix((3, 3), (2, 3, 3)), dtypes=_FC,
           family="linalg", supports_complex_autograd=True, method="pinverse",
           atol=1e-5, rtol=1e-4),
    OpInfo("cholesky_inverse", op=_cholesky_inverse, torch_op=_t_cholesky_inverse,
           sample_inputs=_cholesky_inverse_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, check_grad_fn=False,
           skips=(Skip("forward_ad", "torch 2.13's forward AD of cholesky_inverse disagrees with "
                       "finite differences; ndgrad's JVP is checked against them in "
                       "tests/test_linalg.py"),
                  Skip("fwgrad_bwgrad", "same torch 2.13 forward-AD discrepancy")),
           notes="a composite of cholesky_solve (torch: CholeskyInverseBackward0)"),
)


# --------------------------------------------------------------------------- triangular
def _tri_solve_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda a: _t(a, dtype, requires_grad)
    yield SampleInput(mk(_tri(rng, 3, dtype, True)), args=(mk(_rand(rng, (3, 2), dtype)),),
                      kwargs={"upper": True}, name="upper")
    yield SampleInput(mk(_tri(rng, 3, dtype, False, (2,))),
                      args=(mk(_rand(rng, (3, 2), dtype)),), kwargs={"upper": False},
                      name="lower-broadcast")
    yield SampleInput(mk(_sq(rng, 3, dtype)), args=(mk(_rand(rng, (2, 3), dtype)),),
                      kwargs={"upper": False, "left": False, "unitriangular": True},
                      name="right-unit")


def _triangular_solve_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda a: _t(a, dtype, requires_grad)
    yield SampleInput(mk(_rand(rng, (3, 2), dtype)), args=(mk(_tri(rng, 3, dtype, True)),),
                      name="upper")
    yield SampleInput(mk(_rand(rng, (3, 2), dtype)), args=(mk(_tri(rng, 3, dtype, False)),),
                      kwargs={"upper": False, "transpose": True}, name="lower-transpose")


def _cholesky_solve(b, l_, upper=False):
    return ndgrad.cholesky_solve(b, l_.triu() if upper else l_.tril(), upper)


def _t_cholesky_solve(b, l_, upper=False):
    return _torch().cholesky_solve(b, l_.triu() if upper else l_.tril(), upper)


def _cholesky_solve_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda a: _t(a, dtype, requires_grad)
    low = np.linalg.cholesky(_hpd(rng, 3, dtype))
    yield SampleInput(mk(_rand(rng, (3, 2), dtype)), args=(mk(low),), name="lower")
    up = np.conj(np.swapaxes(np.linalg.cholesky(_hpd(rng, 3, dtype, (2,))), -1, -2))
    yield SampleInput(mk(_rand(rng, (3, 2), dtype)), args=(mk(up),),
                      kwargs={"upper": True}, name="upper-broadcast")


register(
    OpInfo("linalg.solve_triangular", sample_inputs=_tri_solve_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True),
    OpInfo("triangular_solve", sample_inputs=_triangular_solve_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True, method="triangular_solve",
           skips=(Skip("fwgrad_bwgrad", "torch 2.13's forward-over-backward of the deprecated "
                       "triangular_solve differs from the analytic -A^-H triu(dA)^H A^-H g, "
                       "which ndgrad gives (tests/test_linalg.py checks it)"),)),
    OpInfo("cholesky_solve", op=_cholesky_solve, torch_op=_t_cholesky_solve,
           sample_inputs=_cholesky_solve_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True,
           notes="the factor's other triangle is masked (LAPACK reads one triangle)"),
)


# --------------------------------------------------------------------------- norms
def _vector_norm_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(3, 4), name="2-all")
    yield SampleInput(mk(3, 4), args=(1,), kwargs={"dim": 1}, name="1-dim")
    yield SampleInput(mk(3, 4), args=(math.inf,), kwargs={"dim": (0,), "keepdim": True},
                      name="inf-keepdim")
    yield SampleInput(mk(3, 4), args=(-math.inf,), kwargs={"dim": -1}, name="-inf")
    yield SampleInput(mk(3, 4), args=(3,), kwargs={"dim": -1}, name="3")
    yield SampleInput(mk(3, 4), args=(1.5,), name="1.5")
    yield SampleInput(mk(3, 4), args=(0.5,), kwargs={"dim": (0, 1)}, name="0.5")
    yield SampleInput(mk(3, 4), args=(0,), name="0")
    yield SampleInput(mk(), name="0-d")
    yield SampleInput(mk(0, 2), kwargs={"dim": 0}, name="empty")


def _matrix_norm_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(2, 3, 4), name="fro-batched")
    for ord_ in ("nuc", 2, -2, 1, -1, math.inf, -math.inf):
        yield SampleInput(mk(3, 4), args=(ord_,), name=str(ord_))
    yield SampleInput(mk(2, 3, 4), args=(1,), kwargs={"dim": (0, 2), "keepdim": True},
                      name="dims-keepdim")


def _norm_samples(op, dtype, requires_grad):
    rng = np.random.default_rng(0)
    mk = lambda *s: _t(_rand(rng, s, dtype), dtype, requires_grad)
    yield SampleInput(mk(3, 4), name="default")
    yield SampleInput(mk(3, 4), args=(2,), name="matrix-2")
    yield SampleInput(mk(4), args=(3,), name="vector-3")
    yield SampleInput(mk(3, 4), kwargs={"dim": 1}, name="dim")
    yield SampleInput(mk(2, 3, 4), args=("fro",), kwargs={"dim": (1, 2)}, name="fro-dims")


register(
    OpInfo("linalg.vector_norm", sample_inputs=_vector_norm_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True),
    OpInfo("linalg.matrix_norm", sample_inputs=_matrix_norm_samples, dtypes=_FC,
           family="linalg", supports_complex_autograd=True, atol=1e-5, rtol=1e-4),
    OpInfo("linalg.norm", sample_inputs=_norm_samples, dtypes=_FC, family="linalg",
           supports_complex_autograd=True, atol=1e-5, rtol=1e-4),
)

