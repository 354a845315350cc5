"""ndgrad.optim against torch 2.13: trajectories over several steps, state dicts, param groups,
zero_grad, errors. Gradients come from a fixed nonlinear NumPy function of the current parameter
values (the same function on both sides), so the tests do not depend on nn or on op coverage.
"""

import copy
import importlib

import numpy as np
import pytest
import torch

import ndgrad

OPTIMS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.95), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, eps=1e-3)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.05)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, betas=(0.7, 0.9))),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.02, weight_decay=0.1)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)),
]

SHAPES = [(3, 4), (5,), (17,)]  # 17 > 16 exercises torch's vector loop and its scalar tail


def grad_fn(a):
    """A fixed nonlinear gradient field, evaluated in the array's own dtype."""
    return (np.sin(3 * a) * a + a.dtype.type(0.1) * a - a.dtype.type(0.05)).astype(a.dtype)


def make_params(lib, dtype_name, seed=0):
    rng = np.random.default_rng(seed)
    dt = getattr(lib, dtype_name)
    return [lib.tensor(rng.standard_normal(s), dtype=dt).requires_grad_() for s in SHAPES]


def assign_grads(lib, params):
    for p in params:
        arr = grad_fn(p.detach().numpy())
        p.grad = lib.tensor(arr)


def close(a, b, dtype_name, ulps=8):
    """Within a few ulps of the array's scale. The updates round exactly like torch's kernels
    (SGD, Adamax, NAdam, RAdam trajectories come out bit-identical); torch's sqrt (MKL VML) is
    not correctly rounded (1 ulp off for ~15% of float32 inputs), which the sqrt-based
    optimizers then carry for a few steps."""
    a = np.asarray(a)
    b = np.asarray(b)
    eps = np.finfo(np.float32 if dtype_name == "float32" else np.float64).eps
    scale = float(np.abs(b).max()) if b.size else 0.0
    np.testing.assert_allclose(a, b, rtol=ulps * eps, atol=ulps * eps * scale)


def run(lib, name, kw, dtype_name, steps=6):
    params = make_params(lib, dtype_name)
    opt = getattr(lib.optim, name)(params, **kw)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        assign_grads(lib, params)
        opt.step()
        traj.append([p.detach().numpy().copy() for p in params])
    return params, opt, traj


@pytest.mark.parametrize("name,kw", [OPTIMS[i] for i in (0, 1, 2, 3, 4, 16, 17, 20, 21, 22, 23,
                                                          24, 25, 26, 27)])
def test_trajectories_are_bit_identical(name, kw):
    """Where torch's inexact sqrt does not get in (or happens to round correctly on this
    data) every bit matches: the fma/lerp/addcmul/addcdiv rounding is torch's."""
    for dtype_name in ("float32", "float64"):
        _, _, t_traj = run(torch, name, kw, dtype_name)
        _, _, n_traj = run(ndgrad, name, kw, dtype_name)
        for t_step, n_step in zip(t_traj, n_traj):
            for a, b in zip(t_step, n_step):
                np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", OPTIMS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMS)])
def test_trajectory_matches_torch(name, kw, dtype_name):
    _, t_opt, t_traj = run(torch, name, kw, dtype_name)
    _, n_opt, n_traj = run(ndgrad, name, kw, dtype_name)
    for t_step, n_step in zip(t_traj, n_traj):
        for a, b in zip(t_step, n_step):
            assert a.dtype == b.dtype
            close(b, a, dtype_name)
    # the state has the same keys, dtypes and values
    t_sd, n_sd = t_opt.state_dict(), n_opt.state_dict()
    assert t_sd["param_groups"] == n_sd["param_groups"]
    assert list(t_sd["state"]) == list(n_sd["state"])
    for k in t_sd["state"]:
        ts, ns = t_sd["state"][k], n_sd["state"][k]
        assert list(ts) == list(ns)
        for key in ts:
            if isinstance(ts[key], torch.Tensor):
                assert str(ts[key].dtype) == str(ns[key].dtype)
                close(ns[key].numpy(), ts[key].numpy(), dtype_name)
            else:
                assert ts[key] == ns[key]


