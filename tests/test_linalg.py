"""Linear algebra vs torch 2.13: values, gradients (random grad_outputs), grad_fn names,
double backward on every differentiable case (float64), torch's error types and messages."""

import math
import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")
from _helpers import random_arrays

warnings.filterwarnings("ignore", category=UserWarning)


def _np(t):
    return t.resolve_conj().numpy(force=True) if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


def _leaf(lib, a, rg):
    t = lib.tensor(a)
    if rg and a.dtype.kind in "fc":
        t.requires_grad_(True)
    return t


def compare(fn, arrays, *, seed=0, atol=1e-7, rtol=1e-6, check_name=True, gradgrad=True):
    """Run fn(lib, *tensors) in torch and ndgrad; compare outputs, grad_fn names, gradients for
    random cotangents and (gradgrad) the gradients of those gradients."""
    rng = np.random.default_rng(seed)
    res = {}
    for lib in (torch, ndgrad):
        ins = [_leaf(lib, a, True) for a in arrays]
        out = fn(lib, *ins)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        res[lib.__name__] = (ins, outs)
    (ti, to), (ni, no) = res["torch"], res["ndgrad"]
    assert len(to) == len(no)
    for a, b in zip(to, no):
        assert str(a.dtype) == str(b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(b), _np(a), atol=atol, rtol=rtol)
    idx = [i for i, o in enumerate(to) if o.requires_grad]
    assert [i for i, o in enumerate(no) if o.requires_grad] == idx
    if not idx:
        return
    if check_name:
        for i in idx:
            assert type(no[i].grad_fn).__name__ == to[i].grad_fn.name()
    gos = []
    for i in idx:
        g = rng.standard_normal(to[i].shape)
        if to[i].is_complex():
            g = g + 1j * rng.standard_normal(to[i].shape)
        gos.append(g.astype(_np(to[i]).dtype))
    tg = torch.autograd.grad([to[i] for i in idx], ti, [torch.tensor(g) for g in gos],
                             allow_unused=True, create_graph=gradgrad)
    ng = ndgrad.autograd.grad([no[i] for i in idx], ni, [ndgrad.tensor(g) for g in gos],
                              allow_unused=True, create_graph=gradgrad)
    for a, b in zip(tg, ng):
        if a is None:
            assert b is None or np.allclose(_np(b), 0)
            continue
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(_np(b), _np(a), atol=atol * 10, rtol=rtol * 10)
    if not gradgrad:
        return
    pairs = [(a, b) for a, b in zip(tg, ng) if a is not None and a.requires_grad]
    if not pairs:
        return
    hs = []
    for a, _ in pairs:
        h = rng.standard_normal(a.shape)
        if a.is_complex():
            h = h + 1j * rng.standard_normal(a.shape)
        hs.append(h.astype(_np(a).dtype))
    tgg = torch.autograd.grad([a for a, _ in pairs], ti, [torch.tensor(h) for h in hs],
                              allow_unused=True)
    ngg = ndgrad.autograd.grad([b for _, b in pairs], ni, [ndgrad.tensor(h) for h in hs],
                               allow_unused=True)
    for a, b in zip(tgg, ngg):
        if a is None:
            assert b is None or np.allclose(_np(b), 0)
            continue
        np.testing.assert_allclose(_np(b), _np(a), atol=atol * 100, rtol=rtol * 100)


R, C = random_arrays(1)


