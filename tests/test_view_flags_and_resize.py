"""Flags of views made in no_grad / inference mode, views of inference tensors, resize_
version bumps and refusals, and make_dual with a tangent that has its own tangent.
Differential against torch 2.13: the same script runs in both and the observations (values,
flags, versions, or exception class and message) must be equal."""

import pytest
import torch
import torch.autograd.forward_ad as fwAD_t

import ndgrad
import ndgrad.autograd.forward_ad as fwAD_n


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - class and message are compared
        return (type(e).__name__, str(e))


def _both(make):
    return [_outcome(lambda L=L: make(L)) for L in (torch, ndgrad)]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("rg", [True, False])
def test_view_made_without_recording_reports_its_base_requires_grad(mode, leaf, rg):
    def make(L):
        a = L.ones(2, 3, requires_grad=rg)
        base = a if leaf else a * 1
        with (L.no_grad() if mode == "no_grad" else L.inference_mode()):
            v = base.view(-1)
            w = v.view(2, 3)           # a view of the view, made in the same block
            inside = (v.requires_grad, w.requires_grad, v.is_leaf, L.is_inference(v))
        return inside, (v.requires_grad, v.is_leaf, v.grad_fn is None, v._is_view())

    t, n = _both(make)
    assert t[0] == "ok" and n == t


@pytest.mark.parametrize("rg", [True, False])
def test_view_of_an_inference_tensor_is_an_inference_tensor_not_a_view(rg):
    def make(L):
        with L.inference_mode():
            c = L.ones(1, 2, 3, requires_grad=rg)
            inside = c.view(-1)
            flags_inside = (L.is_inference(inside), inside.requires_grad, inside._is_view())
        out = c.view(-1)
        flags = (L.is_inference(out), out.requires_grad, out._is_view(), out.is_leaf,
                 out._base is None)
        c.detach().tolist()  # memory is shared: the view reads the same elements
        return flags_inside, flags, out.tolist() == c.reshape(-1).tolist()

    t, n = _both(make)
    assert t[0] == "ok" and n == t


def test_writing_a_view_of_an_inference_tensor_outside_the_mode_is_refused():
    def make(L):
        with L.inference_mode():
            c = L.ones(3)
        v = c[:2]
        try:
            v.add_(1)
        finally:
            if L is ndgrad:  # (torch writes the elements before it raises)
                assert c.tolist() == [1.0, 1.0, 1.0]

    t, n = _both(make)
    assert t[0] == "RuntimeError" and n == t


def test_resize_bumps_the_version_unless_the_shape_is_unchanged():
    def make(L):
        x = L.rand((1,))
        y = L.randn((3,))
        versions = []
        x.resize_((1, 2))
        versions.append(x._version)
        x.resize_as_(y)
        versions.append(x._version)
        x.resize_((3,))            # same shape: a no-op
        versions.append(x._version)
        x.resize_as_(y)
        versions.append(x._version)
        x.resize_((1, 3))          # same number of elements, new shape: bumps
        versions.append(x._version)
        return versions, tuple(x.shape)

    t, n = _both(make)
    assert t[0] == "ok" and n == t


def test_resize_of_a_tensor_requiring_grad():
    def make(L, inference):
        a = L.ones(2, 3, requires_grad=True)
        if inference:
            with L.inference_mode():
                c = L.ones(1, 2, 3, requires_grad=True)
                c.resize_(1, 2)
                return tuple(c.shape), c.requires_grad, L.is_inference(c)
        try:
            a.resize_(3)
        finally:
            assert tuple(a.shape) == (2, 3) and a._version == 0
    for inference in (False, True):
        t, n = _both(lambda L: make(L, inference))
        assert n == t
    assert t[0] == "ok"


def test_make_dual_with_a_tangent_that_is_itself_dual():
    results = []
    for L, fwAD in ((torch, fwAD_t), (ndgrad, fwAD_n)):
        foo, bar, baz = L.rand(2), L.rand(2), L.rand(2)
        with fwAD.dual_level():
            dual = fwAD.make_dual(foo, bar)
            outcome = _outcome(lambda: fwAD.make_dual(baz, dual))
            results.append((outcome, fwAD.unpack_dual(baz).tangent is None))
    assert results[0][0][0] == "RuntimeError"
    assert results[1] == results[0]