@pytest.mark.parametrize("name,kw", [OPTIMS[2], OPTIMS[6], OPTIMS[11], OPTIMS[19]])
def test_state_dict_round_trip_continues_like_torch(name, kw):
    """Save after 3 steps, load into a fresh optimizer on the same params, continue."""
    def go(lib):
        params, opt, _ = run(lib, name, kw, "float32", steps=3)
        sd = copy.deepcopy(opt.state_dict())
        params2 = [p.detach().clone().requires_grad_() for p in params]
        opt2 = getattr(lib.optim, name)(params2, **kw)
        opt2.load_state_dict(sd)
        for _ in range(3):
            opt2.zero_grad()
            assign_grads(lib, params2)
            opt2.step()
        return [p.detach().numpy().copy() for p in params2], opt2
    t_res, t_opt = go(torch)
    n_res, n_opt = go(ndgrad)
    for a, b in zip(t_res, n_res):
        close(b, a, "float32")
    assert t_opt.state_dict()["param_groups"] == n_opt.state_dict()["param_groups"]


def test_load_state_dict_casts_like_torch():
    def go(lib):
        p = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Adam([p])
        sd = {"state": {0: {"step": lib.tensor(2.0), "exp_avg": lib.ones(3),
                            "exp_avg_sq": lib.ones(3, dtype=lib.float64)}},
              "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=0.5)]}
        opt.load_state_dict(sd)
        st = opt.state[p]
        assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is p
        return ([str(st[k].dtype) for k in st],
                [st[k] is sd["state"][0][k] for k in st])   # cast -> copy, same dtype -> shared
    assert go(ndgrad) == go(torch)


def test_param_groups_with_different_lrs_and_add_param_group():
    def go(lib):
        params = make_params(lib, "float32")
        opt = lib.optim.SGD([{"params": params[:1]}, {"params": [params[1]], "lr": 0.5}],
                            lr=0.1, momentum=0.9)
        for i in range(4):
            if i == 2:
                opt.add_param_group({"params": params[2], "lr": 0.01, "nesterov": True})
            opt.zero_grad()
            assign_grads(lib, params)
            opt.step()
        return params, opt
    tp, to = go(torch)
    npar, no = go(ndgrad)
    for a, b in zip(tp, npar):
        close(b.detach().numpy(), a.detach().numpy(), "float32")
    assert to.state_dict()["param_groups"] == no.state_dict()["param_groups"]
    assert repr(to) == repr(no)


def test_zero_grad_and_skipped_params():
    a = ndgrad.ones(2, requires_grad=True)
    b = ndgrad.ones(2, requires_grad=True)
    opt = ndgrad.optim.Adam([a, b], lr=0.1)
    a.grad = ndgrad.ones(2)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0 and len(opt.state[a]) == 3
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g and g.tolist() == [0.0, 0.0] and b.grad is None
    opt.zero_grad()
    assert a.grad is None


def test_step_bumps_version_so_stale_graph_errors_like_torch():
    def go(lib):
        w = lib.ones(3, requires_grad=True)
        loss = (w * w).sum()
        opt = lib.optim.SGD([w], lr=0.1)
        w.grad = lib.ones(3)
        v0 = w._version
        opt.step()
        assert w._version > v0
        with pytest.raises(RuntimeError) as e:
            loss.backward()
        return str(e.value)
    assert "modified by an inplace operation" in go(ndgrad)
    go(torch)


def test_closure_is_called_with_grad_enabled():
    w = ndgrad.tensor([1.0, 2.0], requires_grad=True)
    opt = ndgrad.optim.SGD([w], lr=0.1)
    seen = []

    def closure():
        seen.append(ndgrad.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with ndgrad.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6], rtol=1e-6)


@pytest.mark.parametrize("ls", [None, "strong_wolfe"])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_lbfgs_matches_torch(ls, dtype_name):
    # Rosenbrock in 2-D, written with raw tensor ops.
    def go(lib):
        x = lib.tensor([-1.2, 1.0], dtype=getattr(lib, dtype_name), requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, max_iter=8, history_size=5, line_search_fn=ls)
        losses = []

        def closure():
            opt.zero_grad()
            a = x[0]
            b = x[1]
            loss = (1 - a) ** 2 + 100 * (b - a * a) ** 2
            loss.backward()
            return loss

        for _ in range(3):
            losses.append(float(opt.step(closure).detach()))
        return x.detach().numpy().copy(), losses, opt.state[x]["func_evals"]
    tx, tl, tf = go(torch)
    nx, nl, nf = go(ndgrad)
    tol = 1e-4 if dtype_name == "float32" else 1e-10
    np.testing.assert_allclose(nx, tx, rtol=tol, atol=tol)
    np.testing.assert_allclose(nl, tl, rtol=tol, atol=tol)
    assert nf == tf