def spd(n, b=()):
    a = R(*b, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def hpd(n):
    a = C(n, n)
    return a @ a.conj().T + n * np.eye(n)


def _abs_vectors(outs, keep):
    """Sign/phase-invariant view of decomposition outputs (torch and NumPy's LAPACK may pick
    different signs for eigen/singular vectors): |.| of every output not in `keep`."""
    return [o if i in keep else o.abs() for i, o in enumerate(outs)]


def _usv(u, s, vh):
    return (u * s.unsqueeze(-2)) @ vh


CASES = {
    "mm": (lambda L, a, b: L.mm(a, b), [R(2, 3), R(3, 4)]),
    "mm_complex": (lambda L, a, b: L.mm(a, b), [C(2, 3), C(3, 4)]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [R(2, 2, 3), R(2, 3, 4)]),
    "mv": (lambda L, a, b: L.mv(a, b), [R(2, 3), R(3)]),
    "dot": (lambda L, a, b: L.dot(a, b), [R(3), R(3)]),
    "vdot_complex": (lambda L, a, b: L.vdot(a, b), [C(3), C(3)]),
    "outer": (lambda L, a, b: L.outer(a, b), [R(3), R(2)]),
    "inner": (lambda L, a, b: L.inner(a, b), [R(2, 3), R(4, 3)]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), [R(4), R(3, 2), R(2, 4)]),
    "addmv": (lambda L, c, a, b: L.addmv(c, a, b, beta=0.5, alpha=2), [R(3), R(3, 2), R(2)]),
    "baddbmm": (lambda L, c, a, b: L.baddbmm(c, a, b, beta=0.5, alpha=2),
                [R(1, 2, 4), R(3, 2, 2), R(3, 2, 4)]),
    "addbmm": (lambda L, c, a, b: L.addbmm(c, a, b, alpha=2), [R(2, 4), R(3, 2, 2), R(3, 2, 4)]),
    "matmul_2x3": (lambda L, a, b: L.matmul(a, b), [R(3, 4), R(2, 4, 5)]),
    "matmul_1x3": (lambda L, a, b: L.matmul(a, b), [R(4), R(2, 4, 5)]),
    "matmul_3x1": (lambda L, a, b: L.matmul(a, b), [R(2, 5, 4), R(4)]),
    "matmul_3x2": (lambda L, a, b: a @ b, [R(2, 5, 4), R(4, 3)]),
    "matmul_4x3": (lambda L, a, b: L.matmul(a, b), [R(2, 1, 5, 4), R(3, 4, 2)]),
    "matmul_3x3": (lambda L, a, b: L.matmul(a, b), [R(3, 5, 4), R(3, 4, 2)]),
    "tensordot": (lambda L, a, b: L.tensordot(a, b, dims=([1, 0], [0, 1])),
                  [R(3, 4, 2), R(4, 3, 5)]),
    "tensordot_int": (lambda L, a, b: L.tensordot(a, b, dims=1), [R(3, 4), R(4, 5)]),
    "linalg_cross": (lambda L, a, b: L.linalg.cross(a, b), [R(2, 3), R(1, 3)]),
    "cross_complex": (lambda L, a, b: L.cross(a, b, dim=0), [C(3, 2), C(3, 2)]),
    "inv": (lambda L, a: L.linalg.inv(a), [R(2, 3, 3)]),
    "inv_complex": (lambda L, a: L.linalg.inv(a), [C(3, 3)]),
    "inverse": (lambda L, a: L.inverse(a), [R(3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [R(2, 3, 3), R(3, 2)]),
    "solve_vector": (lambda L, a, b: L.linalg.solve(a, b), [R(3, 3), R(3)]),
    "solve_batched_vector": (lambda L, a, b: L.linalg.solve(a, b), [R(2, 3, 3), R(2, 3)]),
    "solve_right": (lambda L, a, b: L.linalg.solve(a, b, left=False), [R(3, 3), R(2, 3)]),
    "solve_complex": (lambda L, a, b: L.linalg.solve(a, b), [C(3, 3), C(3, 2)]),
    "solve_complex_right": (lambda L, a, b: L.linalg.solve(a, b, left=False), [C(3, 3), C(2, 3)]),
    "det": (lambda L, a: L.linalg.det(a), [R(2, 3, 3)]),
    "det_complex": (lambda L, a: L.det(a), [C(3, 3)]),
    "det_singular": (lambda L, a: L.linalg.det(a),
                     [np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a), [R(2, 3, 3)]),
    "slogdet_complex": (lambda L, a: L.linalg.slogdet(a), [C(3, 3)]),
    "logdet": (lambda L, a: L.logdet(a), [spd(3)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(a), [spd(3, (2,))]),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(a, upper=True), [spd(3)]),
    "cholesky_complex": (lambda L, a: L.linalg.cholesky(a), [hpd(3)]),
    "cholesky_legacy": (lambda L, a: L.cholesky(a), [spd(3)]),
    "qr_tall": (lambda L, a: L.linalg.qr(a), [R(4, 3)]),
    "qr_square_batched": (lambda L, a: L.linalg.qr(a), [R(2, 3, 3)]),
    "qr_wide": (lambda L, a: L.linalg.qr(a), [R(3, 5)]),
    "qr_complex_tall": (lambda L, a: L.linalg.qr(a), [C(4, 3)]),
    "qr_complex_wide": (lambda L, a: L.linalg.qr(a), [C(3, 4)]),
    "qr_complete_wide": (lambda L, a: L.linalg.qr(a, mode="complete"), [R(3, 4)]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), [spd(3)]),
    "eigh": (lambda L, a: _abs_vectors(L.linalg.eigh(a), (0,)), [spd(3, (2,))]),
    "eigh_complex": (lambda L, a: _abs_vectors(L.linalg.eigh(a), (0,)), [hpd(3)]),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), [R(4, 3)]),
    "svd_tall": (lambda L, a: _abs_vectors(L.linalg.svd(a, full_matrices=False), (1,)),
                 [R(4, 3)]),
    "svd_wide_batched": (lambda L, a: _abs_vectors(L.linalg.svd(a, full_matrices=False), (1,)),
                         [R(2, 3, 5)]),
    "svd_full_square": (lambda L, a: _abs_vectors(L.linalg.svd(a), (1,)), [R(3, 3)]),
    "svd_complex": (lambda L, a: _abs_vectors(L.linalg.svd(a, full_matrices=False), (1,)),
                    [C(4, 3)]),
    "svd_reconstruct": (lambda L, a: _usv(*L.linalg.svd(a, full_matrices=False)), [C(3, 4)]),
    "svd_legacy": (lambda L, a: _abs_vectors(L.svd(a), (1,)), [R(4, 3)]),
    "pinv_tall": (lambda L, a: L.linalg.pinv(a), [R(4, 3)]),
    "pinv_wide_batched": (lambda L, a: L.linalg.pinv(a), [R(2, 3, 5)]),
    "pinv_complex": (lambda L, a: L.linalg.pinv(a), [C(3, 4)]),
    "pinv_hermitian": (lambda L, a: L.linalg.pinv(a, hermitian=True), [spd(3)]),
    "pinverse": (lambda L, a: L.pinverse(a), [R(3, 2)]),
    "lstsq_tall": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [R(4, 3), R(4, 2)]),
    "lstsq_wide": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [R(2, 3), R(2, 2)]),
    "matrix_power_3": (lambda L, a: L.linalg.matrix_power(a, 3), [R(3, 3)]),
    "matrix_power_5": (lambda L, a: L.matrix_power(a, 5), [R(2, 3, 3)]),
    "matrix_power_neg": (lambda L, a: L.linalg.matrix_power(a, -2), [R(3, 3)]),
    "multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]), [R(3), R(3, 4), R(4, 2)]),
    "multi_dot_4": (lambda L, a, b, c, d: L.linalg.multi_dot([a, b, c, d]),
                    [R(2, 5), R(5, 3), R(3, 4), R(4)]),
    "vector_norm": (lambda L, a: L.linalg.vector_norm(a), [R(3, 4)]),
    "vector_norm_1": (lambda L, a: L.linalg.vector_norm(a, 1, dim=1), [R(3, 4)]),
    "vector_norm_inf": (lambda L, a: L.linalg.vector_norm(a, math.inf, dim=(0,), keepdim=True),
                        [R(3, 4)]),
    "vector_norm_3": (lambda L, a: L.linalg.vector_norm(a, 3, dim=-1), [R(3, 4)]),
    "vector_norm_half": (lambda L, a: L.linalg.vector_norm(a, 0.5, dim=-1), [R(3, 4)]),
    "vector_norm_1_5": (lambda L, a: L.linalg.vector_norm(a, 1.5), [R(3, 4)]),
    "vector_norm_complex": (lambda L, a: L.linalg.vector_norm(a, 2, dim=0), [C(3, 4)]),
    "vector_norm_0": (lambda L, a: L.linalg.vector_norm(a, 0), [R(3, 4)]),
    "matrix_norm_fro": (lambda L, a: L.linalg.matrix_norm(a), [R(2, 3, 4)]),
    "matrix_norm_nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), [R(2, 3, 4)]),
    "matrix_norm_2": (lambda L, a: L.linalg.matrix_norm(a, 2), [R(3, 4)]),
    "matrix_norm_1": (lambda L, a: L.linalg.matrix_norm(a, 1), [R(3, 4)]),
    "matrix_norm_inf": (lambda L, a: L.linalg.matrix_norm(a, math.inf, keepdim=True),
                        [R(2, 3, 4)]),
    "matrix_norm_m1_dims": (lambda L, a: L.linalg.matrix_norm(a, -1, dim=(0, 2)), [R(2, 3, 4)]),
    "norm": (lambda L, a: L.linalg.norm(a), [R(3, 4)]),
    "norm_ord2": (lambda L, a: L.linalg.norm(a, 2), [R(3, 4)]),
    "norm_dim": (lambda L, a: L.linalg.norm(a, dim=1), [R(3, 4)]),
    "cholesky_solve": (lambda L, b, l_: L.cholesky_solve(b, l_),
                       [R(3, 2), np.linalg.cholesky(spd(3))]),
    "cholesky_solve_upper": (lambda L, b, l_: L.cholesky_solve(b, l_, upper=True),
                             [R(3, 2), np.linalg.cholesky(spd(3)).T]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
                         [R(3, 3) + 3 * np.eye(3), R(3, 2)]),
    "solve_triangular_right_unit": (
        lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False,
                                                  unitriangular=True), [R(3, 3), R(2, 3)]),
    "triangular_solve": (lambda L, b, a: L.triangular_solve(b, a),
                         [R(3, 2), R(3, 3) + 3 * np.eye(3)]),
    "triangular_solve_transpose": (
        lambda L, b, a: L.triangular_solve(b, a, upper=False, transpose=True),
        [R(3, 2), R(3, 3) + 3 * np.eye(3)]),
    "cond": (lambda L, a: L.linalg.cond(a), [R(3, 3)]),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), [C(2, 3), C(2, 3)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name):
    fn, arrays = CASES[name]
    compare(fn, arrays)


