"""linalg.vector_norm, the one vector-norm primitive (``_ops/norms.py``) that torch.norm,
Tensor.norm and linalg.norm reach too, against torch 2.13: values, dtypes, gradients, double
backward, forward AD, and the edge cases where the two declarations it replaced differed
(empty ``dim``, order 0, zero norms, half precision, empty inputs, ``dtype=``)."""

import math

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._ops import registry

ORDS = [2, 0, 1, math.inf, -math.inf, 3, 1.5, 0.5, -1]


def _x(rng, shape, complex_=False):
    x = rng.standard_normal(shape)
    x[0] = 0.0  # a zero row: zero norms, 0/0 in the gradients
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True).copy()  # force: torch's gradgrad may be a ZeroTensor
    return None if t is None else t.detach().numpy().copy()


def _close(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, equal_nan=True)


def _norm_and_grads(m, xn, ord, dim, keepdim, fn):
    x = m.tensor(xn, requires_grad=True)
    y = fn(m)(x, ord, dim, keepdim)
    g = m.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(y.shape))
    (gx,) = m.autograd.grad(y, x, g, create_graph=True, allow_unused=True)
    gg = None
    if gx is not None and gx.requires_grad:
        (gg,) = m.autograd.grad((gx * gx.conj()).real.sum(), x, allow_unused=True)
    return type(y.grad_fn).__name__, _np(y), _np(gx), _np(gg)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("dim,keepdim", [(None, False), ((), False), ([], True), (1, False),
                                         ((1, 0), False), ((0,), True), (-1, True)])
@pytest.mark.parametrize("fn", [lambda m: m.linalg.vector_norm, lambda m: m.norm,
                                lambda m: m.Tensor.norm], ids=["vector_norm", "norm", "method"])
def test_values_and_gradients_match_torch(fn, dim, keepdim, complex_):
    rng = np.random.default_rng(0)
    xn = _x(rng, (3, 4), complex_)
    for ord in ORDS:
        want = _norm_and_grads(torch, xn, ord, dim, keepdim, fn)
        got = _norm_and_grads(ndgrad, xn, ord, dim, keepdim, fn)
        assert got[0] == want[0] == "LinalgVectorNormBackward0"
        for a, b in zip(got[1:], want[1:]):
            _close(a, b)  # the 0-norm has no gradient at all; zero norms give NaN gradgrads


def test_empty_dim_reduces_everything_and_is_saved_as_given():
    x = ndgrad.tensor([[3.0, -4.0], [0.0, 12.0]], requires_grad=True)
    xt = torch.tensor([[3.0, -4.0], [0.0, 12.0]], requires_grad=True)
    for dim in (None, (), (0, 1)):
        y, yt = ndgrad.linalg.vector_norm(x, 2, dim), torch.linalg.vector_norm(xt, 2, dim)
        assert y.item() == yt.item() == 13.0
        assert y.grad_fn._saved_dim == yt.grad_fn._saved_dim


def test_order_zero_gives_no_gradient():
    x = ndgrad.tensor([1.0, 0.0, -2.0], requires_grad=True)
    ndgrad.linalg.vector_norm(x, 0).backward()
    xt = torch.tensor([1.0, 0.0, -2.0], requires_grad=True)
    torch.linalg.vector_norm(xt, 0).backward()
    assert x.grad is None and xt.grad is None


@pytest.mark.parametrize("complex_", [False, True])
def test_forward_ad_matches_torch(complex_):
    rng = np.random.default_rng(1)
    for shape, dims in (((3, 4), [None, (1,), (), (1, 0)]), ((), [None])):
        xn = _x(rng, shape, complex_) if shape else np.array(2.5 + (0.5j if complex_ else 0))
        tn = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if complex_ else 0)
        for ord in ORDS:
            for dim in dims:
                got = []
                for m in (torch, ndgrad):
                    fa = m.autograd.forward_ad
                    with fa.dual_level():
                        d = fa.make_dual(m.tensor(xn), m.tensor(tn))
                        p, t = fa.unpack_dual(m.linalg.vector_norm(d, ord, dim, True))
                        got.append((_np(p), _np(t)))
                for a, b in zip(*got):
                    _close(a, b)  # zeros for the 0-norm, NaN where torch has NaN


def test_half_precision_accumulates_in_float32():
    # 300^2 + 300^2 + 400^2 overflows float16; torch sums in float32 and rounds once
    for fn in (lambda m: m.linalg.vector_norm, lambda m: m.norm):
        for ord in (2, 3, 0.5):
            y = fn(ndgrad)(ndgrad.tensor([300.0, 300.0, -400.0], dtype=ndgrad.float16), ord)
            yt = fn(torch)(torch.tensor([300.0, 300.0, -400.0], dtype=torch.float16), ord)
            assert y.dtype == ndgrad.float16 and y.item() == yt.item()


def _error(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the class is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda m: m.linalg.vector_norm(m.zeros(2, 0), -1, (0, 1)),
    lambda m: m.linalg.vector_norm(m.zeros(2, 0), math.inf, -1),
    lambda m: m.linalg.vector_norm(m.zeros(0, 3), -0.5, []),
    lambda m: m.norm(m.zeros(0, 3), math.inf),
    lambda m: m.norm(m.zeros(0, 3), -math.inf, 1),  # reduces a non-empty dim: no error
    lambda m: m.norm(m.ones(3), dtype=m.int64),
    lambda m: m.norm(m.ones(3), dtype=m.complex128),
    lambda m: m.ones(3, dtype=m.complex128).norm(dtype=m.float64),
    lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.complex128), dtype=m.int64),
    lambda m: m.linalg.vector_norm(m.ones(2, 3, 4), 2, (0, 1, 1)),
])
def test_errors_match_torch(case):
    assert _error(ndgrad, case) == _error(torch, case)


def test_one_vector_norm_primitive():
    ops = [op for op in registry.declared_ops() if op.name == "linalg_vector_norm"]
    assert [op.module for op in ops] == ["ndgrad._ops.norms"]
    # torch has no top-level or method vector_norm; only linalg.vector_norm
    assert not hasattr(ndgrad, "vector_norm") and not hasattr(ndgrad.Tensor, "vector_norm")
    assert not hasattr(torch, "vector_norm") and not hasattr(torch.Tensor, "vector_norm")
