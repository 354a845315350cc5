"""Activation checkpointing, differential against torch 2.13: same gradients as without
checkpointing and as torch, RNG replay, grad_fn names, warnings and errors, memory release."""

import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck

import ndgrad
import ndgrad.utils.checkpoint as nck

RNG = np.random.default_rng(3)
XD = RNG.standard_normal((4, 5)).astype(np.float32)
WD = (RNG.standard_normal((5, 5)) / 2).astype(np.float32)
LIBS = ((torch, tck), (ndgrad, nck))


def _leaves(lib):
    return (lib.tensor(XD, requires_grad=True), lib.tensor(WD, requires_grad=True))


def _assert_libs_close(run, rtol=1e-5, atol=1e-5):
    """``run(lib, ck)`` returns a tuple of arrays; ndgrad's must match torch's."""
    res = {lib: run(lib, ck) for lib, ck in LIBS}
    assert len(res[ndgrad]) == len(res[torch])
    for a, b in zip(res[ndgrad], res[torch]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _block(lib, w, calls=None):
    def f(x):
        if calls is not None:
            calls.append(1)
        h = (x @ w).tanh()
        noise = lib.rand(4, 5)  # replayed exactly when preserve_rng_state=True
        return (h * noise).exp().sum(1)
    return f


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_plain_and_torch(use_reentrant):
    res = {}
    for lib, ck in LIBS:
        x, w = _leaves(lib)
        lib.manual_seed(0)
        _block(lib, w)(x).sum().backward()
        plain = (x.grad.numpy().copy(), w.grad.numpy().copy())
        x.grad = w.grad = None
        calls = []
        lib.manual_seed(0)
        out = ck.checkpoint(_block(lib, w, calls), x, use_reentrant=use_reentrant)
        name = out.grad_fn.name()
        out.sum().backward()
        res[lib] = (plain, (x.grad.numpy().copy(), w.grad.numpy().copy()), len(calls), name)
        np.testing.assert_array_equal(res[lib][1][0], plain[0])
        np.testing.assert_array_equal(res[lib][1][1], plain[1])
    for k in range(2):
        np.testing.assert_allclose(res[ndgrad][1][k], res[torch][1][k], rtol=1e-5, atol=1e-6)
    assert res[ndgrad][2] == res[torch][2] == 2  # forward once, recomputed once
    assert res[ndgrad][3] == res[torch][3] == \
        ("CheckpointFunctionBackward" if use_reentrant else "SumBackward1")


def test_without_rng_preservation_noise_differs():
    for lib, ck in LIBS:
        x, w = _leaves(lib)
        lib.manual_seed(0)
        _block(lib, w)(x).sum().backward()
        plain = x.grad.numpy().copy()
        x.grad = None
        lib.manual_seed(0)
        ck.checkpoint(_block(lib, w), x, use_reentrant=False,
                      preserve_rng_state=False).sum().backward()
        assert not np.allclose(x.grad.numpy(), plain)


def test_autograd_grad_retain_graph_and_inputs_without_grad():
    def run(lib, ck):
        x, w = _leaves(lib)
        c = lib.tensor(XD)  # no grad
        out = ck.checkpoint(lambda a, b: (a @ w + b).sin(), x, c, use_reentrant=False)
        g1, = lib.autograd.grad(out.sum(), x, retain_graph=True)
        g2, gw = lib.autograd.grad(out.sum(), (x, w))
        np.testing.assert_array_equal(g1.numpy(), g2.numpy())
        return g1.numpy().copy(), gw.numpy().copy()
    _assert_libs_close(run, atol=1e-6)


def test_kwargs_and_multiple_outputs():
    def run(lib, ck):
        x, w = _leaves(lib)

        def f(a, scale=1.0):
            h = a @ w
            return h.tanh() * scale, h.exp()
        u, v = ck.checkpoint(f, x, scale=3.0, use_reentrant=False)
        (u.sum() + v.sum()).backward()
        return x.grad.numpy().copy(), w.grad.numpy().copy()
    _assert_libs_close(run)


def test_checkpoint_sequential_matches_torch():
    def run(lib, ck):
        x, w = _leaves(lib)
        fns = [lambda t: t @ w, lambda t: t.tanh(), lambda t: t * 2, lambda t: t.sin(),
               lambda t: t @ w, lambda t: t.exp()]
        out = ck.checkpoint_sequential(fns, 3, x, use_reentrant=False)
        out.sum().backward()
        return out.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()
    _assert_libs_close(run)


def test_missing_use_reentrant_warns_like_torch():
    msgs = {}
    for lib, ck in LIBS:
        x, w = _leaves(lib)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = ck.checkpoint(lambda t: t.exp(), x)
        msgs[lib] = [str(r.message) for r in rec if "use_reentrant" in str(r.message)]
        assert out.grad_fn.name() == "CheckpointFunctionBackward"  # torch's default
    assert msgs[ndgrad] == msgs[torch] and len(msgs[ndgrad]) == 1


def test_recomputed_metadata_mismatch_error_matches_torch():
    msgs = {}
    for lib, ck in LIBS:
        x = lib.ones(2, 3, requires_grad=True)
        calls = []

        def f(t):
            calls.append(1)
            return (t[:, :2] if len(calls) > 1 else t).exp()
        out = ck.checkpoint(f, x, use_reentrant=False)
        with pytest.raises(ck.CheckpointError) as e:
            out.sum().backward()
        msgs[lib] = str(e.value).split("\n.")[0]
        assert isinstance(e.value, RuntimeError)
    assert msgs[ndgrad] == msgs[torch]


def _tracked_block():
    """ndgrad input x, f(t) = (t @ w).sin().exp(), and weak references to the data of every
    ``t @ w`` f computes (in order), to see which intermediates stay alive."""
    x, w = _leaves(ndgrad)
    refs = []

    def f(t):
        h = t @ w
        refs.append(weakref.ref(h._data))
        return h.sin().exp()
    return x, f, refs


def test_intermediates_freed_in_forward():
    x, f, refs = _tracked_block()
    keep = f(x)  # without checkpointing sin saves h
    gc.collect()
    assert refs[0]() is not None
    out = nck.checkpoint(f, x, use_reentrant=False)
    gc.collect()
    assert refs[1]() is None
    out.sum().backward()
    del keep


def test_checkpoint_sequential_module_with_dropout_matches_torch():
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((6, 4)).astype(np.float32)
    w2 = rng.standard_normal((3, 6)).astype(np.float32)
    xd = rng.standard_normal((5, 4)).astype(np.float32)
    def run(lib, ck):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Dropout(0.5), nn.Linear(6, 3))
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1))
            m[3].weight.copy_(lib.tensor(w2))
            m[0].bias.zero_()
            m[3].bias.zero_()
        x = lib.tensor(xd, requires_grad=True)
        lib.manual_seed(0)  # same dropout mask in both libraries, and again on recompute
        out = ck.checkpoint_sequential(m, 2, x, use_reentrant=False)
        out.sum().backward()
        return (out.detach().numpy().copy(), x.grad.numpy().copy(),
                m[0].weight.grad.numpy().copy())
    _assert_libs_close(run)


def test_double_backward_through_non_reentrant_checkpoint_matches_torch():
    def run(lib, ck):
        x = lib.tensor(np.array([0.3, -0.7, 1.1], dtype=np.float32), requires_grad=True)
        w = lib.tensor(np.array([0.5, 2.0, -1.0], dtype=np.float32), requires_grad=True)
        y = ck.checkpoint(lambda t: (t * w).sin().exp(), x, use_reentrant=False)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gx, gw = lib.autograd.grad(g.sum(), (x, w))
        return g.detach().numpy().copy(), gx.numpy().copy(), gw.numpy().copy()
    _assert_libs_close(run, atol=1e-6)


def test_recomputed_values_released_after_use_even_with_retain_graph():
    x, f, refs = _tracked_block()
    out = nck.checkpoint(f, x, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    g1 = x.grad.numpy().copy()
    gc.collect()
    assert len(refs) == 2 and refs[1]() is None  # the recomputed h is gone
    x.grad = None
    out.sum().backward()  # recomputes again
    np.testing.assert_array_equal(x.grad.numpy(), g1)
    assert len(refs) == 3