# einsum is one primitive here (EinsumBackward0) where torch composes permutes and bmm, so
# grad_fn names are not compared; values, gradients and double backward are.
EINSUM = {
    "matmul": ("ij,jk->ik", [R(2, 3), R(3, 4)]),
    "trace": ("ii", [R(3, 3)]),
    "diagonal": ("ii->i", [R(3, 3)]),
    "ellipsis_broadcast": ("...ij,...jk", [R(2, 2, 3), R(1, 3, 4)]),
    "summed_out": ("ij,k->jk", [R(2, 3), R(4)]),
    "three_operands": ("ij,jk,kl->il", [R(2, 3), R(3, 4), R(4, 2)]),
    "complex": ("ij,jk->ik", [C(2, 3), C(3, 4)]),
    "size1_broadcast": ("ij,ij->i", [R(2, 1), R(2, 3)]),
    "implicit_outer": ("i,j", [R(2), R(3)]),
    "batch_diag_mix": ("bii,bj->bij", [R(2, 3, 3), R(2, 4)]),
    "diag_then_sum": ("iij->j", [R(3, 3, 2)]),
    "uppercase_and_spaces": ("a B , B c -> a c", [R(2, 3), R(3, 2)]),
    "mixed_chain": ("bn,anm,bm->ba", [R(2, 3), R(4, 3, 5), R(2, 5)]),
    "ellipsis_broadcast_sum": ("i...,i...->...", [R(2, 3), R(2, 1)]),
    "empty_contraction": ("ij,jk", [R(2, 0), R(0, 3)]),
}


@pytest.mark.parametrize("name", list(EINSUM))
def test_einsum(name):
    eq, arrays = EINSUM[name]
    compare(lambda L, *ts: L.einsum(eq, *ts), arrays, check_name=False)


def test_einsum_sublist_form():
    a, b = R(2, 3), R(3, 4)
    compare(lambda L, x, y: L.einsum(x, [0, 1], y, [1, 2], [0, 2]), [a, b], check_name=False)
    compare(lambda L, x, y: L.einsum(x, [Ellipsis, 30], y, [30, 2]), [a, b], check_name=False)
    compare(lambda L, x: L.einsum(x, [0, 1]), [a], check_name=False)


def test_einsum_list_operands():
    a, b = R(2, 3), R(3)
    got = ndgrad.einsum("ij,j->i", [ndgrad.tensor(a), ndgrad.tensor(b)])
    np.testing.assert_allclose(got.numpy(), a @ b)


def test_float32_values_and_dtypes():
    a = R(3, 3).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    for f in (lambda L, x: L.linalg.inv(x), lambda L, x: L.linalg.det(x),
              lambda L, x: L.linalg.svdvals(x), lambda L, x: L.linalg.matrix_norm(x, "nuc")):
        compare(f, [a], atol=1e-5, rtol=1e-4, gradgrad=False)


