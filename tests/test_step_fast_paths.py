"""The fast paths a small training step takes give torch's bits and behaviour: eager relu's
backward (a bit mask instead of a select), the engine's short path for a backward whose root
leads only to leaves (a compiled region over a model's parameters, one op on leaves), and
SGD's plain update ``p.add_(g, alpha=-lr)``.
"""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._ops.pointwise import _threshold_bw_fwd
from ndgrad.autograd import engine


def _bytes_equal(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    nan = np.isnan(a)
    assert (nan == np.isnan(b)).all(), f"{what}: NaN places differ"
    assert a[~nan].tobytes() == b[~nan].tobytes(), f"{what}: {a!r} != {b!r}"


def _with_specials(rng, shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    flat = a.reshape(-1)
    vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e30, -1e30], dtype)
    flat[rng.choice(flat.size, size=len(vals), replace=False)] = vals
    return a


# ------------------------------------------------------------------ relu backward
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7, 9), (2, 3, 4, 5)])
def test_relu_backward_bits_are_torchs(dtype, shape):
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = _with_specials(rng, shape, dtype)
        g = _with_specials(rng, shape, dtype)
        xn = ndgrad.tensor(x, requires_grad=True)
        ndgrad.relu(xn).backward(ndgrad.tensor(g))
        xt = torch.tensor(x, requires_grad=True)
        torch.relu(xt).backward(torch.tensor(g))
        _bytes_equal(xn.grad._data, xt.grad.numpy(), "relu backward")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0.0, 0.5, -2.0])
def test_threshold_backward_kernel_bits_are_torchs(dtype, threshold):
    """Including a NaN x (torch passes the gradient through), -0.0 gradients, broadcasting."""
    rng = np.random.default_rng(4)
    g = _with_specials(rng, (6, 5), dtype)
    x = _with_specials(rng, (6, 5), dtype)
    x[0, :3] = [threshold, np.nan, -0.0]
    g[0, :3] = [-0.0, -0.0, np.inf]
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x),
                                             threshold).numpy()
    _bytes_equal(_threshold_bw_fwd(g, x, threshold), want, "threshold_backward")
    xrow = x[:1]  # broadcast against the gradient
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(xrow),
                                             threshold).numpy()
    _bytes_equal(_threshold_bw_fwd(g, xrow, threshold), want, "threshold_backward broadcast")


def test_threshold_backward_other_dtypes_fall_back():
    g = np.array([1.5, -2.0, 3.0], np.float16)
    x = np.array([1.0, -1.0, np.nan], np.float16)
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x),
                                             0.0).numpy()
    _bytes_equal(_threshold_bw_fwd(g, x, 0.0), want, "float16 threshold_backward")


# ------------------------------------------------------------------ engine short path
def _pair(lib, seed):
    rng = np.random.default_rng(seed)
    a = lib.tensor(rng.standard_normal(5), requires_grad=True)
    b = lib.tensor(rng.standard_normal(5), requires_grad=True)
    return a, b


def test_root_into_leaves_accumulates_like_torch(monkeypatch):
    """dot(a, b): one node whose edges are two hook-free leaves (the engine's short path)."""
    calls = []
    short = engine._run_into_leaves
    monkeypatch.setattr(engine, "_run_into_leaves", lambda *a: (calls.append(1), short(*a)))
    res = []
    for lib in (ndgrad, torch):
        a, b = _pair(lib, 0)
        out = lib.dot(a, b)
        out.backward(retain_graph=True)
        first = (a.grad.numpy().copy(), b.grad.numpy().copy())
        out.backward()  # accumulates into the existing .grad
        res.append((first, (a.grad.numpy(), b.grad.numpy())))
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            out.backward()
    assert len(calls) == 3  # the third, raising, backward took the short path too
    (f_n, s_n), (f_t, s_t) = res
    for x, y in zip(f_n + s_n, f_t + s_t):
        np.testing.assert_array_equal(x, y)


def test_root_into_same_leaf_twice_and_hooked_leaves():
    """A leaf reached twice, a leaf with a tensor hook, a post-accumulate hook: the general
    walk, with torch's values and hook calls."""
    for lib in (ndgrad, torch):
        a, b = _pair(lib, 1)
        lib.dot(a, a).backward()
        np.testing.assert_allclose(a.grad.numpy(), 2 * a.detach().numpy(), rtol=0, atol=0)
    got = {}
    for lib in (ndgrad, torch):
        a, b = _pair(lib, 2)
        seen = []
        a.register_hook(lambda g: g * 3)
        b.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.numpy().copy()))
        lib.dot(a, b).backward()
        got[lib] = (a.grad.numpy(), b.grad.numpy(), seen)
    (an, bn, sn), (at, bt, st) = got[ndgrad], got[torch]
    np.testing.assert_array_equal(an, at)
    np.testing.assert_array_equal(bn, bt)
    assert len(sn) == len(st) == 1
    np.testing.assert_array_equal(sn[0], st[0])


def test_compiled_step_gradients_match_eager_through_short_path():
    nn = ndgrad.nn
    grads = []
    for compiled in (False, True):
        ndgrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
        x = ndgrad.randn(4, 8)
        y = ndgrad.tensor([0, 2, 1, 1])

        def loss_fn(x, y):
            return nn.functional.cross_entropy(model(x), y)
        fn = ndgrad.compile(loss_fn) if compiled else loss_fn
        for _ in range(3):  # the first call traces; the later ones run the region
            fn(x, y).backward()
        grads.append([p.grad._data.copy() for p in model.parameters()])
    for e, c in zip(*grads):
        assert e.tobytes() == c.tobytes()
