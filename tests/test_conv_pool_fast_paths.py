"""The fast kernels of ndgrad/_ops/conv_pool.py against torch 2.13: unit-stride convolutions
in the batch-first and batch-innermost layouts (forward, input and weight gradients), tiling
max pooling (ties, NaN, signed zeros, cropped remainders) and the disjoint max-pool backward.
Each test asserts that the fast path it is about was taken, so a comparison cannot pass on
the general kernels alone."""

import itertools

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._ops import conv_pool


def _pair(lib, arrays, grads):
    return [lib.tensor(a.copy(), requires_grad=g) for a, g in zip(arrays, grads)]


def _conv_both(x, w, b, kw, grads=(True, True, True), gy=None, rtol=1e-5, atol=1e-5):
    """convolution in both libraries; outputs and gradients compared (NaN where torch's)."""
    res = []
    for lib in (torch, ndgrad):
        tx, tw, tb = _pair(lib, (x, w, b), grads)
        y = lib.convolution(tx, tw, tb, **kw)
        y.backward(lib.tensor(gy))
        res.append([y.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None
                                           for t in (tx, tw, tb)])
    for a, b_ in zip(*res):
        if a is None:
            assert b_ is None
            continue
        assert b_.shape == a.shape and b_.dtype == a.dtype
        np.testing.assert_allclose(b_, a, rtol=rtol, atol=atol)


@pytest.fixture
def taken(monkeypatch):
    """Records which fast paths ran (by function name): the convolution forward's
    _conv_batch_major / _conv_batch_last, the backward's _conv_grads_batch_last /
    _conv_weight_grad_batch_major, and max pooling's _tiling_planes."""
    seen = set()

    def record(name, fn, hit=lambda result: True):
        def wrapper(*args):
            result = fn(*args)
            if hit(result):
                seen.add(name)
            return result
        monkeypatch.setattr(conv_pool, name, wrapper)

    record("_conv_batch_major", conv_pool._conv_batch_major)
    record("_conv_batch_last", conv_pool._conv_batch_last)
    record("_conv_grads_batch_last", conv_pool._conv_grads_batch_last)
    record("_conv_weight_grad_batch_major", conv_pool._conv_weight_grad_batch_major)
    record("_tiling_planes", conv_pool._tiling_planes, lambda result: result is not None)
    return seen


CONV_SHAPES = {1: ((3, 4, 20), (3,)), 2: ((3, 4, 9, 8), (3, 2)), 3: ((2, 4, 6, 7, 9), (2, 2, 3))}