ERRORS = {
    "inv_singular": lambda L: L.linalg.inv(L.tensor([[1., 2.], [2., 4.]])),
    "inv_zero": lambda L: L.linalg.inv(L.zeros(3, 3)),
    "inv_batch_singular": lambda L: L.linalg.inv(
        L.stack([L.eye(2), L.tensor([[1., 2.], [2., 4.]])])),
    "inv_nonsquare": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv_1d": lambda L: L.linalg.inv(L.ones(3)),
    "inv_int": lambda L: L.linalg.inv(L.eye(2, dtype=L.long)),
    "inverse_singular": lambda L: L.inverse(L.tensor([[1., 2.], [2., 4.]])),
    "solve_singular": lambda L: L.linalg.solve(L.tensor([[1., 2.], [2., 4.]]), L.ones(2, 1)),
    "solve_shape": lambda L: L.linalg.solve(L.eye(2), L.ones(3, 1)),
    "solve_dtype": lambda L: L.linalg.solve(L.eye(2), L.ones(2, 1, dtype=L.float64)),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(L.tensor([[1., 2.], [2., 1.]])),
    "cholesky_batch": lambda L: L.linalg.cholesky(
        L.stack([L.eye(2), L.tensor([[1., 2.], [2., 1.]])])),
    "cholesky_nonsquare": lambda L: L.linalg.cholesky(L.ones(2, 3)),
    "det_nonsquare": lambda L: L.linalg.det(L.ones(2, 3)),
    "det_1d": lambda L: L.linalg.det(L.ones(3)),
    "det_int": lambda L: L.linalg.det(L.eye(2, dtype=L.long)),
    "eigh_nonsquare": lambda L: L.linalg.eigh(L.ones(2, 3)),
    "svd_1d": lambda L: L.linalg.svd(L.ones(3)),
    "qr_mode": lambda L: L.linalg.qr(L.ones(3, 3), mode="bad"),
    "matrix_power_nonsquare": lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    "matrix_power_singular": lambda L: L.linalg.matrix_power(L.tensor([[1., 2.], [2., 4.]]), -1),
    "matrix_power_int_negative": lambda L: L.linalg.matrix_power(L.eye(2, dtype=L.long), -1),
    "multi_dot_one": lambda L: L.linalg.multi_dot([L.ones(2, 2)]),
    "multi_dot_3d": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, 2)]),
    "multi_dot_shapes": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 2)]),
    "cross_size": lambda L: L.linalg.cross(L.ones(2, 2), L.ones(2, 2)),
    "cross_broadcast": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(4, 3)),
    "einsum_sizes": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(2, 3)),
    "einsum_operands": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)),
    "einsum_ndim": lambda L: L.einsum("ijk->ik", L.ones(2, 3)),
    "tensordot_sizes": lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=1),
    "vector_norm_int": lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.long)),
    "vector_norm_ord_str": lambda L: L.linalg.vector_norm(L.ones(3), ord="fro"),
    "vector_norm_empty_neg": lambda L: L.linalg.vector_norm(L.ones(0), ord=-1),
    "vector_norm_empty_inf": lambda L: L.linalg.vector_norm(L.ones(0), ord=math.inf),
    "matrix_norm_1d": lambda L: L.linalg.matrix_norm(L.ones(3)),
    "matrix_norm_ord": lambda L: L.linalg.matrix_norm(L.ones(3, 3), ord=3),
    "norm_3d_ord": lambda L: L.linalg.norm(L.ones(3, 3, 3), ord=2),
    "solve_triangular_shape": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(3, 1),
                                                                  upper=True),
    "cholesky_solve_shape": lambda L: L.cholesky_solve(L.ones(3, 1), L.eye(2)),
    "mm_dtype": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.float64)),
    "addmv_shape": lambda L: L.addmv(L.ones(2), L.ones(2, 3), L.ones(2)),
    "baddbmm_shape": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 3), L.ones(2, 2, 2)),
    "vdot_2d": lambda L: L.vdot(L.ones(2, 2), L.ones(2, 2)),
    "lstsq_shape": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 1)),
    "pinv_1d": lambda L: L.linalg.pinv(L.ones(3)),
    "matmul_batch_shape": lambda L: L.matmul(L.ones(2, 3, 4), L.ones(2, 5, 4)),
    "matmul_fold_shape": lambda L: L.matmul(L.ones(2, 3, 4), L.ones(5, 4)),
    "matmul_broadcast": lambda L: L.matmul(L.ones(2, 3, 4), L.ones(3, 4, 5)),
    "matmul_0d": lambda L: L.matmul(L.ones(()), L.ones(3)),
    "matmul_batch_dtype": lambda L: L.matmul(L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.float64)),
    "matmul_1x2_dtype": lambda L: L.matmul(L.ones(2), L.ones(2, 2, dtype=L.float64)),
    "matmul_3x1_dtype": lambda L: L.matmul(L.ones(2, 2, 2), L.ones(2, dtype=L.float64)),
    "matmul_int_float": lambda L: L.matmul(L.ones(2, 2, dtype=L.long), L.ones(2, 2)),
    "bmm_dtype": lambda L: L.bmm(L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.float64)),
    "mv_dtype": lambda L: L.mv(L.ones(2, 2, dtype=L.float64), L.ones(2)),
    "mv_2d": lambda L: L.mv(L.ones(2, 2), L.ones(2, 2)),
    "dot_dtype": lambda L: L.dot(L.ones(2), L.ones(2, dtype=L.float64)),
    "vdot_dtype": lambda L: L.vdot(L.ones(2), L.ones(2, dtype=L.float64)),
    "addmm_dtype": lambda L: L.addmm(L.ones(2), L.ones(2, 2), L.ones(2, 2, dtype=L.float64)),
    "addmm_bias_dtype": lambda L: L.addmm(L.ones(2, dtype=L.float64), L.ones(2, 2),
                                          L.ones(2, 2)),
    "addmm_bias_shape": lambda L: L.addmm(L.ones(3), L.ones(2, 2), L.ones(2, 2)),
    "baddbmm_bias_shape": lambda L: L.baddbmm(L.ones(3, 2, 2), L.ones(2, 2, 2),
                                              L.ones(2, 2, 2)),
    "baddbmm_dtype": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 2),
                                         L.ones(2, 2, 2, dtype=L.float64)),
    "vector_norm_narrowing": lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.float64),
                                                            dtype=L.float32),
    "vector_norm_int_with_dtype": lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.long),
                                                                 dtype=L.float32),
    "vector_norm_complex_to_real": lambda L: L.linalg.vector_norm(
        L.ones(2, dtype=L.complex64), dtype=L.float64),
    "vector_norm_real_to_complex": lambda L: L.linalg.vector_norm(L.ones(2),
                                                                  dtype=L.complex64),
    "vector_norm_dim_twice": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim=(0, 0)),
    "vector_norm_dim_range": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim=2),
    "matrix_norm_same_dims": lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0, 0)),
    "matrix_norm_3_dims": lambda L: L.linalg.matrix_norm(L.ones(3, 3, 3), dim=(0, 1, 2)),
    "matrix_norm_half_nuc": lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.float16),
                                                           "nuc"),
    "norm_nuc_1d": lambda L: L.linalg.norm(L.ones(3), ord="nuc"),
    "norm_fro_int_dim": lambda L: L.linalg.norm(L.ones(3, 3), ord="fro", dim=0),
    "einsum_dtype": lambda L: L.einsum("i,i", L.ones(2), L.ones(2, dtype=L.float64)),
    "einsum_repeated_output": lambda L: L.einsum("ij->ii", L.ones(2, 2)),
    "einsum_unknown_output": lambda L: L.einsum("ij->k", L.ones(2, 2)),
    "tensordot_negative": lambda L: L.tensordot(L.ones(2, 2), L.ones(2, 2), dims=-1),
    "tensordot_lengths": lambda L: L.tensordot(L.ones(2, 2), L.ones(2, 2), dims=([0], [0, 1])),
    "cross_ndim": lambda L: L.linalg.cross(L.ones(3), L.ones(2, 3)),
    "cross_dim_range": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(2, 3), dim=3),
    "cross_no_size3": lambda L: L.cross(L.ones(2, 2), L.ones(2, 2)),
    "cross_dtype": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(2, 3, dtype=L.float64)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.eye(2), UPLO="X"),
    "svdvals_1d": lambda L: L.linalg.svdvals(L.ones(3)),
    "lstsq_dtype": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1, dtype=L.float64)),
    "lstsq_driver": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1), driver="foo"),
    "solve_triangular_1d": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(2), upper=True),
    "triangular_solve_shape": lambda L: L.triangular_solve(L.ones(3, 1), L.eye(2)),
    "cholesky_solve_dtype": lambda L: L.cholesky_solve(L.ones(2, 1),
                                                       L.eye(2, dtype=L.float64)),
    "multi_dot_dtype": lambda L: L.linalg.multi_dot([L.ones(2, 2),
                                                     L.ones(2, 2, dtype=L.float64)]),
    "multi_dot_middle_1d": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2),
                                                         L.ones(2, 2)]),
    "solve_1d": lambda L: L.linalg.solve(L.ones(2), L.ones(2)),
}

# Functions of a square matrix run by both tables below.
_SQUARE_FNS = {
    "inv": lambda L, x: L.linalg.inv(x), "det": lambda L, x: L.linalg.det(x),
    "slogdet": lambda L, x: L.linalg.slogdet(x), "cholesky": lambda L, x: L.linalg.cholesky(x),
    "qr": lambda L, x: L.linalg.qr(x), "eigh": lambda L, x: L.linalg.eigh(x),
    "eigvalsh": lambda L, x: L.linalg.eigvalsh(x), "svd": lambda L, x: L.linalg.svd(x),
    "svdvals": lambda L, x: L.linalg.svdvals(x), "pinv": lambda L, x: L.linalg.pinv(x),
    "solve": lambda L, x: L.linalg.solve(x, x), "lstsq": lambda L, x: L.linalg.lstsq(x, x),
    "solve_triangular": lambda L, x: L.linalg.solve_triangular(x, x, upper=True),
    "cholesky_solve": lambda L, x: L.cholesky_solve(x, x),
    "matrix_power_neg": lambda L, x: L.linalg.matrix_power(x, -1),
    "vector_norm": lambda L, x: L.linalg.vector_norm(x),
    "matrix_norm": lambda L, x: L.linalg.matrix_norm(x),
    "matrix_norm_2": lambda L, x: L.linalg.matrix_norm(x, 2),
    "matrix_rank": lambda L, x: L.linalg.matrix_rank(x),
}

