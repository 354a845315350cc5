"""``RNNBase._flat_weights``, the list an RNN's forward reads, differential against torch
2.13: assigning new tensors to it makes forward use them (meta-learning libraries patch RNN
copies so), and it follows the named weights when those change (attribute assignment,
``functional_call``, parametrizations, ``.double()``, copies and pickles)."""

import copy
import io
import pickle

import numpy as np
import pytest
import torch

import ndgrad

LIBS = (ndgrad, torch)


def _make(L, kind, **kw):
    L.manual_seed(0)
    rnn = getattr(L.nn, kind)(3, 4, **kw)
    with L.no_grad():
        for i, p in enumerate(rnn.parameters()):
            p.copy_(L.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
    return rnn


def _x(L):
    return L.linspace(-1.0, 1.0, 2 * 5 * 3).reshape(5, 2, 3)


def _arrays(*ts):
    return [t.detach().numpy().copy() if t is not None else None for t in ts]


def _compare(run):
    ours, theirs = run(ndgrad), run(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


_KINDS = [("RNN", {}), ("LSTM", {}), ("GRU", {}), ("LSTM", {"num_layers": 2,
                                                           "bidirectional": True}),
          ("LSTM", {"proj_size": 2}), ("GRU", {"bias": False})]


@pytest.mark.parametrize("kind,kw", _KINDS)
def test_assigned_flat_weights_are_used_by_forward(kind, kw):
    def run(L):
        rnn = _make(L, kind, **kw)
        originals = list(rnn.parameters())
        rnn._flat_weights = [w * 2 - 0.1 for w in rnn._flat_weights]
        out = rnn(_x(L))[0]
        out.pow(2).sum().backward()
        return _arrays(out, *(p.grad for p in originals))
    _compare(run)


@pytest.mark.parametrize("kind,kw", _KINDS[:3])
def test_flat_weights_follow_the_named_weights(kind, kw):
    def run(L):
        rnn = _make(L, kind, **kw)
        x = _x(L)
        outs = [rnn(x)[0]]
        rnn.weight_hh_l0 = L.nn.Parameter(rnn.weight_hh_l0.detach() * 0.5)  # __setattr__
        outs.append(rnn(x)[0])
        new = {n: p.detach() + 0.05 for n, p in rnn.named_parameters()}
        outs.append(L.func.functional_call(rnn, new, (x,))[0])
        outs.append(rnn(x)[0])                                   # back to its own weights
        outs.append(copy.deepcopy(rnn)(x)[0])
        buf = io.BytesIO()
        pickle.dump(rnn, buf)
        outs.append(pickle.loads(buf.getvalue())(x)[0])
        outs.append(rnn.double()(x.double())[0])                  # _apply rebuilds the list
        same = [a is b for a, b in zip(rnn._flat_weights, rnn.parameters())]
        return _arrays(*outs) + [np.array(same)]
    _compare(run)


def test_parametrized_rnn_weight_is_used():
    def run(L):
        rnn = _make(L, "LSTM")

        class Scale(L.nn.Module):
            def forward(self, w):
                return w * 3

        L.nn.utils.parametrize.register_parametrization(rnn, "weight_ih_l0", Scale())
        out = rnn(_x(L))[0]
        out.sum().backward()
        return _arrays(out, rnn.parametrizations.weight_ih_l0.original.grad)
    _compare(run)
