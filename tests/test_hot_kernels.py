"""Fast forms of hot kernels (issue 26's real-model profiles) give torch's numbers bitwise:
each is compared with torch 2.13 over ordinary values and the special ones (zeros of both
signs, infinities, NaN, subnormals, huge and tiny magnitudes)."""

import numpy as np
import pytest
import torch

import ndgrad


def _values(dtype, n=20000, seed=0):
    rng = np.random.RandomState(seed)
    fi = np.finfo(dtype)
    x = np.concatenate([
        rng.randn(n) * 3,
        rng.randn(n) * 1e-20,
        rng.randn(200) * float(fi.max) ** 0.5,
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.tiny), -float(fi.tiny),
                  float(fi.smallest_subnormal), float(fi.max), -float(fi.max), 1.0, -1.0]),
    ])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("e", [3.0, 3, -2.0, -2, 2.0, 2])
def test_pow_scalar_matches_torch_bitwise(dtype, e):
    """The exponents torch's CPU kernel multiplies for (minGPT's tanh GELU takes x ** 3)."""
    x = _values(dtype)
    want = torch.pow(torch.tensor(x), e).numpy()
    got = ndgrad.pow(ndgrad.tensor(x), e).numpy()
    np.testing.assert_array_equal(got, want)
    # 0-d too
    w0 = torch.pow(torch.tensor(x[3]), e).numpy()
    np.testing.assert_array_equal(ndgrad.pow(ndgrad.tensor(x[3]), e).numpy(), w0)


@pytest.mark.parametrize("e", [3.0, 3])
def test_pow_scalar_backward_matches_torch(e):
    x = _values(np.float32)[:20000]
    x = x[x != 0]
    g = np.random.RandomState(1).randn(x.size).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    torch.pow(tx, e).backward(torch.tensor(g))
    nx = ndgrad.tensor(x, requires_grad=True)
    ndgrad.pow(nx, e).backward(ndgrad.tensor(g))
    np.testing.assert_array_equal(nx.grad.numpy(), tx.grad.numpy())