# Every function on integer, half and bool input: torch's exception type and message (the
# LAPACK-backed ones refuse, the products accept integers and half).
_DTYPE_FNS = {
    **_SQUARE_FNS,
    "triangular_solve": lambda L, x: L.triangular_solve(x, x),
    "matrix_power": lambda L, x: L.linalg.matrix_power(x, 2),
    "cross": lambda L, x: L.linalg.cross(x, x), "inverse": lambda L, x: L.inverse(x),
    "logdet": lambda L, x: L.logdet(x), "cholesky_legacy": lambda L, x: L.cholesky(x),
    "matmul": lambda L, x: x @ x, "mv": lambda L, x: L.mv(x, x[0]),
    "dot": lambda L, x: L.dot(x[0], x[0]), "bmm": lambda L, x: L.bmm(x[None], x[None]),
    "einsum": lambda L, x: L.einsum("ij,jk", x, x), "cond": lambda L, x: L.linalg.cond(x),
    "multi_dot": lambda L, x: L.linalg.multi_dot([x, x]),
}


@pytest.mark.parametrize("dtype", ["int64", "float16", "bool"])
@pytest.mark.parametrize("fn", list(_DTYPE_FNS))
def test_unsupported_dtypes_match_torch(fn, dtype):
    results = []
    for L in (torch, ndgrad):
        x = L.eye(3, dtype=getattr(L, dtype))
        try:
            out = _DTYPE_FNS[fn](L, x)
            outs = out if isinstance(out, tuple) else (out,)
            results.append(("ok", [str(o.dtype) for o in outs], [_np(o) for o in outs]))
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            results.append((type(e).__name__, str(e)))
    if results[0][0] == "ok":
        assert results[1][0] == "ok", results[1]
        assert results[0][1] == results[1][1]
        for a, b in zip(results[0][2], results[1][2]):
            np.testing.assert_allclose(b.astype(float), a.astype(float), rtol=1e-3)
    else:
        assert results[1] == results[0]


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as ne:
        fn(ndgrad)
    assert isinstance(ne.value, RuntimeError) == isinstance(te.value, RuntimeError)
    assert isinstance(ne.value, TypeError) == isinstance(te.value, TypeError)
    assert str(ne.value) == str(te.value)


def test_linalg_error_class():
    assert issubclass(ndgrad.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ndgrad.linalg.LinAlgError):
        ndgrad.linalg.cholesky(-ndgrad.eye(2))


def _phase_dependent(L, fn, a):
    x = L.tensor(a, requires_grad=True)
    out = fn(L, x)
    out.real.sum().backward()


@pytest.mark.parametrize("which", ["eigh", "svd_u", "svd_vh"])
def test_ill_defined_complex_gradients(which):
    """A loss depending on the arbitrary phase of complex eigen/singular vectors: torch and
    ndgrad both refuse with the same message."""
    a = hpd(3) if which == "eigh" else C(3, 3)
    fn = {"eigh": lambda L, x: L.linalg.eigh(x)[1],
          "svd_u": lambda L, x: L.linalg.svd(x)[0],
          "svd_vh": lambda L, x: L.linalg.svd(x)[2]}[which]
    with pytest.raises(RuntimeError) as te:
        _phase_dependent(torch, fn, a)
    with pytest.raises(RuntimeError) as ne:
        _phase_dependent(ndgrad, fn, a)
    assert str(ne.value) == str(te.value)


def _same_runtime_error(fn):
    """``fn(L)`` raises RuntimeError in torch and ndgrad, with the same message."""
    msgs = []
    for L in (torch, ndgrad):
        with pytest.raises(RuntimeError) as e:
            fn(L)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("mode,shape", [("r", (3, 3)), ("complete", (4, 3))])
def test_qr_backward_errors(mode, shape):
    a = R(*shape)
    msgs = []
    for L in (torch, ndgrad):
        x = L.tensor(a, requires_grad=True)
        _, r = L.linalg.qr(x, mode=mode)
        with pytest.raises(RuntimeError) as e:
            r.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_lstsq_outputs_match_torch():
    a, b = R(4, 3), R(4, 2)
    for driver in (None, "gels", "gelsd", "gelss"):
        t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        n = ndgrad.linalg.lstsq(ndgrad.tensor(a), ndgrad.tensor(b), driver=driver)
        for x, y in zip(t, n):
            assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)
            np.testing.assert_allclose(y.numpy(), x.numpy(), atol=1e-8)


def test_named_tuples_and_methods():
    a = spd(3)
    n, t = ndgrad.tensor(a), torch.tensor(a)
    assert ndgrad.linalg.eigh(n).eigenvalues.shape == t.shape[:1]
    np.testing.assert_allclose(ndgrad.linalg.slogdet(n).logabsdet.numpy(),
                               torch.linalg.slogdet(t).logabsdet.numpy())
    np.testing.assert_allclose(n.inverse().numpy(), t.inverse().numpy())
    np.testing.assert_allclose(n.det().numpy(), t.det().numpy())
    assert int(ndgrad.linalg.matrix_rank(n)) == int(torch.linalg.matrix_rank(t))
    np.testing.assert_allclose(ndgrad.linalg.matrix_power(n, 0).numpy(), np.eye(3))


def _laplace_det(m):
    """Determinant by cofactor expansion: exact on small integer matrices, on any machine."""
    if m.shape[-1] == 1:
        return m[..., 0, 0]
    return sum((-1) ** j * m[..., 0, j] * _laplace_det(np.delete(m[..., 1:, :], j, axis=-1))
               for j in range(m.shape[-1]))


def _cofactors(m):
    n = m.shape[-1]
    out = np.zeros_like(m)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(m, i, axis=-2), j, axis=-1)
            out[..., i, j] = (-1) ** (i + j) * _laplace_det(minor)
    return out


@pytest.mark.parametrize("create_graph", [False, True])
def test_det_singular_modes(create_graph):
    """The gradient of det at exactly singular matrices follows torch's formula (its
    ``linalg_det_backward``). Under create_graph it is the cofactor matrix (through the SVD) on
    every machine. First-order, it is conj(det) A^{-H} solved with the forward's LU, whose exactly
    zero pivots are nudged by eps: so it is 0 where the library's own LU gives det == 0 exactly,
    and the cofactor matrix where the LU leaves a rounding residue in a pivot. Which of the two
    a matrix gets depends on the LAPACK (MKL in torch, OpenBLAS in NumPy), so each library is
    checked against the formula applied to its own det, and the two are compared directly where
    every LU is exact ([[1, 1], [1, 1]])."""
    a = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
    b = np.array([[1., 1.], [1., 1.]])
    # (matrix, whether every LAPACK's LU of it is exact)
    for m, lu_exact in ((a, False), (b, True), (np.stack([b, np.eye(2) * 2]), True),
                        (a * (1 + 1j), False)):
        cof = np.conj(_cofactors(m))
        grads = {}
        for L in (torch, ndgrad):
            x = L.tensor(m, requires_grad=True)
            det = L.linalg.det(x)
            g, = L.autograd.grad(det.sum().real, x, create_graph=create_graph)
            exact_zero = _np(det.detach()) == 0
            want = cof if create_graph else np.where(exact_zero[..., None, None], 0, cof)
            np.testing.assert_allclose(_np(g), want, atol=1e-12)
            grads[L] = _np(g)
        if create_graph or lu_exact:
            np.testing.assert_allclose(grads[ndgrad], grads[torch], atol=1e-12)