def test_lbfgs_trains_a_model_as_torch_in_float64():
    # A small MLP, the parameters passed as a generator, 3 steps of 20 inner iterations.
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((8, 4)), rng.standard_normal((1, 8))
    xs, ys = rng.standard_normal((16, 4)), rng.standard_normal((16, 1))

    def go(lib):
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1)).double()
        with lib.no_grad():
            m[0].weight.copy_(lib.tensor(w1))
            m[2].weight.copy_(lib.tensor(w2))
            m[0].bias.zero_()
            m[2].bias.zero_()
        x, y = lib.tensor(xs), lib.tensor(ys)
        opt = lib.optim.LBFGS(m.parameters(), lr=1, max_iter=20)

        def closure():
            opt.zero_grad()
            loss = ((m(x) - y) ** 2).mean()
            loss.backward()
            return loss
        losses = [float(opt.step(closure).detach()) for _ in range(3)]
        return losses, [p.detach().numpy().copy() for p in m.parameters()]
    tl, tp = go(torch)
    nl, np_ = go(ndgrad)
    np.testing.assert_allclose(nl, tl, rtol=1e-9, atol=1e-12)
    for a, b in zip(np_, tp):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_lbfgs_rejects_param_groups_and_bad_line_search():
    a = ndgrad.ones(1, requires_grad=True)
    b = ndgrad.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        ndgrad.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = ndgrad.optim.LBFGS([a], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare type and message with torch's
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=-1)), ("SGD", dict(lr=0.1, momentum=-1)),
    ("SGD", dict(lr=0.1, weight_decay=-1)), ("SGD", dict(lr=0.1, nesterov=True)),
    ("Adam", dict(betas=(1.0, 0.9))), ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(eps=-1)), ("AdamW", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-1)),
    ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adadelta", dict(rho=1.5)), ("NAdam", dict(momentum_decay=-1)), ("RAdam", dict(lr=-0.1)),
    ("Rprop", dict(etas=(1.2, 0.5))), ("ASGD", dict(weight_decay=-1)),
])
def test_constructor_errors_match_torch(name, kw):
    t = _err(lambda: getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], **kw))
    n = _err(lambda: getattr(ndgrad.optim, name)([ndgrad.ones(1, requires_grad=True)], **kw))
    assert t is not None and t == n


def test_param_list_errors_match_torch():
    for lib in (torch, ndgrad):
        lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=1)  # fine
    cases = [
        lambda lib: lib.optim.SGD([], lr=1),
        lambda lib: lib.optim.SGD(lib.ones(2, requires_grad=True), lr=1),
        lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True) * 2], lr=1),
        lambda lib: lib.optim.SGD([1.0], lr=1),
        lambda lib: lib.optim.SGD([{"params": {lib.ones(1, requires_grad=True)}}], lr=1),
    ]
    for case in cases:
        t = _err(lambda: case(torch))
        n = _err(lambda: case(ndgrad))
        assert t is not None and t[0] == n[0], (t, n)
        if "float" not in t[1] and "Tensor" != t[1][-6:]:
            assert t[1] == n[1]
    p = ndgrad.ones(1, requires_grad=True)
    opt = ndgrad.optim.SGD([p], lr=1)
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})


def test_complex_params_match_torch():
    def go(lib):
        rng = np.random.default_rng(3)
        z = lib.tensor(rng.standard_normal(4) + 1j * rng.standard_normal(4),
                       dtype=lib.complex64, requires_grad=True)
        opt = lib.optim.Adam([z], lr=0.1)
        for _ in range(3):
            z.grad = lib.tensor(np.conj(z.detach().numpy()) * 0.5 + 0.1)
            opt.step()
        return z.detach().numpy().copy()
    np.testing.assert_allclose(go(ndgrad), go(torch), rtol=2e-6)


def test_step_hooks_like_torch():
    def go(lib):
        log = []
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        h1 = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), len(k))))
        h2 = opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), len(k))))
        optimizer_mod = importlib.import_module(lib.__name__ + ".optim.optimizer")
        g = optimizer_mod.register_optimizer_step_pre_hook(
            lambda o, a, k: log.append(("global", type(o).__name__)))
        w.grad = lib.ones(2)
        opt.step()
        h1.remove()
        g.remove()
        opt.step()
        h2.remove()
        opt.step()
        lb = lib.optim.LBFGS([w])
        lb.register_step_post_hook(lambda o, a, k: log.append(("lbfgs", len(a), len(k))))

        def closure():
            lb.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss
        lb.step(closure)
        return log, w.detach().numpy().tolist()
    assert go(ndgrad) == go(torch)


