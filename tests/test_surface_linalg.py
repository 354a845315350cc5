"""The remaining linear-algebra names (issue 16's surface), against torch 2.13: ``geqrf``,
``orgqr``, ``ormqr``, the deprecated ``lu`` / ``lu_solve``, ``nuclear_norm``,
``frobenius_norm``, ``norm_except_dim`` and ``linalg.ldl_factor`` / ``ldl_factor_ex`` /
``ldl_solve`` (LAPACK's Bunch-Kaufman pivots, exactly)."""

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import ndgrad
from tests._diff import raises_same, same


def _sym(rng, n, kind, batch=(), small_diag=False):
    a = rng.standard_normal(batch + (n, n))
    if kind != "real":
        a = a + 1j * rng.standard_normal(batch + (n, n))
    if small_diag:            # makes Bunch-Kaufman choose 2x2 pivots
        idx = np.arange(n)
        a[..., idx, idx] *= 0.01
    at = np.swapaxes(a, -1, -2)
    return a + (np.conj(at) if kind == "hermitian" else at)


def _msg(warning):
    """A warning's text without torch's C++ location suffix."""
    return str(warning.message).split(" (Triggered internally at")[0]


# ----------------------------------------------------------------------------- householder
def test_geqrf_values_and_node():
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal((4, 3)), rng.standard_normal((3, 5)),
            rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3)),
            np.zeros((2, 0, 3))]

    def run(lib):
        return [tuple(lib.geqrf(lib.tensor(m))) for m in mats]
    same(run, rtol=1e-10, atol=1e-12)

    def node(lib):
        x = lib.tensor(mats[0], requires_grad=True)
        a, tau = x.geqrf()
        return type(a.grad_fn).__name__, tau.requires_grad, a._fields if hasattr(a, "_fields") \
            else None
    same(node)
    raises_same(lambda lib: lib.geqrf(lib.tensor(mats[0], requires_grad=True))[0].sum()
                .backward())
    raises_same(lambda lib: lib.geqrf(lib.zeros(3)))
    raises_same(lambda lib: lib.geqrf(lib.zeros(3, 3, dtype=lib.long)))


def test_orgqr_ormqr():
    rng = np.random.default_rng(1)
    A, W = rng.standard_normal((4, 3)), rng.standard_normal((3, 4))
    C, D = rng.standard_normal((4, 2)), rng.standard_normal((2, 4))

    def run(lib):
        a, t = lib.geqrf(lib.tensor(A))
        a2, t2 = lib.geqrf(lib.tensor(W))
        a, t, c = a.requires_grad_(), t.requires_grad_(), lib.tensor(C, requires_grad=True)
        outs = [lib.orgqr(a, t), a.orgqr(t)]
        for left in (True, False):
            for tr in (True, False):
                outs.append(lib.ormqr(a, t, c if left else c.mT, left, tr))
        outs.append(a2.ormqr(t2, lib.tensor(C[:3]), transpose=True))
        lib.autograd.backward([o.sum() for o in outs[:6]])
        return outs, a.grad, t.grad, c.grad
    same(run, rtol=1e-9, atol=1e-11)
    a, t = (x.numpy() for x in torch.geqrf(torch.tensor(A)))
    raises_same(lambda lib: lib.ormqr(lib.tensor(a), lib.tensor(t), lib.tensor(C[:3])))
    raises_same(lambda lib: lib.ormqr(lib.tensor(a), lib.tensor(t), lib.tensor(D[:, :3]),
                                      left=False))
    raises_same(lambda lib: lib.ormqr(lib.tensor(a), lib.tensor(t[:2]), lib.tensor(C)))
    raises_same(lambda lib: lib.ormqr(lib.tensor(a), lib.tensor(t), lib.tensor(C).float()))
    raises_same(lambda lib: lib.ormqr(lib.tensor(a)[None], lib.tensor(t)[None],
                                      lib.tensor(C)))
    raises_same(lambda lib: lib.ormqr(lib.tensor(a[0]), lib.tensor(t), lib.tensor(C)))
    raises_same(lambda lib: lib.orgqr(lib.tensor(W), lib.tensor(t)))