def test_det_zero_matrix_grad_is_cofactor():
    """2x2 all-zero matrix: det' is the (zero) cofactor matrix, not NaN, as torch."""
    for L in (torch, ndgrad):
        x = L.zeros(2, 2, dtype=L.float64, requires_grad=True)
        L.linalg.det(x).backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 2)))


def test_triangular_solve_forward_over_backward_is_analytic():
    """d/dt of the b-gradient of triangular_solve along a tangent dA equals
    -A^-H triu(dA)^H A^-H g (torch 2.13 gives another value; linalg.solve_triangular agrees)."""
    fwd = ndgrad.autograd.forward_ad
    rng = np.random.default_rng(0)
    b0, a0 = rng.standard_normal((3, 2)), np.triu(rng.standard_normal((3, 3)) + 3 * np.eye(3))
    tb, ta = rng.standard_normal((3, 2)), rng.standard_normal((3, 3))
    ai = np.linalg.inv(a0)
    expected = -(ai.T @ np.triu(ta).T @ ai.T @ np.ones((3, 2)))
    for f in (lambda b, a: ndgrad.triangular_solve(b, a)[0],
              lambda b, a: ndgrad.linalg.solve_triangular(a, b, upper=True)):
        with fwd.dual_level():
            b = fwd.make_dual(ndgrad.tensor(b0).requires_grad_(True), ndgrad.tensor(tb))
            a = fwd.make_dual(ndgrad.tensor(a0).requires_grad_(True), ndgrad.tensor(ta))
            out = f(b, a)
            gb, = ndgrad.autograd.grad(out, b, ndgrad.ones_like(out), create_graph=True)
            got = fwd.unpack_dual(gb).tangent
        np.testing.assert_allclose(got.detach().numpy(), expected, atol=1e-12)


_EMPTY_FNS = {
    **_SQUARE_FNS,
    "svd_reduced": lambda L, x: L.linalg.svd(x, full_matrices=False),
    "matrix_power": lambda L, x: L.linalg.matrix_power(x, 3),
    "matrix_norm_nuc": lambda L, x: L.linalg.matrix_norm(x, "nuc"),
    "matrix_norm_1": lambda L, x: L.linalg.matrix_norm(x, 1),
    "matrix_norm_inf": lambda L, x: L.linalg.matrix_norm(x, math.inf),
    "matmul": lambda L, x: x @ x.mT, "einsum": lambda L, x: L.einsum("...ij,...kj", x, x),
    "tensordot": lambda L, x: L.tensordot(x, x, dims=x.ndim),
}


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (0, 3), (3, 0)])
def test_empty_inputs_match_torch(shape):
    for name, fn in _EMPTY_FNS.items():
        results = []
        for L in (torch, ndgrad):
            x = L.zeros(shape, dtype=L.float64)
            try:
                out = fn(L, x)
                outs = out if isinstance(out, tuple) else (out,)
                results.append(("ok", [(tuple(o.shape), str(o.dtype), _np(o).tolist())
                                       for o in outs]))
            except Exception as e:  # noqa: BLE001 - the exception itself is compared
                results.append((type(e).__name__, str(e)))
        assert results[1] == results[0], name


@pytest.mark.parametrize("method,shapes", [
    ("addmm_", [(2, 4), (2, 3), (3, 4)]), ("addmv_", [(2,), (2, 3), (3,)]),
    ("baddbmm_", [(2, 2, 4), (2, 2, 3), (2, 3, 4)]), ("addbmm_", [(2, 4), (3, 2, 3), (3, 3, 4)]),
])
def test_inplace_add_family(method, shapes):
    arrays = [R(*s) for s in shapes]
    compare(lambda L, c, a, b: getattr(c * 1, method)(a, b, beta=0.5, alpha=2), arrays)
    if method == "addbmm_":  # torch resizes self here instead of raising (ndgrad raises)
        return
    bad = [R(*((1,) + shapes[0][1:])), R(*shapes[1]), R(*shapes[2])]
    _same_runtime_error(
        lambda L: getattr(L.tensor(bad[0]), method)(L.tensor(bad[1]), L.tensor(bad[2])))


def _eig_gauge(L, a):
    w, v = L.linalg.eig(a)
    return w, (v * v.conj()).real


EXTRA = {
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), [R(3, 3)]),
    "matrix_exp_batched_large": (lambda L, a: L.matrix_exp(a), [R(2, 3, 3) * 4]),
    "matrix_exp_complex": (lambda L, a: L.linalg.matrix_exp(a), [C(2, 2)]),
    "eig": (_eig_gauge, [R(3, 3)]),
    "eig_complex": (_eig_gauge, [C(3, 3)]),
    "eigvals": (lambda L, a: L.linalg.eigvals(a), [R(2, 3, 3)]),
}


@pytest.mark.parametrize("name", list(EXTRA))
def test_matrix_exp_and_eig(name):
    fn, arrays = EXTRA[name]
    compare(fn, arrays)


def test_eig_ill_defined_phase():
    a = C(3, 3)
    _same_runtime_error(
        lambda L: L.linalg.eig(L.tensor(a, requires_grad=True))[1].real.sum().backward())


LU_CASES = {
    "lu_square": (lambda L, a: L.linalg.lu(a), [R(3, 3)]),
    "lu_batched": (lambda L, a: L.linalg.lu(a), [R(2, 3, 3)]),
    "lu_wide": (lambda L, a: L.linalg.lu(a), [R(3, 5)]),
    "lu_tall": (lambda L, a: L.linalg.lu(a), [R(5, 3)]),
    "lu_complex": (lambda L, a: L.linalg.lu(a), [C(3, 3)]),
    "lu_only_u": (lambda L, a: L.linalg.lu(a).U, [R(3, 4)]),
    "lu_only_l": (lambda L, a: L.linalg.lu(a).L, [R(4, 3)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a), [R(3, 3)]),
    "lu_factor_wide": (lambda L, a: L.linalg.lu_factor(a), [R(2, 3, 4) + np.eye(3, 4)]),
    "lu_factor_ex": (lambda L, a: L.linalg.lu_factor_ex(a), [R(4, 3)]),
}


@pytest.mark.parametrize("name", list(LU_CASES))
def test_lu_family(name):
    fn, arrays = LU_CASES[name]
    compare(fn, arrays)


