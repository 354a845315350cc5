"""The engine's behaviours agree: plain, observed (profiler on, anomaly mode on) and batched
(``is_grads_batched``) backward give torch's gradients over the same graphs, with
``retain_graph`` and ``create_graph`` (second-order gradients through the first)."""

import contextlib
import warnings

import numpy as np
import pytest
import torch

import ndgrad
from _diff import arr, assert_same, raises_same, to_np


def _square_fn(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    return Square


def g_broadcast(lib, x, w, b):
    return lib.tanh(x * w + b).exp().sum(0)


def g_diamond(lib, x, w, b):
    h = x.sin()
    return (h * h + h.cos() * x * w).mean(1) + b.sum()


def g_multi_output(lib, x, w, b):
    p0, p1, p2 = x.unbind(0)
    q, r = (x * w).split([1, 2], dim=0)
    return p0 * p1 + p2.relu() * w + q.sum(0) * r.prod(0) + b[0]


def g_mlp(lib, x, w, b):
    W1 = w.reshape(4, 1) * x.t()
    h = lib.tanh(x @ W1 + b.reshape(-1)[:3])
    return (h @ W1.t()).sum(0)


def g_custom_function(lib, x, w, b):
    return _square_fn(lib).apply(x * w).sum(0) + b.reshape(-1)


def g_view_inplace(lib, x, w, b):
    y = x.clone()
    y[1] = x[1] * w
    y[:, 0] += b.reshape(-1)[0]
    return y.exp().sum(0)


GRAPHS = [g_broadcast, g_diamond, g_multi_output, g_mlp, g_custom_function, g_view_inplace]


def _leaves(lib):
    return [lib.tensor(arr(1, 3, 4), requires_grad=True),
            lib.tensor(arr(2, 4), requires_grad=True),
            lib.tensor(arr(3, 1, 4), requires_grad=True)]


def _mode(lib, mode):
    if mode == "profiler":
        return lib.autograd.profiler.profile()
    if mode == "anomaly":
        return lib.autograd.detect_anomaly()
    return contextlib.nullcontext()


def _grad_run(lib, graph, mode, create_graph):
    """grad twice through one retained graph (two cotangents), and with create_graph the
    gradient of the first gradients' squared norm."""
    leaves = _leaves(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's announcement
        with _mode(lib, mode):
            out = graph(lib, *leaves)
            v1 = lib.tensor(arr(4, *out.shape))
            v2 = lib.tensor(arr(5, *out.shape))
            g1 = lib.autograd.grad(out, leaves, v1, retain_graph=True,
                                   create_graph=create_graph)
            g2 = lib.autograd.grad(out, leaves, v2, retain_graph=create_graph,
                                   create_graph=create_graph)
            result = [to_np(g1), to_np(g2)]
            if create_graph:
                s = sum((g * g).sum() for g in g1)
                result.append(to_np(lib.autograd.grad(s, leaves, allow_unused=True,
                                                      materialize_grads=True)))
    return result


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("mode", ["plain", "profiler", "anomaly"])
@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__[2:])
def test_grad_under_each_mode_matches_torch_and_plain(graph, mode, create_graph):
    ours = _grad_run(ndgrad, graph, mode, create_graph)
    assert_same(ours, _grad_run(torch, graph, mode, create_graph), rtol=1e-10, atol=1e-10)
    if mode != "plain":
        assert_same(ours, _grad_run(ndgrad, graph, "plain", create_graph), rtol=1e-12,
                    atol=1e-12)


def _backward_run(lib, graph, mode):
    """backward twice through a retained graph: .grad accumulates both."""
    leaves = _leaves(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _mode(lib, mode):
            out = graph(lib, *leaves)
            out.backward(lib.tensor(arr(4, *out.shape)), retain_graph=True)
            first = [to_np(x.grad) for x in leaves]
            out.backward(lib.tensor(arr(5, *out.shape)))
    return first, [to_np(x.grad) for x in leaves]


@pytest.mark.parametrize("mode", ["plain", "profiler", "anomaly"])
@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__[2:])
def test_backward_accumulation_under_each_mode_matches_torch(graph, mode):
    ours = _backward_run(ndgrad, graph, mode)
    assert_same(ours, _backward_run(torch, graph, mode), rtol=1e-10, atol=1e-10)


def _batched_reference(graph, B, create_graph):
    """torch, one autograd.grad per cotangent row (what is_grads_batched means)."""
    leaves = _leaves(torch)
    out = graph(torch, *leaves)
    V = torch.tensor(arr(6, B, *out.shape))
    rows = [torch.autograd.grad(out, leaves, V[b], retain_graph=True, create_graph=create_graph)
            for b in range(B)]
    grads = [torch.stack([r[i] for r in rows]) for i in range(len(leaves))]
    result = [to_np(grads)]
    if create_graph:
        s = sum((g * g).sum() for g in grads)
        result.append(to_np(torch.autograd.grad(s, leaves, allow_unused=True,
                                                materialize_grads=True)))
    return result


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__[2:])
def test_batched_grad_matches_one_grad_per_row(graph, create_graph):
    B = 3
    leaves = _leaves(ndgrad)
    out = graph(ndgrad, *leaves)
    V = ndgrad.tensor(arr(6, B, *out.shape))
    grads = ndgrad.autograd.grad(out, leaves, V, retain_graph=True, create_graph=create_graph,
                                 is_grads_batched=True)
    # the same as ndgrad's plain path row by row ...
    for b in range(B):
        row = ndgrad.autograd.grad(out, leaves, V[b], retain_graph=True)
        for g, r in zip(grads, row):
            np.testing.assert_allclose(g[b].detach().numpy(), r.numpy(), rtol=1e-12,
                                       atol=1e-12)
    # ... and as torch's
    ours = [to_np(list(grads))]
    if create_graph:
        s = sum((g * g).sum() for g in grads)
        ours.append(to_np(ndgrad.autograd.grad(s, leaves, allow_unused=True,
                                                  materialize_grads=True)))
    assert_same(ours, _batched_reference(graph, B, create_graph), rtol=1e-10, atol=1e-10)


def test_profiler_inside_backward_sees_plain_gradients():
    """A backward started before a special mode keeps its behaviour to the end; one started
    inside sees the observers (here: the profiler records the inner backward's nodes)."""
    def run(lib):
        leaves = _leaves(lib)
        out = g_diamond(lib, *leaves).sum()
        names = []

        def hook(g):
            z = lib.tensor(arr(7, 4), requires_grad=True)
            with lib.enable_grad(), lib.autograd.profiler.profile() as prof:
                inner = lib.autograd.grad((z * z).sum(), z)[0]
            names.append(any("MulBackward0" in e.name for e in prof.function_events))
            return g + inner
        leaves[1].register_hook(hook)
        out.backward()
        return [to_np([x.grad for x in leaves]), names]
    assert_same(run(ndgrad), run(torch), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", ["plain", "profiler"])
def test_tensor_hook_changing_the_size_raises_torchs_error(mode):
    def run(lib):
        leaves = _leaves(lib)
        y = leaves[1] * 2
        y.register_hook(lambda g: lib.ones(3, 4, dtype=lib.float64))
        with _mode(lib, mode):
            y.sum().backward()
    raises_same(run)
    def run_leaf(lib):
        leaves = _leaves(lib)
        leaves[1].register_hook(lambda g: lib.ones(3, 4, dtype=lib.float64))
        before = leaves[1].grad
        with pytest.raises(RuntimeError):
            (leaves[1] * 2).sum().backward()
        assert before is None and leaves[1].grad is None
        (leaves[1] * 2).sum().backward()
    raises_same(run_leaf)
