"""Forward-mode tangents of linalg.cholesky, linalg.eigh, cholesky_inverse and embedding with
padding_idx, and the double backward of pow at a zero base, against torch 2.13 (and finite
differences where torch's own forward formula is wrong: cholesky_inverse, see
docs/decisions.md)."""

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfa

import ndgrad
import ndgrad.autograd.forward_ad as nfa

RNG = np.random.default_rng(16)


def _spd(n, dtype=np.float64):
    a = RNG.standard_normal((n, n))
    if dtype == np.complex128:
        a = a + 1j * RNG.standard_normal((n, n))
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


def _tangent(lib, fn, primal, tangent):
    """(primal outputs, tangents) of fn at primal in direction tangent (arrays)."""
    fa = tfa if lib is torch else nfa
    with fa.dual_level():
        d = fa.make_dual(lib.tensor(primal), lib.tensor(tangent))
        out = fn(lib, d)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [fa.unpack_dual(o) for o in outs]
        return [p.primal.numpy().copy() for p in pairs], [p.tangent.numpy().copy()
                                                          for p in pairs]


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_cholesky_tangent_is_torchs(upper, dtype):
    a = _spd(4, dtype)
    t = RNG.standard_normal((2, 4, 4)).astype(dtype)  # batched, not Hermitian
    a = np.stack([a, _spd(4, dtype)])

    def fn(lib, x):
        return lib.linalg.cholesky(x, upper=upper)
    _, (tt,) = _tangent(torch, fn, a, t)
    _, (tn,) = _tangent(ndgrad, fn, a, t)
    np.testing.assert_allclose(tn, tt, rtol=1e-10, atol=1e-12)


def test_legacy_cholesky_has_no_forward_ad_as_torch():
    a, t = _spd(3), RNG.standard_normal((3, 3))
    for lib in (torch, ndgrad):
        with pytest.raises(NotImplementedError, match="forward AD with cholesky that"):
            _tangent(lib, lambda L, x: L.cholesky(x), a, t)


def test_cholesky_ex_tangent_is_torchs():
    a, t = _spd(3), RNG.standard_normal((3, 3))
    _, (tt,) = _tangent(torch, lambda L, x: L.linalg.cholesky_ex(x).L, a, t)
    _, (tn,) = _tangent(ndgrad, lambda L, x: L.linalg.cholesky_ex(x).L, a, t)
    np.testing.assert_allclose(tn, tt, rtol=1e-10, atol=1e-12)


def test_cholesky_tangent_matches_finite_differences_for_symmetric_tangent():
    a = _spd(4)
    t = RNG.standard_normal((4, 4))
    t = t + t.T
    h = 1e-6
    fd = (np.linalg.cholesky(a + h * t) - np.linalg.cholesky(a - h * t)) / (2 * h)
    _, (tn,) = _tangent(ndgrad, lambda L, x: L.linalg.cholesky(x), a, t)
    np.testing.assert_allclose(tn, fd, atol=1e-7)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigh_tangents_are_torchs(uplo, dtype):
    a = _spd(4, dtype)
    t = RNG.standard_normal((4, 4)).astype(dtype)  # not Hermitian: torch uses it whole
    (lt, vt), (dlt, dvt) = _tangent(torch, lambda L, x: tuple(L.linalg.eigh(x, UPLO=uplo)),
                                    a, t)
    (ln, vn), (dln, dvn) = _tangent(ndgrad, lambda L, x: tuple(L.linalg.eigh(x, UPLO=uplo)),
                                    a, t)
    np.testing.assert_allclose(ln, lt, rtol=1e-12)
    np.testing.assert_allclose(dln, dlt, rtol=1e-10, atol=1e-12)
    # eigenvectors are defined up to a phase per column: align ours to torch's
    phase = (vt.conj() * vn).sum(0)
    phase = phase / np.abs(phase)
    np.testing.assert_allclose(vn / phase, vt, atol=1e-10)
    np.testing.assert_allclose(dvn / phase, dvt, atol=1e-10)
    assert dln.dtype == dlt.dtype