def test_lu_unpack():
    # A composite of masks here (AddBackward0/MulBackward0), LuUnpackBackward0 in torch.
    compare(lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a)), [R(3, 3)], check_name=False)
    compare(lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a)), [R(2, 3, 4)], check_name=False)


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_lu_solve(left, adjoint):
    a = R(3, 3) + 3 * np.eye(3)
    b = R(3, 2) if left else R(2, 3)
    compare(lambda L, x, y: L.linalg.lu_solve(*L.linalg.lu_factor(x), y, left=left,
                                              adjoint=adjoint), [a, b], check_name=False)


def test_lu_errors():
    for fn in (lambda L: L.linalg.lu_factor(L.zeros(2, 2)),
               lambda L: L.linalg.lu_factor(L.ones(2, 3)),
               lambda L: L.linalg.lu(L.ones(3)),
               lambda L: L.linalg.lu_factor(L.ones(2, 2, dtype=L.long))):
        res = []
        for L in (torch, ndgrad):
            with pytest.raises(Exception) as e:
                fn(L)
            res.append((type(e.value).__name__, str(e.value)))
        assert res[0] == res[1]


def test_lu_solve_complex_adjoint_and_right():
    a, b = C(3, 3) + 3 * np.eye(3), C(3, 2)
    for left, adjoint in ((True, True), (False, False), (False, True)):
        bb = b if left else b.T
        compare(lambda L, x, y, lf=left, adj=adjoint: L.linalg.lu_solve(
            *L.linalg.lu_factor(x), y, left=lf, adjoint=adj), [a, bb], check_name=False)


_SING = np.array([[1., 2.], [2., 4.]])
_NOT_PD = np.array([[4., 2., 1.], [2., 1., 3.], [1., 3., 5.]])
_EX_CASES = {
    "inv_ex": lambda L: L.linalg.inv_ex(L.tensor(np.stack([np.eye(2) * 2, _SING]))),
    "inv_ex_zero": lambda L: L.linalg.inv_ex(L.zeros(3, 3)),
    "inv_ex_check": lambda L: L.linalg.inv_ex(L.tensor(np.stack([_SING, _SING])),
                                              check_errors=True),
    "solve_ex": lambda L: L.linalg.solve_ex(L.tensor(np.stack([np.eye(2), _SING])),
                                            L.ones(2, 2, 1, dtype=L.float64)),
    "solve_ex_check": lambda L: L.linalg.solve_ex(L.tensor(_SING), L.ones(2, 1, dtype=L.float64),
                                                  check_errors=True),
    "cholesky_ex": lambda L: L.linalg.cholesky_ex(L.tensor(_NOT_PD)),
    "cholesky_ex_upper": lambda L: L.linalg.cholesky_ex(L.tensor(_NOT_PD), upper=True),
    "cholesky_ex_batch": lambda L: L.linalg.cholesky_ex(L.tensor(np.stack([np.eye(3), _NOT_PD]))),
    "cholesky_ex_check": lambda L: L.linalg.cholesky_ex(L.tensor(_NOT_PD), check_errors=True),
}


@pytest.mark.parametrize("name", list(_EX_CASES))
def test_ex_variants_report_info(name):
    """The *_ex functions return LAPACK's info (and its partial results) instead of raising,
    or raise under their own name with check_errors=True."""
    results = []
    for L in (torch, ndgrad):
        try:
            out = _EX_CASES[name](L)
            results.append(("ok", _np(out[0]).tolist(), _np(out[1]).tolist(), str(out[1].dtype)))
        except RuntimeError as e:
            results.append(("error", str(e)))
    np.testing.assert_equal(results[1], results[0])


def _chain(t, depth=5):
    names = []

    def walk(fn, d):
        if fn is None or d == 0:
            return
        names.append(fn.name().replace("torch::autograd::", "") if hasattr(fn, "name")
                     else type(fn).__name__)
        for nxt, _ in getattr(fn, "next_functions", ()):
            walk(nxt, d - 1)
    walk(t.grad_fn, depth)
    return names


# (shape a, shape b, a requires grad, b requires grad, a transposed): torch's matmul folds the
# batch into one mm/mv when that avoids copies, squeezes a lone batch of one, else uses bmm.
_MATMUL_GRAPHS = [((2, 3, 4), (4, 5), True, False, False), ((2, 3, 4), (4, 5), False, True, False),
                  ((2, 4, 3), (4, 5), True, True, True), ((4,), (2, 4, 3), True, False, False),
                  ((3, 4), (2, 4, 5), True, False, False), ((3, 4), (2, 4, 5), False, True, False),
                  ((2, 3, 4), (4,), True, True, False), ((2, 1, 3, 4), (5, 4, 2), True, True, False),
                  ((2, 3, 4), (1, 4, 5), True, True, False), ((1, 3, 4), (2, 4, 5), True, True, False),
                  ((1, 3, 4), (1, 4, 5), True, True, False), ((1, 1, 3, 4), (4, 5), True, True, False),
                  ((2, 3, 4), (1, 4, 1), True, True, False)]


@pytest.mark.parametrize("sa,sb,ra,rb,trans", _MATMUL_GRAPHS)
def test_matmul_graph_like_torch(sa, sb, ra, rb, trans):
    a, b = R(*sa), R(*sb)
    chains = []
    for L in (torch, ndgrad):
        x = L.tensor(a).requires_grad_(ra)
        y = L.tensor(b).requires_grad_(rb)
        x = x.transpose(-1, -2) if trans else x
        chains.append(_chain(x @ y))
    assert chains[1] == chains[0]
    compare(lambda L, x, y: (x.transpose(-1, -2) if trans else x) @ y, [a, b])


TENSOR_CASES = {
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a, ind=2), [R(4, 6, 8, 3)]),
    "tensorinv_ind1": (lambda L, a: L.linalg.tensorinv(a, ind=1), [R(6, 2, 3)]),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [R(2, 3, 6), R(2, 3)]),
    "tensorsolve_dims": (lambda L, a, b: L.linalg.tensorsolve(a, b, dims=(1,)),
                         [R(2, 6, 3), R(2, 3)]),
    "vander": (lambda L, x: L.linalg.vander(x), [R(3)]),
    "vander_batched_N": (lambda L, x: L.linalg.vander(x, N=4), [R(2, 3)]),
}


@pytest.mark.parametrize("name", list(TENSOR_CASES))
def test_tensorinv_tensorsolve_vander(name):
    fn, arrays = TENSOR_CASES[name]
    compare(fn, arrays, check_name=False)


def test_tensor_linalg_errors_and_int_vander():
    for fn in (lambda L: L.linalg.tensorinv(L.ones(2, 3), ind=1),
               lambda L: L.linalg.tensorinv(L.ones(4, 4), ind=0),
               lambda L: L.linalg.vander(L.tensor(1.)),
               lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(3, 2, 3))):
        _same_runtime_error(fn)
    t = torch.linalg.vander(torch.tensor([1, 2, 3]))
    n = ndgrad.linalg.vander(ndgrad.tensor([1, 2, 3]))
    assert str(t.dtype) == str(n.dtype)
    np.testing.assert_array_equal(n.numpy(), t.numpy())