def test_large_tensor_fast_path_within_an_ulp():
    """Above EXACT_FMA_MAX elements the update rounds twice instead of once (torch's fma)."""
    from ndgrad.optim._kernels import EXACT_FMA_MAX
    n = EXACT_FMA_MAX + 5000
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)

    def go(lib):
        w = lib.tensor(x0.copy(), requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.0123, momentum=0.9)
        assert w.numel() > EXACT_FMA_MAX
        for _ in range(3):
            w.grad = lib.tensor(g)
            opt.step()
        return w.detach().numpy()
    a, b = go(ndgrad), go(torch)
    # each of the 3 updates may differ by an ulp of the summands (|w| up to ~4.5)
    np.testing.assert_allclose(a, b, rtol=0, atol=6 * np.spacing(np.float32(4.5)))
    assert (a == b).mean() > 0.5


def test_differentiable_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        ndgrad.optim.SGD([ndgrad.ones(1, requires_grad=True)], lr=0.1, differentiable=True)


def test_user_defined_optimizer_subclass_like_torch():
    """A torch-style custom optimizer (its own step with in-place tensor ops) runs as is."""
    def go(lib):
        class SignSGD(lib.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, {"lr": lr})

            @lib.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        state["n"] = state.get("n", 0) + 1
                        p.add_(p.grad.sign(), alpha=-group["lr"])
                return None

        w = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        opt = SignSGD([w], lr=0.25)
        log = []
        opt.register_step_post_hook(lambda o, a, k: log.append(len(a)))
        for _ in range(3):
            opt.zero_grad()
            (w * w * w).sum().backward()
            opt.step()
        return w.detach().numpy().tolist(), opt.state_dict()["state"], log, repr(opt)
    assert go(ndgrad) == go(torch)


def _swa_run(lib, kind):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    swa = lib.optim.swa_utils
    if kind == "swa":
        avg = swa.AveragedModel(model)
    elif kind == "ema":
        avg = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9))
    else:
        avg = swa.AveragedModel(model, avg_fn=swa.get_ema_avg_fn(0.8), use_buffers=True)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="cos")
    rng = np.random.default_rng(0)
    xs = [lib.tensor(rng.standard_normal((8, 3)), dtype=lib.float32) for _ in range(5)]
    lrs = []
    for x in xs:
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr())
    swa.update_bn(xs, avg)
    out = [p.detach().numpy().copy() for p in avg.parameters()]
    out += [b.detach().numpy().copy() for b in avg.buffers()]
    return out, lrs


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_buffers"])
def test_swa_utils_match_torch(kind):
    n_out, n_lrs = _swa_run(ndgrad, kind)
    t_out, t_lrs = _swa_run(torch, kind)
    assert n_lrs == t_lrs
    assert len(n_out) == len(t_out)
    for a, b in zip(n_out, t_out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
                                     ("Adam", dict(lr=0.01)),
                                     ("RMSprop", dict(lr=0.01, centered=True))])
def test_float16_params_like_torch(name, kw):
    """Half params: torch computes in float32 op-math and rounds each result to half."""
    def go(lib):
        rng = np.random.default_rng(2)
        w = lib.tensor(rng.standard_normal(20), dtype=lib.float16).requires_grad_()
        opt = getattr(lib.optim, name)([w], **kw)
        for _ in range(4):
            w.grad = lib.tensor(grad_fn(w.detach().numpy()))
            opt.step()
        return w.detach().numpy().copy()
    a, b = go(ndgrad), go(torch)
    assert a.dtype == b.dtype == np.float16
    np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)
    assert (a == b).mean() > 0.8


def test_sgd_on_zero_dim_parameter_matches_torch():
    import torch
    import ndgrad
    results = []
    for lib in (ndgrad, torch):
        p = lib.nn.Parameter(lib.tensor(1.5))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            (p * p * 3).backward()
            opt.step()
        q = lib.nn.Parameter(lib.tensor(-0.5))
        plain = lib.optim.SGD([q], lr=0.05)
        (q ** 3).backward()
        plain.step()
        results.append((p.item(), q.item()))
    assert results[0] == results[1]


