"""The compiled training step's short paths (issue 17): the compiled region's node taking
``loss.backward()`` into its leaves' ``.grad`` in one fused step, and SGD's fused update.

Each test runs the same step compiled and eagerly (and with torch where the numbers can be
bitwise equal) and compares ``.grad`` and parameters bit for bit, in the cases where the fused
path must hand over to the engine's generic steps: gradients accumulated into an existing
``.grad`` (``zero_grad(set_to_none=False)``), hooks registered between two compiled steps on a
leaf's grad accumulator, on the parameter, and post-accumulate hooks, a gradient array held
elsewhere, a parameter of another memory layout, ``retain_graph`` and a saved value changed in
place.
"""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad import _graph_core


def _mlp(seed=0):
    ndgrad.manual_seed(seed)
    nn = ndgrad.nn
    return nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))


def _batches(n, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((4, 6)).astype(np.float32), rng.integers(0, 3, 4))
            for _ in range(n)]


def _loss_fn(model):
    def loss_fn(x, y):
        return ndgrad.nn.functional.cross_entropy(model(x), y)
    return loss_fn


def _grads(model):
    return [None if p.grad is None else p.grad._data.copy() for p in model.parameters()]


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        if u is not None:
            assert u.dtype == v.dtype and u.shape == v.shape
            assert u.tobytes() == v.tobytes()


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.05, momentum=0.9, weight_decay=0.01),
                                dict(lr=0.05, momentum=0.8, nesterov=True),
                                dict(lr=0.05, momentum=0.5, dampening=0.2, maximize=True)])
def test_compiled_steps_equal_eager_steps_bitwise(set_to_none, kw):
    # Each step's .grad (stolen from the backward program, or added into the old .grad) and
    # parameters, compiled against eager, for SGD's variants.
    runs = []
    for compiled in (False, True):
        model = _mlp()
        opt = ndgrad.optim.SGD(model.parameters(), **kw)
        fn = _loss_fn(model)
        if compiled:
            fn = ndgrad.compile(fn)
        trace = []
        held = None
        for x, y in _batches(4):
            opt.zero_grad(set_to_none=set_to_none)
            fn(ndgrad.tensor(x), ndgrad.tensor(y)).backward()
            trace.append(_grads(model))
            if not set_to_none:   # added in place into the same .grad tensors, as eager
                if held is not None:
                    assert all(p.grad is g for p, g in zip(model.parameters(), held))
                held = [p.grad for p in model.parameters()]
            opt.step()
            trace.append([p._data.copy() for p in model.parameters()])
        runs.append(trace)
    for a, b in zip(*runs):
        _same(a, b)


def test_sgd_variants_on_compiled_gradients_equal_torch_bitwise():
    # Given the same gradients, every SGD variant's update is torch's bit for bit (the fused
    # small-parameter fma and the large-parameter path included).
    rng = np.random.default_rng(2)
    shapes = [(64, 64), (64,), (10, 64), (10,), (3,)]
    for kw in (dict(lr=0.01), dict(lr=0.01, momentum=0.9), dict(lr=0.01, weight_decay=0.1),
               dict(lr=0.01, momentum=0.9, nesterov=True), dict(lr=0.01, maximize=True)):
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        gs = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
        out = []
        for lib in (torch, ndgrad):
            ps = [lib.tensor(x.copy(), requires_grad=True) for x in xs]
            opt = lib.optim.SGD(ps, **kw)
            for step in gs:
                for p, g in zip(ps, step):
                    p.grad = lib.tensor(g.copy())
                opt.step()
            out.append([p.detach().numpy().copy() for p in ps])
        big = [len(s) == 2 and s[0] * s[1] > 1024 for s in shapes]
        for a, b, is_big in zip(out[0], out[1], big):
            if is_big:   # above EXACT_FMA_MAX: two roundings, within an ulp of torch
                np.testing.assert_allclose(b, a, rtol=2e-7, atol=1e-7)
            else:
                assert a.tobytes() == b.tobytes()


