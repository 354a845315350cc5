"""Forward AD with constants made dual with zero tangents (``make_dual(c, zeros_like(c))``):
the tangents are torch's (zero tangents stay tensors, a write to one makes it flow, inf times
a zero tangent is NaN), and reverse-over-forward sees torch's graph. Values against torch 2.13.
"""

import numpy as np
import pytest
import torch

import ndgrad


def _chain(lib, x, v, c1, c2, write=None):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        y = fw.make_dual(x, v)
        za = lib.zeros_like(c1)
        a = fw.make_dual(c1, za)
        b = fw.make_dual(c2, lib.zeros_like(c2))
        outs = []
        for i in range(4):
            if write is not None and i == 2:
                za.add_(write)  # the dual constant's tangent is no longer zero
            y = (y.sin() * a).tanh() + b
            outs.append(fw.unpack_dual(y).tangent.clone())
        ta = fw.unpack_dual(a.exp() * 2).tangent
        tab = fw.unpack_dual(a * b).tangent
        return outs, ta, tab


def _inputs(lib, seed):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(7), rng.standard_normal(7), rng.uniform(0.5, 2, 7),
            rng.standard_normal(7)]
    return [lib.tensor(a.astype(np.float32)) for a in arrs]


@pytest.mark.parametrize("write", [None, 0.5])
def test_dual_constants_chain_matches_torch(write):
    outs, ta, tab = _chain(ndgrad, *_inputs(ndgrad, 0), write=write)
    touts, tta, ttab = _chain(torch, *_inputs(torch, 0), write=write)
    for a, b in zip(outs, touts):
        np.testing.assert_allclose(a._data, b.numpy(), rtol=1e-5, atol=1e-6)
    # every input tangent zero: the outputs carry zero tangents, as in torch (not None)
    assert ta is not None and tab is not None
    np.testing.assert_allclose(ta._data, tta.numpy(), rtol=1e-6, atol=0)
    np.testing.assert_allclose(tab._data, ttab.numpy(), rtol=1e-6, atol=0)
    if write is None:
        assert not ta._data.any() and not tab._data.any()


def test_zero_tangent_times_an_infinite_primal_is_nan_as_torch():
    """A zero tangent is an ordinary tangent: its part ``inf * 0`` makes the output tangent NaN
    exactly where torch's does (no zero-skipping shortcut changes the corners)."""
    res = []
    for lib in (ndgrad, torch):
        fw = lib.autograd.forward_ad
        x = lib.tensor([float("inf"), 1.0])
        c = lib.tensor([2.0, 3.0])
        with fw.dual_level():
            t = fw.unpack_dual(fw.make_dual(x, lib.ones_like(x))
                               * fw.make_dual(c, lib.zeros_like(c))).tangent
            res.append(np.asarray(t.numpy()))
    np.testing.assert_array_equal(res[0], res[1])
    assert np.isnan(res[0][0]) and res[0][1] == 3.0


def test_reverse_over_forward_keeps_the_zero_tangent_path():
    """With a primal that requires grad the zero tangent is not dropped: the gradient of the
    tangent w.r.t. the primal is torch's (zeros, through the graph)."""
    res = []
    for lib in (ndgrad, torch):
        fw = lib.autograd.forward_ad
        x, v, c1, _ = _inputs(lib, 2)
        c1.requires_grad_(True)
        with fw.dual_level():
            y = fw.make_dual(x, v)
            a = fw.make_dual(c1, lib.zeros_like(c1))
            t = fw.unpack_dual((y * a).sin()).tangent
            (g,) = lib.autograd.grad(t.sum(), c1)
        res.append(np.asarray(g.detach().numpy() if lib is torch else g._data))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-6)