def test_plain_sgd_fused_small_updates_round_like_torch_including_float32_ties():
    # Plain SGD fuses the small float32 parameters into one exact fma; values whose float64
    # sum sits exactly on a float32 tie take the round-to-odd fix. Each must round like
    # torch's per-parameter ``p.add_(grad, alpha=-lr)`` (one correctly rounded fma).
    rng = np.random.default_rng(3)
    shapes = [(7,), (3, 5), (1,), (4, 2, 3), (600,)]
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    gs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    # ties: -lr * g == 2**-24 exactly next to 1.0 (and 2**-23 next to 2.0 / -2.0)
    xs[0][:3] = [1.0, 2.0, -2.0]
    gs[0][:3] = [-2.0 ** -23, -2.0 ** -22, 2.0 ** -22]
    xs[2][0] = 1.0 + 2.0 ** -23
    gs[2][0] = -2.0 ** -23
    lr = 0.5
    res = {}
    for name, lib in (("torch", torch), ("ndgrad", ndgrad)):
        ps = [lib.tensor(x.copy(), requires_grad=True) for x in xs]
        for p, g in zip(ps, gs):
            p.grad = lib.tensor(g.copy())
        lib.optim.SGD(ps, lr=lr).step()
        res[name] = [p.detach().numpy().copy() for p in ps]
        versions = [p._version for p in ps]
        assert versions == [1] * len(ps)
    for a, b in zip(res["torch"], res["ndgrad"]):
        assert a.tobytes() == b.tobytes()
    assert res["ndgrad"][0][0] == 1.0 and res["ndgrad"][0][1] == 2.0


def test_add_many_equals_one_by_one_updates():
    from ndgrad.optim import _kernels as K
    rng = np.random.default_rng(4)
    shapes = [(5,), (2, 3), (1024,), (2000,), (3,)]
    for alpha in (-0.01, 1.0, 0.5):
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        xs.append(rng.standard_normal(4))  # float64: not fused
        xs.append(rng.standard_normal(8).astype(np.float32)[::2])  # a view: not fused
        ys = [rng.standard_normal(x.shape).astype(x.dtype) for x in xs]
        ref = [x.copy() for x in xs]
        for x, y in zip(ref, ys):
            K.add_(x, y, alpha)
        K.add_many_(xs, ys, alpha)
        for a, b in zip(ref, xs):
            assert a.tobytes() == b.tobytes()


def test_add_many_scratch_reuse_between_parameter_sets():
    # add_many_ keeps its float64 scratch per set of shapes between calls: a second set of
    # arrays with the same shapes (and a set with other shapes in between) must come out as
    # the one-by-one updates, with nothing of the earlier call's values left in them.
    from ndgrad.optim import _kernels as K
    rng = np.random.default_rng(5)
    shape_sets = [[(64,), (10, 64), (10,)], [(3,), (4, 5)], [(64,), (10, 64), (10,)]]
    for shapes in shape_sets + shape_sets[::-1]:
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        ys = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        xs[0][0], ys[0][0] = 1.0, -2.0 ** -23   # 1 + 2**-24: a float32 tie
        ref = [x.copy() for x in xs]
        for x, y in zip(ref, ys):
            K.add_(x, y, -0.5)
        K.add_many_(xs, ys, -0.5)
        assert [a.tobytes() for a in ref] == [b.tobytes() for b in xs]
        assert xs[0][0] == 1.0


def test_add_many_large_fused_sets_are_not_kept():
    # A set of small arrays above SCRATCH_MAX elements in all is fused with arrays made for
    # the call (nothing that size stays allocated between steps); the values are the same.
    from ndgrad.optim import _kernels as K
    rng = np.random.default_rng(6)
    shapes = [(1000,)] * (K.SCRATCH_MAX // 1000 + 2)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ys = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ref = [x.copy() for x in xs]
    for x, y in zip(ref, ys):
        K.add_(x, y, -0.01)
    K.add_many_(xs, ys, -0.01)
    assert [a.tobytes() for a in ref] == [b.tobytes() for b in xs]
    assert tuple(shapes) not in K._scratch.__dict__.get("by_shapes", {})


def test_plain_sgd_complex_params_beside_real_ones_bitwise_like_torch():
    # Plain SGD updates a complex parameter as its real view (one fma per real and imaginary
    # part), next to float32 parameters that take the fused path (bitwise torch's).
    def go(lib):
        rng = np.random.default_rng(7)
        ps = [lib.tensor(rng.standard_normal(5) + 1j * rng.standard_normal(5), dtype=dt,
                         requires_grad=True) for dt in (lib.complex64, lib.complex128)]
        ps += [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
               for s in ((7,), (3, 4))]
        opt = lib.optim.SGD(ps, lr=0.3)
        for _ in range(3):
            for p in ps:
                p.grad = lib.tensor(p.detach().numpy() * 0.7 + 0.1)
            opt.step()
        return [p.detach().numpy().copy() for p in ps]
    got, want = go(ndgrad), go(torch)
    for a, b in zip(got[2:], want[2:]):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    # torch's complex add with alpha does not round as one fma per part: within an ulp
    for a, b in zip(got[:2], want[:2]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2 * np.finfo(a.real.dtype).eps, atol=0)