# ----------------------------------------------------------------------------- lu, lu_solve
def test_deprecated_lu_and_lu_solve():
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    S = np.array([[1.0, 2.0], [2.0, 4.0]])

    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x, b = lib.tensor(A, requires_grad=True), lib.tensor(B, requires_grad=True)
            LU, piv = x.lu()
            full = lib.lu(x, get_infos=True)
            y, z = lib.lu_solve(b, LU, piv), b.lu_solve(LU, piv)
            (y.sum() + z.sum()).backward()
            singular = lib.tensor(S).lu(get_infos=True)
            msgs = sorted({_msg(m) for m in w})
        return (LU, piv, tuple(full), y, z, x.grad, b.grad, type(LU.grad_fn).__name__,
                tuple(singular)), msgs
    same(lambda lib: run(lib)[0], rtol=1e-10, atol=1e-12)
    # torch warns once per process (TORCH_WARN_ONCE): an earlier test in this worker (the op_db
    # tests call lu) may have used its warning, so torch's messages come from a fresh process
    probe = ("import json, warnings, torch\n"
             "with warnings.catch_warnings(record=True) as w:\n"
             "    warnings.simplefilter('always')\n"
             "    x = torch.eye(3, dtype=torch.float64); LU, piv = x.lu()\n"
             "    torch.lu_solve(torch.ones(3, 1, dtype=torch.float64), LU, piv)\n"
             "print(json.dumps(sorted({str(m.message).split(' (Triggered internally at')[0]"
             " for m in w})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert run(ndgrad)[1] == json.loads(done.stdout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_same(lambda lib: lib.lu(lib.tensor(A), pivot=False))


# ----------------------------------------------------------------------------- norms
def test_deprecated_norms():
    A = np.random.default_rng(3).standard_normal((2, 3, 4))

    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = lib.tensor(A, requires_grad=True)
            outs = [lib.nuclear_norm(x, (1, 2)), lib.nuclear_norm(x[0], keepdim=True),
                    lib.nuclear_norm(x), lib.frobenius_norm(x, (0, 2), True),
                    lib.frobenius_norm(x, [1]), lib.norm_except_dim(x, 2, 1),
                    lib.norm_except_dim(x, 3, 2), lib.norm_except_dim(x, 1, -1),
                    lib.norm_except_dim(x, 2, -2), lib.norm_except_dim(x)]
            sum(o.sum() for o in outs).backward()
            msgs = sorted({_msg(m) for m in w})
        return outs, x.grad, msgs
    same(run, rtol=1e-10, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_same(lambda lib: lib.nuclear_norm(lib.zeros(3)))
        raises_same(lambda lib: lib.norm_except_dim(lib.zeros(2, 3), 2, 5))


# ----------------------------------------------------------------------------- ldl
@pytest.mark.parametrize("kind", ["real", "symmetric", "hermitian"])
@pytest.mark.parametrize("small_diag", [False, True])
def test_ldl_factor_and_solve(kind, small_diag):
    rng = np.random.default_rng(4)
    herm = kind == "hermitian"
    for n in (1, 2, 3, 5, 8):
        A = _sym(rng, n, kind, small_diag=small_diag)
        B = rng.standard_normal((n, 3)).astype(A.dtype)

        def run(lib, A=A, B=B):
            LD, piv, info = lib.linalg.ldl_factor_ex(lib.tensor(A), hermitian=herm)
            LD2, piv2 = lib.linalg.ldl_factor(lib.tensor(A), hermitian=herm)
            X = lib.linalg.ldl_solve(LD, piv, lib.tensor(B), hermitian=herm)
            return LD, piv, info, LD2, piv2, X
        same(run, rtol=1e-9, atol=1e-11)


def test_ldl_two_by_two_pivots_exactly():
    # a zero diagonal forces 2x2 blocks: pivots are negative, as LAPACK's
    S = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]])
    out = same(lambda lib: tuple(lib.linalg.ldl_factor(lib.tensor(S))))
    assert (out[1].numpy() < 0).any()


def test_ldl_batches_and_broadcast():
    rng = np.random.default_rng(5)
    A = _sym(rng, 4, "real", batch=(2, 3), small_diag=True)
    B = rng.standard_normal((4, 2))

    def run(lib):
        LD, piv = lib.linalg.ldl_factor(lib.tensor(A))
        return LD, piv, lib.linalg.ldl_solve(LD, piv, lib.tensor(B)), \
            lib.linalg.ldl_solve(LD[0, 0], piv[0, 0], lib.tensor(np.stack([B, B, B])))
    same(run, rtol=1e-9, atol=1e-11)
    same(lambda lib: tuple(lib.linalg.ldl_factor(lib.zeros(2, 0, 0))))


def test_ldl_singular_and_errors():
    same(lambda lib: tuple(lib.linalg.ldl_factor_ex(lib.tensor([[0.0, 0.0], [0.0, 1.0]]))))
    same(lambda lib: tuple(lib.linalg.ldl_factor_ex(lib.tensor([[1.0, 0.0], [0.0, 0.0]]))))
    for lib in (ndgrad, torch):   # torch reports it through an internal assert: the gist
        with pytest.raises(RuntimeError, match="ldl_factor: Unknown error code: 1"):
            lib.linalg.ldl_factor(lib.tensor([[0.0, 0.0], [0.0, 1.0]]))
        with pytest.raises(RuntimeError, match="ldl_factor_ex: Unknown error code: 1"):
            lib.linalg.ldl_factor_ex(lib.tensor([[0.0, 0.0], [0.0, 1.0]]), check_errors=True)
    raises_same(lambda lib: lib.linalg.ldl_factor(lib.zeros(3)))
    raises_same(lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 4)))
    raises_same(lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 3, dtype=lib.long)))
    raises_same(lambda lib: lib.linalg.ldl_factor(lib.zeros(3, 3, dtype=lib.float16)))
    raises_same(lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)),
                                                 lib.zeros(2, 2)))
    raises_same(lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)),
                                                 lib.zeros(3, 2, dtype=lib.float64)))
    raises_same(lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)),
                                                 lib.zeros(3)))
    same(lambda lib: lib.linalg.ldl_solve(lib.linalg.ldl_factor(lib.eye(3))[0],
                                          lib.linalg.ldl_factor(lib.eye(3))[1].long(),
                                          lib.ones(3, 2)))


def test_ldl_is_not_differentiable_as_torch():
    A = _sym(np.random.default_rng(6), 3, "real")

    def nodes(lib):
        x = lib.tensor(A, requires_grad=True)
        LD, piv = lib.linalg.ldl_factor(x)
        X = lib.linalg.ldl_solve(LD.detach(), piv, lib.ones(3, 1, dtype=lib.float64,
                                                             requires_grad=True))
        return type(LD.grad_fn).__name__, type(X.grad_fn).__name__, piv.requires_grad
    same(nodes)
    raises_same(lambda lib: lib.linalg.ldl_factor(lib.tensor(A, requires_grad=True))[0].sum()
                .backward())
    raises_same(lambda lib: lib.linalg.ldl_solve(
        *lib.linalg.ldl_factor(lib.tensor(A)),
        lib.ones(3, 1, dtype=lib.float64, requires_grad=True)).sum().backward())
