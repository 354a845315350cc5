"""Complex tensors vs torch 2.13: views (real/imag/view_as_real/view_as_complex), conj, angle,
polar, complex, and gradients through elementwise math, reductions and matmul in torch's
conjugate-Wirtinger convention, with double backward; torch's errors."""

import warnings

import numpy as np
import pytest

import ndgrad

torch = pytest.importorskip("torch")
from _helpers import random_arrays
from test_linalg import compare

warnings.filterwarnings("ignore", category=UserWarning)

R, C = random_arrays(2)


CASES = {
    "add_broadcast": (lambda L, a, b: a + b, [C(3), C(2, 3)]),
    "sub_alpha": (lambda L, a, b: L.sub(a, b, alpha=2), [C(3), C(3)]),
    "mul": (lambda L, a, b: a * b, [C(3), C(3)]),
    "div": (lambda L, a, b: a / b, [C(3), C(3)]),
    "mul_real_complex": (lambda L, a, b: a * b, [R(3), C(3)]),
    "div_real_complex": (lambda L, a, b: a / b, [R(3), C(3)]),
    "mul_complex_scalar": (lambda L, a: a * (2 - 1j), [C(3)]),
    "real_times_complex_scalar": (lambda L, a: a * (2 - 1j), [R(3)]),
    "div_complex_scalar": (lambda L, a: a / (2 - 1j), [C(3)]),
    "pow_2": (lambda L, a: a ** 2, [C(3)]),
    "pow_complex_exponent": (lambda L, a: a ** (0.5 + 1j), [C(3)]),
    "pow_tensor": (lambda L, a, b: a ** b, [C(3), C(3)]),
    "rpow": (lambda L, a: 2 ** a, [C(3)]),
    "exp": (lambda L, a: a.exp(), [C(3)]),
    "log": (lambda L, a: a.log(), [C(3)]),
    "sqrt": (lambda L, a: a.sqrt(), [C(3)]),
    "rsqrt": (lambda L, a: a.rsqrt(), [C(3)]),
    "sin": (lambda L, a: a.sin(), [C(3)]),
    "cos": (lambda L, a: a.cos(), [C(3)]),
    "tanh": (lambda L, a: a.tanh(), [C(3)]),
    "sigmoid": (lambda L, a: a.sigmoid(), [C(3)]),
    "reciprocal": (lambda L, a: a.reciprocal(), [C(3)]),
    "neg": (lambda L, a: -a, [C(3)]),
    "log1p": (lambda L, a: a.log1p(), [C(3)]),
    "expm1": (lambda L, a: a.expm1(), [C(3)]),
    "square": (lambda L, a: a.square(), [C(3)]),
    "abs": (lambda L, a: a.abs(), [C(3)]),
    "abs_squared": (lambda L, a: a.abs() ** 2, [C(3)]),
    "sgn": (lambda L, a: a.sgn(), [C(3)]),
    "acosh": (lambda L, a: a.acosh(), [C(6)]),
    "sinc": (lambda L, a: L.sinc(a), [C(6)]),
    "asinh": (lambda L, a: a.asinh(), [C(6)]),
    "atan": (lambda L, a: a.atan(), [C(6)]),
    "sum": (lambda L, a: a.sum(), [C(2, 3)]),
    "sum_dim": (lambda L, a: a.sum(1), [C(2, 3)]),
    "mean": (lambda L, a: a.mean(), [C(2, 3)]),
    "mean_dim": (lambda L, a: a.mean(0), [C(2, 3)]),
    "prod": (lambda L, a: a.prod(), [C(3)]),
    "real_attr": (lambda L, a: a.real, [C(3)]),
    "imag_attr": (lambda L, a: a.imag, [C(3)]),
    "real_fn": (lambda L, a: L.real(a) * 2, [C(2, 3)]),
    "imag_fn": (lambda L, a: L.imag(a) * 2, [C(2, 3)]),
    "conj": (lambda L, a: a.conj() * 1, [C(3)]),
    "conj_physical": (lambda L, a: L.conj_physical(a), [C(3)]),
    "angle": (lambda L, a: L.angle(a), [C(3)]),
    "angle_real": (lambda L, a: L.angle(a), [R(3)]),
    "view_as_real": (lambda L, a: L.view_as_real(a), [C(3)]),
    "view_as_complex": (lambda L, a: L.view_as_complex(a), [R(3, 2)]),
    "view_roundtrip": (lambda L, a: L.view_as_complex(L.view_as_real(a) * 2), [C(3)]),
    "polar": (lambda L, a, b: L.polar(a, b), [np.abs(R(3)), R(3)]),
    "polar_broadcast": (lambda L, a, b: L.polar(a, b), [np.abs(R(2, 3)), R(3)]),
    "complex": (lambda L, a, b: L.complex(a, b), [R(3), R(2, 3)]),
    "matmul": (lambda L, a, b: a @ b, [C(2, 3), C(3, 2)]),
    "matmul_batched": (lambda L, a, b: a @ b, [C(2, 2, 3), C(3, 2)]),
    "real_cast_then_matmul": (lambda L, a, b: a.to(b.dtype) @ b, [R(2, 3), C(3, 2)]),
    "real_of_product": (lambda L, a, b: (a * b).real.sum(), [C(3), C(3)]),
    "abs_squared_via_conj": (lambda L, a: (a * a.conj()).real.sum(), [C(3)]),
    "to_complex64": (lambda L, a: a.to(L.complex128) * (1 + 1j), [R(3)]),
    "where": (lambda L, a, b: L.where(a.real > 0, a, b), [C(3), C(3)]),
    "expand": (lambda L, a: a.expand(2, 3) * 1, [C(3)]),
    "slicing": (lambda L, a: a[1:] * a[:-1], [C(3)]),
    "cat": (lambda L, a, b: L.cat([a, b]), [C(3), C(2)]),
    "linalg_inv": (lambda L, a: L.linalg.inv(a), [C(2, 3, 3)]),
    "linalg_solve": (lambda L, a, b: L.linalg.solve(a, b), [C(3, 3), C(3)]),
    "linalg_det_abs": (lambda L, a: L.linalg.det(a).abs(), [C(3, 3)]),
    "vector_norm": (lambda L, a: L.linalg.vector_norm(a, 3), [C(2, 3)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_torch(name):
    fn, arrays = CASES[name]
    compare(fn, arrays)


def test_complex64_values():
    a = C(2, 3).astype(np.complex64)
    compare(lambda L, x: (x * x.conj()).exp().sum(), [a], atol=1e-5, rtol=1e-4,
            gradgrad=False)


def test_torch_convention_abs_squared():
    """Conjugate Wirtinger, as torch: d|z|^2 at 1+2j is 2+4j (JAX/HIPS would give 2-4j)."""
    z = ndgrad.tensor(1 + 2j, requires_grad=True)
    (z.abs() ** 2).backward()
    assert complex(z.grad) == 2 + 4j


def test_real_imag_are_views():
    for L in (torch, ndgrad):
        z = L.tensor(np.array([1 + 2j, 3 - 1j]))
        z.real.mul_(10)
        z.imag[0] = 7
        np.testing.assert_array_equal(z.numpy(), np.array([10 + 7j, 30 - 1j]))
        r = L.view_as_real(z)
        r[1, 1] = 5
        assert complex(z[1]) == 30 + 5j
        assert L.real(L.ones(2)).dtype == L.float32


def test_inplace_through_real_view_grad():
    a = C(3)
    grads = []
    for L in (torch, ndgrad):
        x = L.tensor(a, requires_grad=True)
        y = x * 1
        y.real.mul_(3)
        (y * y.conj()).real.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_view_as_complex_non_contiguous_errors():
    for L in (torch, ndgrad):
        x = L.ones(2, 4)[:, ::2]
        with pytest.raises(RuntimeError, match="last dimension of size 2"):
            L.view_as_complex(L.ones(3, 3))
        with pytest.raises(RuntimeError, match="stride 1"):
            L.view_as_complex(x)


ERRORS = {
    "view_as_complex_size": lambda L: L.view_as_complex(L.ones(3)),
    "view_as_complex_int": lambda L: L.view_as_complex(L.ones(3, 2, dtype=L.long)),
    "view_as_real_real": lambda L: L.view_as_real(L.ones(3)),
    "complex_dtypes": lambda L: L.complex(L.ones(3), L.ones(3, dtype=L.float64)),
    "complex_int": lambda L: L.complex(L.ones(3, dtype=L.long), L.ones(3, dtype=L.long)),
    "polar_int": lambda L: L.polar(L.ones(3, dtype=L.long), L.ones(3, dtype=L.long)),
    "imag_of_real": lambda L: L.imag(L.ones(3)),
    "imag_attr_of_real": lambda L: L.ones(3).imag,
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(RuntimeError) as te:
        ERRORS[name](torch)
    with pytest.raises(RuntimeError) as ne:
        ERRORS[name](ndgrad)
    assert str(ne.value) == str(te.value)


FWD_BWD = {
    "polar": (lambda L, a, b: L.polar(a, b), [np.abs(R(3)) + 0.1, R(3)]),
    "complex": (lambda L, a, b: L.complex(a, b), [R(3), R(3)]),
    "view_as_complex": (lambda L, a: L.view_as_complex(a), [R(3, 2)]),
    "view_as_real": (lambda L, a: L.view_as_real(a), [C(3)]),
    "real_imag": (lambda L, a: L.real(a) * L.imag(a), [C(3)]),
    "conj_mul": (lambda L, a: a.conj() * a * a, [C(3)]),
    "angle": (lambda L, a: L.angle(a), [C(3)]),
    "abs_exp": (lambda L, a: a.exp().abs(), [C(3)]),
    "matmul": (lambda L, a, b: a @ b, [C(2, 3), C(3, 2)]),
    "inv": (lambda L, a: L.linalg.inv(a), [C(3, 3) + 3 * np.eye(3)]),
}


def _cplx_like(rng, a):
    v = rng.standard_normal(a.shape)
    if np.iscomplexobj(a):
        v = v + 1j * rng.standard_normal(a.shape)
    return v.astype(a.dtype)


@pytest.mark.parametrize("name", list(FWD_BWD))
def test_forward_over_backward(name):
    """Tangent of the gradient (a Hessian-vector product) equals torch's, with complex
    tangents and cotangents where the tensors are complex."""
    fn, arrays = FWD_BWD[name]
    rng = np.random.default_rng(5)
    tangents = [_cplx_like(rng, a) for a in arrays]
    results = []
    for L in (torch, ndgrad):
        F = L.autograd.forward_ad
        with F.dual_level():
            xs = [F.make_dual(L.tensor(a).requires_grad_(True), L.tensor(t))
                  for a, t in zip(arrays, tangents)]
            out = fn(L, *xs)
            v = _cplx_like(np.random.default_rng(6), F.unpack_dual(out).primal.detach().numpy())
            gs = L.autograd.grad(out, xs, L.tensor(v), create_graph=True)
            results.append([F.unpack_dual(g).tangent for g in gs])
    for a, b in zip(*results):
        if a is None or b is None:  # None is a zero tangent (the gradient is constant)
            assert (a is None or not a.detach().resolve_conj().numpy().any()) and \
                (b is None or not b.detach().numpy().any())
            continue
        np.testing.assert_allclose(b.detach().numpy(), a.detach().resolve_conj().numpy(),
                                   atol=1e-10, rtol=1e-8)
