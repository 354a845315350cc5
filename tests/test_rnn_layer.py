"""The fused LSTM layer (``mkldnn_rnn_layer``, MkldnnRnnLayerBackward0) that a float32
``nn.LSTM`` over a padded batch runs on, as torch's CPU kernel: values, gradients, graph
structure and saved attributes against torch 2.13; double backward and the rule against
finite differences; the cases that keep the per-step cells."""

import numpy as np
import pytest
import torch

import ndgrad
from ndgrad._ops.rnn_layer import mkldnn_rnn_layer

CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True),
    dict(bias=False),
    dict(batch_first=True),
]


def _pair(kw, hidden=4, inputs=3):
    tm = torch.nn.LSTM(inputs, hidden, **kw)
    nm = ndgrad.nn.LSTM(inputs, hidden, **kw)
    with ndgrad.no_grad():
        for name, p in tm.named_parameters():
            getattr(nm, name).copy_(ndgrad.tensor(p.detach().numpy()))
    return tm, nm


def _names(node):
    return [e[0].name() if e[0] is not None else None for e in node.next_functions]


def _run(lib, m, x, h0, c0, w):
    x = lib.tensor(x, requires_grad=True)
    h0 = lib.tensor(h0, requires_grad=True)
    c0 = lib.tensor(c0, requires_grad=True)
    o, (h, c) = m(x, (h0, c0))
    loss = (o * lib.tensor(w)).sum() + (h * h).sum() + 2 * c.sum()
    grads = lib.autograd.grad(loss, [x, h0, c0] + list(m.parameters()))
    return [o, h, c] + list(grads), o, h, c


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: ",".join(kw) or "default")
def test_fused_lstm_matches_torch(kw):
    rng = np.random.default_rng(0)
    tm, nm = _pair(kw)
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    x = rng.standard_normal((2, 5, 3) if kw.get("batch_first") else (5, 2, 3)).astype(
        np.float32)
    h0 = rng.standard_normal((layers * dirs, 2, 4)).astype(np.float32)
    c0 = rng.standard_normal((layers * dirs, 2, 4)).astype(np.float32)
    out_shape = (2, 5, 4 * dirs) if kw.get("batch_first") else (5, 2, 4 * dirs)
    w = rng.standard_normal(out_shape).astype(np.float32)
    ref, to, th, tc = _run(torch, tm, x, h0, c0, w)
    got, no, nh, nc = _run(ndgrad, nm, x, h0, c0, w)
    for a, b in zip(ref, got):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    for a, b in ((to, no), (th, nh), (tc, nc)):
        assert b.grad_fn.name() == a.grad_fn.name()
        assert _names(b.grad_fn) == _names(a.grad_fn)
    layer = no.grad_fn
    while layer.name() != "MkldnnRnnLayerBackward0":
        layer = layer.next_functions[0][0]
    assert _names(layer)[1:] == _names(
        [n for n in [to.grad_fn] + [e[0] for e in to.grad_fn.next_functions]
         if n is not None and n.name() == "MkldnnRnnLayerBackward0"][0])[1:]


def test_fused_lstm_saved_attributes_match_torch():
    tm, nm = _pair(dict(num_layers=2, bidirectional=True))
    tm.eval()
    nm.eval()
    x = np.random.default_rng(1).standard_normal((5, 2, 3)).astype(np.float32)
    tn = tm(torch.tensor(x))[0].grad_fn.next_functions[1][0]
    nn_ = nm(ndgrad.tensor(x))[0].grad_fn.next_functions[1][0]
    names = sorted(a for a in dir(tn) if a.startswith("_saved_"))
    assert names == sorted(a for a in dir(nn_) if a.startswith("_saved_"))
    for a in names:
        t, n = getattr(tn, a), getattr(nn_, a)
        if isinstance(t, torch.Tensor):
            if a != "_saved_result3":  # torch's workspace is an opaque byte buffer
                np.testing.assert_allclose(n.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                           atol=1e-6)
        else:
            assert n == t, a