def test_eigvalsh_tangent_is_torchs():
    a, t = _spd(3), RNG.standard_normal((3, 3))
    _, (tt,) = _tangent(torch, lambda L, x: L.linalg.eigvalsh(x), a, t)
    _, (tn,) = _tangent(ndgrad, lambda L, x: L.linalg.eigvalsh(x), a, t)
    np.testing.assert_allclose(tn, tt, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_tangent_matches_finite_differences(upper):
    """torch's forward formula for cholesky_inverse disagrees with finite differences even
    for a triangular tangent; ndgrad's tangent is the derivative, as torch's reverse mode
    (double-VJP) gives it."""
    low = np.linalg.cholesky(_spd(4))
    f = low.T.copy() if upper else low
    t = np.triu(RNG.standard_normal((4, 4))) if upper else np.tril(RNG.standard_normal((4, 4)))
    h = 1e-6

    def inv(m):
        return torch.cholesky_inverse(torch.tensor(m), upper=upper).numpy()
    fd = (inv(f + h * t) - inv(f - h * t)) / (2 * h)
    _, (tn,) = _tangent(ndgrad, lambda L, x: L.cholesky_inverse(x, upper=upper), f, t)
    np.testing.assert_allclose(tn, fd, atol=1e-7)
    # torch's forward-mode tangent is not the derivative (the deviation is deliberate) ...
    _, (tt,) = _tangent(torch, lambda L, x: L.cholesky_inverse(x, upper=upper), f, t)
    assert np.abs(tt - fd).max() > 1e-4
    # ... while its reverse-mode JVP (through the VJP) is ours, for any tangent
    t_full = RNG.standard_normal((4, 4))
    x = torch.tensor(f, requires_grad=True)
    jt = torch.autograd.functional.jvp(lambda m: torch.cholesky_inverse(m, upper=upper), x,
                                       torch.tensor(t_full))[1].numpy()
    _, (tn,) = _tangent(ndgrad, lambda L, x: L.cholesky_inverse(x, upper=upper), f, t_full)
    np.testing.assert_allclose(tn, jt, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding_tangent_includes_padding_row(padding_idx):
    w = RNG.standard_normal((5, 3))
    tw = RNG.standard_normal((5, 3))
    idx = [[0, 1, 4], [1, 2, 4]]

    def fn(lib, x):
        return lib.nn.functional.embedding(lib.tensor(idx), x, padding_idx=padding_idx)
    (pt,), (tt,) = _tangent(torch, fn, w, tw)
    (pn,), (tn,) = _tangent(ndgrad, fn, w, tw)
    np.testing.assert_array_equal(pn, pt)
    np.testing.assert_array_equal(tn, tt)
    np.testing.assert_array_equal(tn, tw[np.array(idx)])  # the lookup of the tangent


def test_embedding_module_tangent_with_padding():
    def fn(lib, x):
        return lib.nn.functional.embedding(lib.tensor([3, 0, 3]), x, padding_idx=3,
                                           max_norm=None, scale_grad_by_freq=True)
    w, tw = RNG.standard_normal((4, 2)), RNG.standard_normal((4, 2))
    _, (tt,) = _tangent(torch, fn, w, tw)
    _, (tn,) = _tangent(ndgrad, fn, w, tw)
    np.testing.assert_array_equal(tn, tt)


def _pow_grads(lib, base, exp, scalar_base=False):
    """First and second derivatives of pow with a zero in the base."""
    out = []
    e = lib.tensor(exp, dtype=lib.float64, requires_grad=True)
    if scalar_base:
        y = lib.pow(0.0, e)
        (g,) = lib.autograd.grad(y.sum(), e, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), e)
        return [g.detach().numpy().copy(), gg.numpy().copy()]
    x = lib.tensor(base, dtype=lib.float64, requires_grad=True)
    y = x ** e
    gx, ge = lib.autograd.grad(y.sum(), (x, e), create_graph=True)
    out += [gx.detach().numpy().copy(), ge.detach().numpy().copy()]
    for g in (gx, ge):
        out += [v.numpy().copy() for v in lib.autograd.grad(g.sum(), (x, e), retain_graph=True)]
    return out


@pytest.mark.parametrize("exp", [[2.0, 0.0, 1.0, 0.5, -1.0, 3.0]])
def test_pow_double_backward_at_zero_base_is_torchs(exp):
    base = [0.0, 0.0, 0.0, 0.0, 0.0, 1.5]
    ours = _pow_grads(ndgrad, base, exp)
    theirs = _pow_grads(torch, base, exp)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
    # d/dx of d(0**y)/dy for y >= 0 is nan as torch's (0 * log 0 in the product rule)
    assert np.isnan(ours[4][:4]).all()


def test_pow_scalar_zero_base_grads_are_torchs():
    exp = [2.0, 0.0, -1.0, 0.5, -2.5]
    ours = _pow_grads(ndgrad, None, exp, scalar_base=True)
    theirs = _pow_grads(torch, None, exp, scalar_base=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
    assert ours[0][2] == -np.inf  # d/dy 0**y at y = -1: inf * log(0)


def test_pow_scalar_zero_base_tangent_is_torchs():
    exp = np.array([2.0, 0.0, -1.0, 0.5])
    t = np.array([1.0, 2.0, 3.0, 4.0])
    _, (tt,) = _tangent(torch, lambda L, e: L.pow(0.0, e), exp, t)
    _, (tn,) = _tangent(ndgrad, lambda L, e: L.pow(0.0, e), exp, t)
    np.testing.assert_array_equal(tn, tt)
