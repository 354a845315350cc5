"""Optimizer internals third-party libraries rely on, differential against torch 2.13: an
``Optimizer`` subclass that never calls ``Optimizer.__init__`` (Lookahead-style wrappers
delegating ``param_groups`` and ``state`` to an inner optimizer) steps as in torch, and a
loaded state of the wrong shape makes ``step`` raise torch's RuntimeError (never NumPy's
ValueError) while ndgrad changes nothing."""

import importlib
from collections import defaultdict

import numpy as np
import pytest
import torch

import ndgrad

LIBS = (torch, ndgrad)


def _lookahead_class(L):
    class Lookahead(L.optim.Optimizer):
        """Every k steps, pull the fast weights half way back to slow copies."""

        def __init__(self, inner, k=2, alpha=0.5):  # no Optimizer.__init__, as the libraries
            self.inner, self.k, self.alpha = inner, k, alpha
            self.param_groups = inner.param_groups
            self.defaults = inner.defaults
            self.state = defaultdict(dict)
            for g in self.param_groups:
                g["counter"] = 0

        def _pull(self, group):
            for fast in group["params"]:
                st = self.state[fast]
                if "slow" not in st:
                    st["slow"] = fast.detach().clone()
                fast.data.mul_(self.alpha).add_(1.0 - self.alpha, st["slow"])
                st["slow"].copy_(fast.data)

        def step(self, closure=None):
            loss = self.inner.step(closure=closure)
            for g in self.param_groups:
                if g["counter"] == 0:
                    self._pull(g)
                g["counter"] = (g["counter"] + 1) % self.k
            return loss

        def zero_grad(self, set_to_none=True):
            self.inner.zero_grad(set_to_none)
    return Lookahead


@pytest.mark.filterwarnings("ignore:This overload of add_ is deprecated")
@pytest.mark.parametrize("inner", ["SGD", "Adam", "RMSprop"])
def test_wrapper_without_optimizer_init_steps_as_torch(inner):
    def run(L):
        model = L.nn.Linear(3, 2)
        with L.no_grad():
            model.weight.copy_(L.arange(6.0).reshape(2, 3) / 10)
            model.bias.fill_(0.1)
        kw = {"momentum": 0.9} if inner == "SGD" else {}
        base = getattr(L.optim, inner)(model.parameters(), lr=0.05, **kw)
        opt = _lookahead_class(L)(base)
        calls = []
        base.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
        base.register_step_post_hook(lambda o, a, k: calls.append("post"))
        glob = importlib.import_module(L.__name__ + ".optim.optimizer")
        handle = glob.register_optimizer_step_post_hook(lambda o, a, k: calls.append(
            type(o).__name__))
        x = L.arange(6.0).reshape(2, 3)
        try:
            for _ in range(5):
                opt.zero_grad()
                loss = opt.step(lambda: model(x).pow(2).sum().backward() or 0.0)
                assert loss == 0.0
        finally:
            handle.remove()
        sd = base.state_dict()
        return (model.weight.detach().numpy().copy(), model.bias.detach().numpy().copy(),
                calls, sorted(sd["state"][0]), [g["counter"] for g in opt.param_groups],
                opt.state[model.weight]["slow"].numpy().copy())
    ours, theirs = (run(L) for L in (ndgrad, torch))
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        else:
            assert a == b


def test_wrapper_without_optimizer_init_has_no_hook_registry():
    """Registering a hook on the wrapper itself fails as in torch (it has no hook dicts)."""
    for L in LIBS:
        p = L.nn.Parameter(L.ones(2))
        opt = _lookahead_class(L)(L.optim.SGD([p], lr=0.1))
        with pytest.raises(AttributeError, match="_optimizer_step_pre_hooks"):
            opt.register_step_pre_hook(lambda *a: None)


# --------------------------------------------------------------------- loaded wrong shapes
_OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
               "RAdam", "ASGD", "Rprop"]
_SHAPES = [((3,), (4,)), ((1,), (4,)), ((2, 3), (3, 2)), ((3,), (2, 3)), ((2, 3), (3,))]


def _loaded_step(L, name, old, new):
    kw = {"momentum": 0.9} if name == "SGD" else {}
    p = L.nn.Parameter(L.ones(old))
    opt = getattr(L.optim, name)([p], lr=0.1, **kw)
    p.grad = L.ones(old)
    opt.step()
    q = L.nn.Parameter(L.ones(new))
    opt2 = getattr(L.optim, name)([q], lr=0.1, **kw)
    opt2.load_state_dict(opt.state_dict())
    q.grad = L.ones(new)
    before = {k: v.clone() if isinstance(v, L.Tensor) else v for k, v in opt2.state[q].items()}
    try:
        opt2.step()
    except Exception as e:  # noqa: BLE001  (compared below)
        return type(e), str(e), q, before, opt2.state[q]
    return None, None, q, before, opt2.state[q]


@pytest.mark.parametrize("old,new", _SHAPES)
@pytest.mark.parametrize("name", _OPTIMIZERS)
def test_loaded_state_of_another_shape_raises_torchs_error(name, old, new):
    e_t, msg_t, *_ = _loaded_step(torch, name, old, new)
    e_n, msg_n, q, before, after = _loaded_step(ndgrad, name, old, new)
    if name == "ASGD" and (old, new) == ((2, 3), (3,)):
        # torch's ASGD only copies the parameter into its average here (a broadcast copy
        # that succeeds): ndgrad refuses every mis-shaped state (docs/decisions.md)
        assert e_t is None and e_n is RuntimeError
    elif name == "Rprop" and old != (1,) and len(new) <= len(old) and new != (3, 2):
        # torch's Rprop fails on its boolean mask (IndexError) here: ours refuses the shapes
        assert e_n is RuntimeError
    else:
        assert (e_n, msg_n) == (e_t, msg_t)
    # nothing changed: the parameter, and every state value (torch has moved some on)
    assert q.tolist() == ndgrad.ones(new).tolist()
    assert before.keys() == after.keys()
    for k in before:
        same = before[k].equal(after[k]) if isinstance(before[k], ndgrad.Tensor) else \
            before[k] == after[k]
        assert same, k


def test_loaded_state_of_the_right_shape_still_steps_as_torch():
    def run(L):
        p = L.nn.Parameter(L.arange(4.0))
        opt = L.optim.Adam([p], lr=0.1)
        p.grad = L.ones(4)
        opt.step()
        q = L.nn.Parameter(L.arange(4.0))
        opt2 = L.optim.Adam([q], lr=0.1)
        opt2.load_state_dict(opt.state_dict())
        for _ in range(2):
            q.grad = L.arange(4.0) - 1
            opt2.step()
        return q.detach().numpy().copy()
    np.testing.assert_allclose(run(ndgrad), run(torch), rtol=1e-6)
