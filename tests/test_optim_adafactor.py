"""optim.Adafactor against torch 2.13: trajectories (factored second moments for matrices and
a 3-d tensor, full ones for vectors), state dicts and argument errors."""

import numpy as np
import pytest
import torch
from _diff import raises_same
from test_optim import close, run

import ndgrad

CONFIGS = [dict(), dict(lr=0.05, weight_decay=0.1), dict(maximize=True, d=1.5),
           dict(eps=(1e-4, 1e-2), beta2_decay=-0.5), dict(lr=torch.tensor(0.02)),
           dict(lr=torch.tensor(0.03), weight_decay=0.2)]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: "-".join(kw) or "default")
def test_adafactor_matches_torch(kw, dtype_name):
    n_kw = {k: (ndgrad.tensor(v.item()) if isinstance(v, torch.Tensor) else v)
            for k, v in kw.items()}
    _, t_opt, t_traj = run(torch, "Adafactor", kw, dtype_name, steps=8)
    _, n_opt, n_traj = run(ndgrad, "Adafactor", n_kw, dtype_name, steps=8)
    for t_step, n_step in zip(t_traj, n_traj):
        for a, b in zip(t_step, n_step):
            assert a.dtype == b.dtype
            close(b, a, dtype_name, ulps=64)
    t_sd, n_sd = t_opt.state_dict(), n_opt.state_dict()
    for k in t_sd["state"]:
        ts, ns = t_sd["state"][k], n_sd["state"][k]
        assert list(ts) == list(ns)
        for key in ts:
            assert str(ts[key].dtype) == str(ns[key].dtype) and ts[key].shape == ns[key].shape
            close(ns[key].numpy(), ts[key].numpy(), dtype_name, ulps=64)


def test_adafactor_three_dim_parameter():
    def traj(lib):
        rng = np.random.default_rng(3)
        p = lib.tensor(rng.standard_normal((2, 3, 4))).requires_grad_()
        opt = lib.optim.Adafactor([p], lr=0.03)
        out = []
        for _ in range(5):
            opt.zero_grad()
            p.grad = lib.tensor(np.sin(3 * p.detach().numpy()) - 0.2)
            opt.step()
            out.append(p.detach().numpy().copy())
        return out, {k: v.numpy() for k, v in opt.state[p].items()}

    (a, sa), (b, sb) = traj(torch), traj(ndgrad)
    for x, y in zip(a, b):
        close(y, x, "float64", ulps=64)
    for k in sa:
        close(sb[k], sa[k], "float64", ulps=64)


@pytest.mark.parametrize("kw", [dict(lr=-1.0), dict(beta2_decay=0.1), dict(eps=(-1.0, 1e-3)),
                                dict(eps=(None, -1.0)), dict(d=0.5), dict(weight_decay=-0.1)])
def test_adafactor_argument_errors(kw):
    raises_same(lambda lib: lib.optim.Adafactor([lib.zeros(2, requires_grad=True)], **kw))


def test_adafactor_refuses_complex():
    def scenario(lib):
        p = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        p.grad = lib.ones(2, dtype=lib.complex64)
        lib.optim.Adafactor([p]).step()

    raises_same(scenario)