def test_cholesky_inverse_jvp_matches_finite_differences():
    """torch 2.13's forward AD of cholesky_inverse is off; ndgrad's JVP equals central
    differences of (L L^T)^-1."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 3))
    l0 = np.linalg.cholesky(x @ x.T / 3 + np.eye(3))
    t = rng.standard_normal((3, 3))

    def f(m):
        m = np.tril(m)
        return np.linalg.inv(m @ m.T)
    eps = 1e-6
    fd = (f(l0 + eps * t) - f(l0 - eps * t)) / (2 * eps)
    fwd = ndgrad.autograd.forward_ad
    with fwd.dual_level():
        d = fwd.make_dual(ndgrad.tensor(l0), ndgrad.tensor(t))
        got = fwd.unpack_dual(ndgrad.cholesky_inverse(d.tril())).tangent
    np.testing.assert_allclose(got.numpy(), fd, atol=1e-8)


def test_docstring_examples():
    import doctest

    from ndgrad._ops import complex_ops, decompositions, matmul, norms, solvers
    for mod in (matmul, solvers, decompositions, norms, complex_ops):
        res = doctest.testmod(mod, extraglobs={"ndgrad": ndgrad},
                              optionflags=doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize("shape,dtype", [((5, 3), "float64"), ((2, 4, 4), "float64"),
                                         ((4, 3), "complex128")])
def test_householder_product(shape, dtype):
    """A composite here (torch: LinalgHouseholderProductBackward0): values, gradients and
    double backward vs torch on geqrf's output, plus torch's checks."""
    x = torch.tensor(R(*shape) if dtype == "float64" else C(*shape))
    a, tau = torch.geqrf(x)
    compare(lambda L, u, t: L.linalg.householder_product(u, t),
            [a.numpy(), tau.numpy()], check_name=False)
    if dtype != "float64" or len(shape) != 2:
        return
    for fn in (lambda L: L.linalg.householder_product(L.ones(2, 3), L.ones(2)),
               lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(3)),
               lambda L: L.linalg.householder_product(L.ones(3), L.ones(1)),
               lambda L: L.linalg.householder_product(L.ones(3, 2, 2), L.ones(2, 2)),
               lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(2, dtype=L.float64))):
        _same_runtime_error(fn)


# ----------------------------------------------------------------------------- batched rules
# The products declare batched VJP/JVP rules (OpDef.batched_vjp / batched_jvp). Each case is
# (fn(lib, *inputs), input shapes, the OpDef whose batched rules the case must go through).
def _batched_cases():
    from ndgrad._ops import matmul as M
    return {
        "mm": (lambda L, a, b: L.mm(a, b), [(2, 3), (3, 4)], M.MM),
        "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 2, 3), (2, 3, 4)], M.BMM),
        "mv": (lambda L, a, v: L.mv(a, v), [(2, 3), (3,)], M.MV),
        "dot": (lambda L, a, b: L.dot(a, b), [(3,), (3,)], M.DOT),
        "addmm": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=-2.0),
                  [(4,), (2, 3), (3, 4)], M.ADDMM),
        "addmm_full_bias": (lambda L, c, a, b: L.addmm(c, a, b), [(2, 4), (2, 3), (3, 4)],
                            M.ADDMM),
        "addmm_beta0": (lambda L, c, a, b: L.addmm(c, a, b, beta=0, alpha=3.0),
                        [(2, 1), (2, 3), (3, 4)], M.ADDMM),
    }


def _counting(monkeypatch, op, slot):
    """Wrap op.<slot> so the test can tell that the batched rule ran and did not raise (a
    raising batched VJP would silently fall back to the per-element loop)."""
    rule = getattr(op, slot)
    assert rule is not None, f"{op.name} declares no {slot}"
    done = []

    def counted(*args):
        out = rule(*args)
        done.append(True)
        return out
    monkeypatch.setattr(op, slot, counted)
    return done


def _random(rng, shape, dtype):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if dtype == "complex128" else a


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", sorted(_batched_cases()))
def test_batched_vjp_of_products_equals_torch_and_the_loop(name, dtype, monkeypatch):
    """autograd.grad(is_grads_batched=True) through each product's batched VJP equals torch's
    and, row by row, the plain backward."""
    fn, shapes, op = _batched_cases()[name]
    if dtype == "complex128" and name.startswith("addmm"):
        # complex beta and alpha: both rules conjugate them
        def fn(L, c, a, b):
            return L.addmm(c, a, b, beta=0.5 - 1j, alpha=1 + 2j)
    rng = np.random.default_rng(3)
    arrays = [_random(rng, s, dtype) for s in shapes]
    out_shape = tuple(fn(ndgrad, *[ndgrad.tensor(a) for a in arrays]).shape)
    g = _random(rng, (5,) + out_shape, dtype)
    tins = [torch.tensor(a, requires_grad=True) for a in arrays]
    want = torch.autograd.grad(fn(torch, *tins), tins, torch.tensor(g), is_grads_batched=True)
    nins = [ndgrad.tensor(a, requires_grad=True) for a in arrays]
    out = fn(ndgrad, *nins)
    done = _counting(monkeypatch, op, "batched_vjp")
    got = ndgrad.autograd.grad(out, nins, ndgrad.tensor(g), is_grads_batched=True)
    assert done, "the batched VJP did not run"
    monkeypatch.undo()
    for a, b in zip(got, want):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)
    for k in range(g.shape[0]):
        row = ndgrad.autograd.grad(fn(ndgrad, *nins), nins, ndgrad.tensor(g[k]))
        for a, b in zip(got, row):
            np.testing.assert_allclose(_np(a)[k], _np(b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(_batched_cases()))
def test_batched_jvp_of_products_equals_torch_and_the_loop(name, monkeypatch):
    """The vectorized forward-mode Jacobian (batched tangents through each product's
    batched JVP) equals torch's and ndgrad's reverse-mode loop."""
    from torch.autograd import functional as TF

    from ndgrad.autograd import functional as NF
    fn, shapes, op = _batched_cases()[name]
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in shapes]
    want = TF.jacobian(lambda *xs: fn(torch, *xs), tuple(torch.tensor(a) for a in arrays),
                       vectorize=True, strategy="forward-mode")
    loop = NF.jacobian(lambda *xs: fn(ndgrad, *xs), tuple(ndgrad.tensor(a) for a in arrays))
    done = _counting(monkeypatch, op, "batched_jvp")
    got = NF.jacobian(lambda *xs: fn(ndgrad, *xs), tuple(ndgrad.tensor(a) for a in arrays),
                      vectorize=True, strategy="forward-mode")
    assert done, "the batched JVP did not run"
    for a, b, c in zip(got, want, loop):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-12, atol=1e-12)
