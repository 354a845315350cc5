"""ndgrad.compile on functions carrying tensors between calls outside their arguments: in a
dict the function closes over, in a closure cell (nonlocal) or in a global. The compiled
function reads the current tensor at every call and stores its new one back, as
torch.compile replays such stores; each loop is compared step by step with torch eager
running the same code (and with ndgrad eager)."""

import numpy as np
import pytest
import torch

import ndgrad

STATE_G = {}


def _rnn_loop(tm, compiled, kind, steps=4, sizes=(5, 5, 3, 6)):
    """A recurrent cell over steps; the hidden state lives in `kind` ("dict", "cell",
    "global") between calls, detached first (truncated BPTT), as word_language_model does."""
    tm.manual_seed(0)
    cell = tm.nn.RNNCell(3, 4)
    w = np.random.RandomState(0)
    with tm.no_grad():
        for p in cell.parameters():
            p.copy_(tm.tensor(w.randn(*p.shape).astype(np.float32)))
    opt = tm.optim.SGD(cell.parameters(), lr=0.1)
    state = {"h": tm.zeros(2, 4)}
    h_cell = tm.zeros(2, 4)
    STATE_G["h"] = tm.zeros(2, 4)

    def step_dict(x):
        h = state["h"].detach()
        for t in range(x.shape[0]):
            h = cell(x[t], h)
        state["h"] = h
        return (h * h).sum()

    def step_cell(x):
        nonlocal h_cell
        h = h_cell.detach()
        for t in range(x.shape[0]):
            h = cell(x[t], h)
        h_cell = h
        return (h * h).sum()

    fn = {"dict": step_dict, "cell": step_cell, "global": _step_global(cell)}[kind]
    if compiled:
        fn = tm.compile(fn)
    rng = np.random.RandomState(1)
    losses = []
    for i in range(steps):
        x = tm.tensor(rng.randn(sizes[i], 2, 3).astype(np.float32))
        loss = fn(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    held = {"dict": lambda: state["h"], "cell": lambda: h_cell,
            "global": lambda: STATE_G["h"]}[kind]()
    return losses, held.detach().numpy().copy(), [p.detach().numpy().copy()
                                                   for p in cell.parameters()], fn


def _step_global(cell):
    def step_global(x):
        h = STATE_G["h"].detach()
        for t in range(x.shape[0]):
            h = cell(x[t], h)
        STATE_G["h"] = h
        return (h * h).sum()
    return step_global


@pytest.mark.parametrize("kind", ["dict", "cell", "global"])
def test_compiled_state_loop_matches_torch_and_eager(kind):
    ref = _rnn_loop(torch, False, kind)
    eager = _rnn_loop(ndgrad, False, kind)
    comp = _rnn_loop(ndgrad, True, kind)
    np.testing.assert_allclose(comp[0], ref[0], rtol=1e-5)
    np.testing.assert_allclose(comp[1], ref[1], rtol=1e-5, atol=1e-6)
    assert comp[0] == eager[0]
    np.testing.assert_array_equal(comp[1], eager[1])
    for a, b in zip(comp[2], eager[2]):
        np.testing.assert_array_equal(a, b)
    fn = comp[3]
    entries = [e for es in fn.cache.values() for e in es]
    assert entries and all(not e.breaks for e in entries)
    assert all(e.region.stores for e in entries)


def test_stored_state_keeps_its_graph():
    """The stored tensor is the region's output with its history, as eager's: backward
    through it (without the detach) reaches the parameters."""
    lin = ndgrad.nn.Linear(3, 3)
    state = {"h": ndgrad.zeros(1, 3)}

    def f(x):
        state["h"] = lin(x) + state["h"].detach()
        return state["h"].sum()

    g = ndgrad.compile(f)
    x = ndgrad.ones(1, 3)
    g(x)
    g(x)
    assert [type(e).__name__ for es in g.cache.values() for e in es] == ["_Entry"]
    assert state["h"].grad_fn is not None
    state["h"].sum().backward()
    tl = torch.nn.Linear(3, 3)
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(lin.weight.detach().numpy()))
        tl.bias.copy_(torch.tensor(lin.bias.detach().numpy()))
    th = tl(torch.ones(1, 3))
    th = tl(torch.ones(1, 3)) + th.detach()
    th.sum().backward()
    np.testing.assert_allclose(state["h"].detach().numpy(), th.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-6)