def test_fused_lstm_unbatched_and_default_state():
    tm, nm = _pair({})
    x = np.random.default_rng(2).standard_normal((6, 3)).astype(np.float32)
    to, (th, tc) = tm(torch.tensor(x, requires_grad=True))
    no, (nh, nc) = nm(ndgrad.tensor(x, requires_grad=True))
    for a, b in ((to, no), (th, nh), (tc, nc)):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        assert b.grad_fn.name() == a.grad_fn.name()
        assert _names(b.grad_fn) == _names(a.grad_fn)


@pytest.mark.parametrize("case", ["float64", "packed", "proj"])
def test_cases_that_keep_the_per_step_cells_match_torch_nodes(case):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 2, 3))
    outs = []
    for lib in (torch, ndgrad):
        lib.manual_seed(0)
        if case == "proj":
            m = lib.nn.LSTM(3, 4, proj_size=2)
        else:
            m = lib.nn.LSTM(3, 4)
        xi = lib.tensor(x, dtype=lib.float64 if case == "float64" else lib.float32)
        if case == "float64":
            m = m.double()
        if case == "packed":
            xi = lib.nn.utils.rnn.pack_padded_sequence(xi, lib.tensor([5, 3]))
        o = m(xi)[0]
        outs.append((o.data if case == "packed" else o).grad_fn.name())
    assert outs[0] == outs[1]


def _layer_inputs(rng, steps=4, batch=2, inputs=3, hidden=3, dtype=np.float64):
    shapes = [(steps, batch, inputs), (4 * hidden, inputs), (4 * hidden, hidden),
              (4 * hidden,), (4 * hidden,), (batch, hidden), (batch, hidden)]
    return [ndgrad.tensor((rng.standard_normal(s) * 0.5).astype(dtype), requires_grad=True)
            for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
def test_layer_rule_gradcheck_and_gradgradcheck(reverse):
    rng = np.random.default_rng(4)
    args = _layer_inputs(rng)

    def f(*a):
        return mkldnn_rnn_layer(*a, reverse, 3, True, True)[:3]
    assert ndgrad.autograd.gradcheck(f, args)
    assert ndgrad.autograd.gradgradcheck(f, args)


@pytest.mark.parametrize("reverse", [False, True])
def test_layer_plain_backward_agrees_with_the_graph_rule(reverse):
    # a backward that records nothing runs on arrays, create_graph runs ndgrad ops
    rng = np.random.default_rng(5)
    args = _layer_inputs(rng, dtype=np.float32)
    w = [ndgrad.tensor(rng.standard_normal(s).astype(np.float32))
         for s in ((4, 2, 3), (2, 3), (2, 3))]
    res = []
    for create_graph in (False, True):
        out = mkldnn_rnn_layer(*args, reverse, 3, True, True)[:3]
        loss = sum((o * wi).sum() for o, wi in zip(out, w))
        res.append(ndgrad.autograd.grad(loss, args, create_graph=create_graph))
    for a, b in zip(*res):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_fused_lstm_forward_ad_raises_torch_error():
    errs = []
    for lib in (torch, ndgrad):
        fw = lib.autograd.forward_ad
        m = lib.nn.LSTM(3, 4)
        x = lib.ones(5, 2, 3)
        with fw.dual_level():
            with pytest.raises(NotImplementedError) as e:
                m(fw.make_dual(x, lib.ones_like(x)))
        errs.append(str(e.value))
    assert errs[0] == errs[1]


def test_fused_lstm_double_backward_through_the_module():
    # torch supports it too; compared on values
    rng = np.random.default_rng(6)
    tm, nm = _pair({})
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    vals = []
    for lib, m in ((torch, tm), (ndgrad, nm)):
        xi = lib.tensor(x, requires_grad=True)
        o = m(xi)[0]
        (g,) = lib.autograd.grad((o * o).sum(), xi, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), xi)
        vals.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*vals):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
