"""A GradientEdge taken with get_gradient_edge as the output of grad/backward: the gradient
is made implicitly for a one-element tensor and refused otherwise, a given gradient is checked
for shape and for complex/real kind as a tensor output's is, and a real grad_output of another
dtype (an integer one too, batched or not) is accepted and cast as torch does. Differential
against torch 2.13."""

import pytest
import torch

import ndgrad


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - class and message are compared
        return (type(e).__name__, str(e))


def _both(make):
    return [_outcome(lambda L=L: make(L)) for L in (torch, ndgrad)]


def _edge(L, reduce):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    tmp = x.sin().cos()
    if reduce:
        tmp = tmp.sum()
    out = tmp.exp().clone().sin().sum()
    return x, out, L.autograd.graph.get_gradient_edge(tmp)


def _rounded(ts):
    return [[round(v, 4) for v in t.reshape(-1).tolist()] for t in ts]


@pytest.mark.parametrize("reduce", [True, False])
def test_implicit_gradient_for_an_edge_output(reduce):
    def make(L):
        x, out, edge = _edge(L, reduce)
        return _rounded(L.autograd.grad(edge, (x,)))

    t, n = _both(make)
    assert t[0] == ("ok" if reduce else "RuntimeError")
    assert n == t


@pytest.mark.parametrize("grad", ["wrong_shape", "complex", "two_steps"])
def test_given_gradient_for_an_edge_output(grad):
    def make(L):
        x, out, edge = _edge(L, True)
        (tmp_grad,) = L.autograd.grad(out, (edge,), retain_graph=True)
        g = {"wrong_shape": lambda: L.tensor([1.0, 2.0, 3.0, 4.0]),
             "complex": lambda: L.rand_like(tmp_grad, dtype=L.complex64),
             "two_steps": lambda: tmp_grad}[grad]()
        return _rounded(L.autograd.grad(edge, (x,), grad_outputs=(g,)))

    t, n = _both(make)
    assert t[0] == ("ok" if grad == "two_steps" else "RuntimeError")
    assert n == t


def test_backward_from_an_edge_after_its_tensor_is_gone():
    def make(L):
        inp = L.rand(1, requires_grad=True)
        mid = inp.clone()
        out = mid.clone()
        edge = L.autograd.graph.get_gradient_edge(out)
        L.autograd.backward(edge, retain_graph=True)
        del out
        L.autograd.backward(edge)
        return inp.grad.tolist()

    t, n = _both(make)
    assert t[0] == "ok" and n == t


@pytest.mark.parametrize("dtype", ["long", "int32", "bool", "float64"])
@pytest.mark.parametrize("batched", [False, True])
def test_real_grad_outputs_of_another_dtype(dtype, batched):
    def make(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        out = x.clone()
        dt = getattr(L, dtype)
        g = L.ones(3, 2, 2, dtype=dt) if batched else L.ones(2, 2, dtype=dt)
        (gx,) = L.autograd.grad(out, (x,), (g,), is_grads_batched=batched)
        return str(gx.dtype), gx.tolist()

    t, n = _both(make)
    assert n == t