def test_hooks_registered_between_compiled_steps_fire():
    model = _mlp()
    cf = ndgrad.compile(_loss_fn(model))
    w = model[0].weight
    b = model[2].bias
    (x, y), = _batches(1)
    x, y = ndgrad.tensor(x), ndgrad.tensor(y)
    cf(x, y).backward()        # traced (eager)
    for p in model.parameters():
        p.grad = None
    loss = cf(x, y)
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    loss.backward()
    eager_w = w.grad._data.copy()
    eager_b = b.grad._data.copy()
    # a hook on w's grad accumulator, reached through the compiled node's edges and held
    acc, = [e[0] for e in loss.grad_fn._next if e[0].variable is w]
    seen = []
    acc.register_prehook(lambda gs: seen.append(("acc", gs[0]._data.copy())))
    b.register_post_accumulate_grad_hook(lambda p: seen.append(("post", p.grad._data.copy())))
    model[2].weight.register_hook(lambda g: g * 0)
    for p in model.parameters():
        p.grad = None
    loss = cf(x, y)
    assert acc in [e[0] for e in loss.grad_fn._next]   # held: the same node, as in torch
    loss.backward()
    assert sorted(k for k, _ in seen) == ["acc", "post"]
    got = dict(seen)
    assert got["acc"].tobytes() == eager_w.tobytes()
    assert got["post"].tobytes() == eager_b.tobytes()
    assert w.grad._data.tobytes() == eager_w.tobytes()
    assert not model[2].weight.grad._data.any()


def test_gradient_held_elsewhere_is_not_taken_as_grad():
    # The backward program hands back a view of the caller's gradient (add passes it
    # through, reshape views it): .grad must be a copy, as in eager mode.
    def f(w):
        return (w + 1).reshape(6)

    w = ndgrad.randn(2, 3, requires_grad=True)
    cf = ndgrad.compile(f)
    cf(w)
    G = ndgrad.tensor(np.arange(6, dtype=np.float32))
    for fn in (cf, f):
        w.grad = None
        fn(w).backward(G)
        assert not np.shares_memory(w.grad._data, G._data)
        np.testing.assert_array_equal(w.grad._data, np.arange(6, dtype=np.float32).reshape(2, 3))
    G._data[...] = 7
    assert w.grad._data[0, 0] == 0


def test_parameter_of_another_layout_keeps_its_strides():
    # A transposed (Fortran-ordered) leaf: eager keeps the leaf's strides for .grad.
    res = []
    for compiled in (False, True):
        ndgrad.manual_seed(3)
        w = ndgrad.randn(5, 4).t().detach().requires_grad_()
        x = ndgrad.randn(3, 4)

        def f(x, w):
            return (x @ w).tanh().sum()
        fn = ndgrad.compile(f) if compiled else f
        for _ in range(3):
            w.grad = None
            fn(x, w).backward()
        res.append((w.grad._data.strides, w.grad._data.copy()))
    assert res[0][0] == res[1][0] == w._data.strides
    assert res[0][1].tobytes() == res[1][1].tobytes()


def test_retain_graph_accumulates_and_saved_value_change_raises():
    model = _mlp()
    cf = ndgrad.compile(_loss_fn(model))
    (x, y), = _batches(1)
    x, y = ndgrad.tensor(x), ndgrad.tensor(y)
    cf(x, y)
    loss = cf(x, y)
    loss.backward(retain_graph=True)
    once = _grads(model)
    loss.backward()
    twice = _grads(model)
    for a, b in zip(once, twice):
        assert (a + a).tobytes() == b.tobytes()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    loss = cf(x, y)
    with ndgrad.no_grad():
        x.add_(1.0)            # x is read by the backward program
    before = _grads(model)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    _same(before, _grads(model))    # the failed backward changed no .grad


def test_plain_step_takes_the_gradients_without_copies(monkeypatch):
    # The usual step (.grad None, parameters C-contiguous, nothing else holding the backward
    # program's arrays) makes each array .grad itself: accumulate_grad is never needed.
    from ndgrad._compile import region
    calls = []
    monkeypatch.setattr(region, "accumulate_grad",
                        lambda *a: calls.append(a) or _graph_core.accumulate_grad(*a))
    model = _mlp()
    cf = ndgrad.compile(_loss_fn(model))
    (x, y), = _batches(1)
    x, y = ndgrad.tensor(x), ndgrad.tensor(y)
    cf(x, y).backward()             # traced
    for p in model.parameters():
        p.grad = None
    loss = cf(x, y)
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
    loss.backward()
    assert calls == []
    assert all(p.grad is not None for p in model.parameters())
    loss = cf(x, y)
    loss.backward()                 # .grad exists now: added into it
    assert len(calls) == len(list(model.parameters()))