@pytest.mark.parametrize("nd,padding,dilation,groups,transposed", [
    c for c in itertools.product((1, 2, 3), (0, 1), (1, 2), (1, 2), (False, True))
])
def test_unit_stride_convolution_matches_torch(nd, padding, dilation, groups, transposed,
                                               taken):
    rng = np.random.default_rng(100 * nd + 10 * padding + 4 * dilation + 2 * groups
                                + transposed)
    xs, ks = CONV_SHAPES[nd]
    c, o = xs[1], 6
    wshape = ((c, o // groups) if transposed else (o, c // groups)) + ks
    x = rng.standard_normal(xs)
    w = rng.standard_normal(wshape)
    b = rng.standard_normal(o)
    kw = dict(stride=[1] * nd, padding=[padding] * nd, dilation=[dilation] * nd,
              transposed=transposed, output_padding=[0] * nd, groups=groups)
    y = torch.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(b), **kw)
    gy = rng.standard_normal(tuple(y.shape))
    _conv_both(x, w, b, kw, gy=gy, rtol=1e-9, atol=1e-9)
    if not transposed:
        assert {"_conv_batch_last", "_conv_grads_batch_last"} <= taken
    else:   # the input gradient of a transposed convolution is a plain one
        assert taken & {"_conv_batch_last", "_conv_batch_major"}


@pytest.mark.parametrize("nd,padding,dilation,groups", [
    c for c in itertools.product((1, 2, 3), (0, 2), (1, 2), (1, 2))
])
def test_batch_first_convolution_matches_torch(nd, padding, dilation, groups, taken):
    # C * K <= O: the forward, and the weight gradient when the input needs none, run batch
    # first
    rng = np.random.default_rng(50 * nd + 10 * padding + 3 * dilation + groups)
    ks = (3, (2, 3), (2, 1, 2))[nd - 1]
    ks = (ks,) if nd == 1 else ks
    xs = (3, 2) + (10, 9, 8)[:nd]
    w = rng.standard_normal((12, 2 // groups) + ks)
    x = rng.standard_normal(xs)
    b = rng.standard_normal(12)
    kw = dict(stride=[1] * nd, padding=[padding] * nd, dilation=[dilation] * nd,
              transposed=False, output_padding=[0] * nd, groups=groups)
    y = torch.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(b), **kw)
    for grads in ((False, True, True), (True, True, False)):
        gy = rng.standard_normal(tuple(y.shape))
        _conv_both(x, w, b, kw, grads, gy, rtol=1e-9, atol=1e-9)
    assert {"_conv_batch_major", "_conv_weight_grad_batch_major"} <= taken


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cnn_convolutions_match_torch(dtype, taken):
    # the benchmark's shapes: the first layer's input needs no gradient
    rng = np.random.default_rng(7)
    kw = dict(stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False,
              output_padding=[0, 0], groups=1)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for xs, ws, grads in (((8, 1, 28, 28), (16, 1, 3, 3), (False, True, True)),
                          ((8, 16, 13, 13), (32, 16, 3, 3), (True, True, True)),
                          ((8, 16, 13, 13), (32, 16, 3, 3), (True, False, False)),
                          ((8, 16, 13, 13), (32, 16, 3, 3), (False, True, False))):
        x = rng.standard_normal(xs).astype(dtype)
        w = rng.standard_normal(ws).astype(dtype)
        b = rng.standard_normal(ws[0]).astype(dtype)
        gy = rng.standard_normal((xs[0], ws[0], xs[2] - 2, xs[3] - 2)).astype(dtype)
        _conv_both(x, w, b, kw, grads, gy, rtol=tol, atol=tol)
    assert {"_conv_batch_major", "_conv_batch_last", "_conv_grads_batch_last",
            "_conv_weight_grad_batch_major"} <= taken


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_transposed_convolution_with_output_padding_and_dilation(nd):
    # output_padding leaves the plain convolution of the gradient longer than the input:
    # the input gradient has the input's shape and torch's values
    rng = np.random.default_rng(nd)
    xs = (2, 4) + (5, 6, 4)[:nd]
    w = rng.standard_normal((4, 3) + (3,) * nd)
    x = rng.standard_normal(xs)
    b = rng.standard_normal(3)
    for stride in (1, 2):
        kw = dict(stride=[stride] * nd, padding=[1] * nd, dilation=[2] * nd,
                  transposed=True, output_padding=[1] * nd, groups=1)
        y = torch.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(b), **kw)
        _conv_both(x, w, b, kw, gy=rng.standard_normal(tuple(y.shape)), rtol=1e-9, atol=1e-9)


def test_non_finite_values_take_torchs_values(taken):
    # no cell outside the output may multiply an inf weight or input by zero (NaN where
    # torch has none)
    rng = np.random.default_rng(3)
    kw = dict(stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False,
              output_padding=[0, 0], groups=1)
    x = rng.standard_normal((2, 3, 6, 7))
    w = rng.standard_normal((4, 3, 3, 3))
    b = rng.standard_normal(4)
    gy = rng.standard_normal((2, 4, 6, 7))
    w_inf = w.copy()
    w_inf[1, 2, 0, 1] = np.inf
    _conv_both(x, w_inf, b, kw, gy=gy, rtol=1e-9, atol=1e-9)
    x_inf = x.copy()
    x_inf[0, 1, 2, 6] = -np.inf
    x_inf[1, 0, 5, 0] = np.nan
    _conv_both(x_inf, w, b, kw, gy=gy, rtol=1e-9, atol=1e-9)
    gy_inf = gy.copy()
    gy_inf[1, 3, 0, 6] = np.inf
    _conv_both(x, w, b, kw, gy=gy_inf, rtol=1e-9, atol=1e-9)
    assert "_conv_grads_batch_last" in taken


def _pool_both(x, kw, gy_seed=0):
    """max_pool{1,2,3}d with indices in both libraries: values (bitwise, sign of zero
    included), indices and the input gradient."""
    nd = x.ndim - 2
    res = []
    for lib in (torch, ndgrad):
        t = lib.tensor(x.copy(), requires_grad=True)
        fn = getattr(lib.nn.functional, f"max_pool{nd}d")
        y, idx = fn(t, return_indices=True, **kw)
        gy = np.random.default_rng(gy_seed).standard_normal(tuple(y.shape)).astype(x.dtype)
        y.backward(lib.tensor(gy))
        res.append((y.detach().numpy(), idx.numpy(), t.grad.numpy()))
    (ty, ti, tg), (ny, ni, ng) = res
    np.testing.assert_array_equal(ny, ty)
    np.testing.assert_array_equal(np.signbit(ny), np.signbit(ty))
    np.testing.assert_array_equal(ni, ti)
    np.testing.assert_array_equal(ng, tg)


@pytest.mark.parametrize("shape,kw", [
    ((4, 3, 8, 10), dict(kernel_size=2)),
    ((4, 3, 11, 11), dict(kernel_size=2)),             # the last row and column belong nowhere
    ((2, 3, 9, 12), dict(kernel_size=3)),
    ((2, 3, 8, 9), dict(kernel_size=(2, 3))),
    ((2, 3, 8, 8), dict(kernel_size=2, ceil_mode=True)),
    ((2, 3, 4, 6, 8), dict(kernel_size=2)),
    ((2, 3, 12), dict(kernel_size=3)),
])
def test_tiling_max_pool_ties_like_torch(shape, kw, taken):
    # values from {0, 1, 2}: most windows hold ties, and the first maximum in scan order
    # wins (value, index and gradient)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 3, shape).astype(np.float32)
    _pool_both(x, kw)
    _pool_both(rng.standard_normal(shape), kw, gy_seed=1)
    assert "_tiling_planes" in taken


def test_tiling_max_pool_nan_and_signed_zeros_like_torch(taken):
    x = np.zeros((1, 2, 4, 6), np.float32)
    x[0, 0, 0, :4] = [-0.0, 0.0, np.nan, 1.0]
    x[0, 0, 1, :4] = [0.0, -0.0, 5.0, np.nan]
    x[0, 0, 2, :2] = [np.nan, np.nan]
    x[0, 1] = np.where(np.arange(24).reshape(4, 6) % 3 == 0, -0.0, 0.0)
    x[0, 1, 3, 5] = -np.inf
    _pool_both(x, dict(kernel_size=2))
    _pool_both(np.full((1, 1, 4, 4), -np.inf, np.float32), dict(kernel_size=2))
    assert "_tiling_planes" in taken


def test_disjoint_max_pool_backward_like_torch(taken):
    # non-tiling but disjoint windows (stride > kernel, padding): the gradient goes to
    # torch's index
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2, (3, 2, 9, 10)).astype(np.float64)
    for kw in (dict(kernel_size=2, stride=3), dict(kernel_size=3, stride=3, padding=1),
               dict(kernel_size=2, stride=2, padding=1)):
        _pool_both(x, kw)
    assert "_tiling_planes" not in taken


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_of_large_tensors_like_torch(dtype):
    # relu's kernel takes arrays of 8192 elements or more as rows against a row of zeros
    rng = np.random.default_rng(5)
    for shape in ((32, 16, 26, 26), (3, 4099), (8192,)):
        x = rng.standard_normal(shape).astype(dtype)
        flat = x.reshape(-1)
        flat[::7] = np.nan
        flat[::11] = -np.inf
        flat[::13] = np.inf
        res = []
        for lib in (torch, ndgrad):
            t = lib.tensor(x.copy(), requires_grad=True)
            y = lib.relu(t)
            y.backward(lib.ones(shape, dtype=y.dtype))
            res.append((y.detach().numpy(), t.grad.numpy()))
        np.testing.assert_array_equal(res[1][0], res[0][0])
        np.testing.assert_array_equal(res[1][1], res[0][1])
        # a non-contiguous input and the same values taken in small pieces agree bit for bit
        strided = ndgrad.relu(ndgrad.tensor(x)[..., ::2]).numpy()
        pieces = np.concatenate([ndgrad.relu(ndgrad.tensor(p)).numpy()
                                 for p in np.array_split(x[..., ::2].reshape(-1), 64)])
        np.testing.assert_array_equal(strided.reshape(-1).view(np.uint8), pieces.view(np.uint8))
