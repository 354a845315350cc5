"""Every API taking an iterable of tensors (or modules, groups, milestones...) takes a
generator, read once: each case runs the same code on ndgrad and on torch 2.13, with the
generator argument in both, and compares the numbers (issue 24: ``clip_grad_norm_`` of
``model.parameters()`` computed the norm and then scaled nothing)."""

import numpy as np
import pytest
import torch as T

import ndgrad as N


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    w = np.random.RandomState(0)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(w.randn(*p.shape).astype(np.float32)))
    return m


def _x(lib):
    return lib.tensor(np.linspace(-1, 1, 15).reshape(5, 3).astype(np.float32))


def _backward(lib, m, scale=10.0):
    loss = (m(_x(lib)) ** 2).sum() * scale
    loss.backward()
    return loss


def _train(lib, m, opt, steps):
    """``steps`` plain optimiser steps on the fixed loss; the parameters after them."""
    for _ in range(steps):
        opt.zero_grad()
        _backward(lib, m, scale=0.1)
        opt.step()
    return _params(m)


def _grads(m):
    return [None if p.grad is None else p.grad.detach().numpy().copy() for p in m.parameters()]


def _params(m):
    return [p.detach().numpy().copy() for p in m.parameters()]


CASES = {}


def case(f):
    CASES[f.__name__] = f
    return f


@case
def clip_grad_norm_(lib):
    m = _model(lib)
    _backward(lib, m)
    n = lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    return [n.item()] + _grads(m)


@case
def clip_grad_norm_inf(lib):
    m = _model(lib)
    _backward(lib, m)
    n = lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0, norm_type="inf")
    return [n.item()] + _grads(m)


@case
def clip_grad_value_(lib):
    m = _model(lib)
    _backward(lib, m)
    lib.nn.utils.clip_grad_value_(m.parameters(), 0.5)
    return _grads(m)


@case
def get_total_norm(lib):
    m = _model(lib)
    _backward(lib, m)
    return lib.nn.utils.get_total_norm(p.grad for p in m.parameters()).item()


@case
def clip_grads_with_norm_(lib):
    m = _model(lib)
    _backward(lib, m)
    lib.nn.utils.clip_grads_with_norm_(m.parameters(), 1.0, lib.tensor(20.0))
    return _grads(m)


@case
def parameters_to_vector(lib):
    return lib.nn.utils.parameters_to_vector(_model(lib).parameters()).detach().numpy()


@case
def vector_to_parameters(lib):
    m = _model(lib)
    lib.nn.utils.vector_to_parameters(lib.arange(26.0), m.parameters())
    return _params(m)


@case
def autograd_grad_inputs(lib):
    m = _model(lib)
    loss = (m(_x(lib)) ** 2).sum()
    return [g.numpy() for g in lib.autograd.grad(loss, m.parameters())]


@case
def autograd_grad_outputs_and_grad_outputs(lib):
    m = _model(lib)
    y = m(_x(lib))
    outs = (y[i].sum() for i in range(2))
    return [g.numpy() for g in lib.autograd.grad(
        outs, list(m.parameters()), grad_outputs=(lib.tensor(float(i + 1)) for i in range(2)))]


@case
def autograd_backward_inputs(lib):
    m = _model(lib)
    loss = (m(_x(lib)) ** 2).sum()
    lib.autograd.backward(loss, inputs=(p for p in list(m.parameters())[:2]))
    return _grads(m)


@case
def tensor_backward_inputs(lib):
    m = _model(lib)
    loss = (m(_x(lib)) ** 2).sum()
    loss.backward(inputs=(p for p in list(m.parameters())[1:3]))
    return _grads(m)


@case
def autograd_backward_tensors_and_grad_tensors(lib):
    m = _model(lib)
    y = m(_x(lib))
    lib.autograd.backward((y[i].sum() for i in range(2)),
                          (lib.tensor(float(i + 1)) for i in range(2)))
    return _grads(m)


def _optimizer_case(name):
    def run(lib):
        m = _model(lib)
        opt = getattr(lib.optim, name)(m.parameters(), lr=0.01)
        for _ in range(3):
            def closure():
                opt.zero_grad()
                return _backward(lib, m, scale=0.1)
            opt.step(closure)
        return _params(m)
    run.__name__ = "optim_" + name
    return run


for _name in ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adadelta", "Adamax", "NAdam",
              "RAdam", "ASGD", "Rprop", "Adafactor"]:
    case(_optimizer_case(_name))


@case
def optim_named_parameters(lib):
    m = _model(lib)
    opt = lib.optim.Adam(m.named_parameters(), lr=0.1)
    return _train(lib, m, opt, 2) + [opt.param_groups[0]["param_names"]]


@case
def optim_param_groups_of_generators(lib):
    m = _model(lib)
    ps = list(m.parameters())
    opt = lib.optim.SGD(({"params": (p for p in ps[:2]), "lr": 0.1},
                         {"params": (p for p in ps[2:])}), lr=0.01, momentum=0.9)
    return _train(lib, m, opt, 3) + [len(g["params"]) for g in opt.param_groups]


@case
def optim_add_param_group(lib):
    m = _model(lib)
    ps = list(m.parameters())
    opt = lib.optim.Adam(iter(ps[:2]), lr=0.1)
    opt.add_param_group({"params": (p for p in ps[2:]), "lr": 0.01})
    return _train(lib, m, opt, 3) + [len(g["params"]) for g in opt.param_groups]


@case
def grad_scaler_unscale_then_clip(lib):
    m = _model(lib)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale((m(_x(lib)) ** 2).sum()).backward()
    scaler.unscale_(opt)
    n = lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    return _params(m) + [n.item(), scaler.get_scale()]


@case
def averaged_model_ema(lib):
    m = _model(lib)
    avg = lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    with lib.no_grad():
        for p in m.parameters():
            p.mul_(2)
    avg.update_parameters(m)
    return _params(avg)


@case
def averaged_model_swa(lib):
    m = _model(lib)
    avg = lib.optim.swa_utils.AveragedModel(m)
    for _ in range(2):
        with lib.no_grad():
            for p in m.parameters():
                p.mul_(2)
        avg.update_parameters(m)
    return _params(avg)


@case
def update_bn_loader_generator(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).view(p.shape) / 10)
    loader = (lib.arange(12.0).view(4, 3) * i for i in range(3))
    lib.optim.swa_utils.update_bn(loader, m)
    return [m[1].running_mean.numpy(), m[1].running_var.numpy()]


@case
def multistep_lr_milestones(lib):
    m = _model(lib)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    sched = lib.optim.lr_scheduler.MultiStepLR(opt, (i for i in [1, 2]), 0.5)
    out = []
    for _ in range(3):
        opt.step()
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out


@case
def checkpoint_sequential_of_list(lib):
    m = _model(lib)
    x = _x(lib).requires_grad_()
    y = lib.utils.checkpoint.checkpoint_sequential(list(m), 2, x, use_reentrant=False)
    y.sum().backward()
    return _grads(m) + [x.grad.numpy()]


@case
def parameter_list(lib):
    m = _model(lib)
    pl = lib.nn.ParameterList(p for p in m.parameters())
    pl.extend(lib.nn.Parameter(lib.ones(2)) for _ in range(2))
    pl += (lib.nn.Parameter(lib.zeros(1)) for _ in range(1))
    return [len(pl)] + [p.detach().numpy() for p in pl]


@case
def parameter_dict(lib):
    pd = lib.nn.ParameterDict((f"a{i}", lib.nn.Parameter(lib.ones(i + 1))) for i in range(3))
    pd.update((f"b{i}", lib.nn.Parameter(lib.zeros(1))) for i in range(2))
    return list(pd.keys()) + [p.detach().numpy() for p in pd.values()]


@case
def module_list(lib):
    ml = lib.nn.ModuleList(lib.nn.Linear(2, 2) for _ in range(3))
    ml.extend(lib.nn.ReLU() for _ in range(2))
    ml += (lib.nn.Tanh() for _ in range(1))
    return [type(x).__name__ for x in ml]


@case
def module_dict(lib):
    md = lib.nn.ModuleDict((f"a{i}", lib.nn.ReLU()) for i in range(3))
    md.update((f"b{i}", lib.nn.Tanh()) for i in range(2))
    return list(md.keys())


@case
def sequential_of_unpacked_generator(lib):
    s = lib.nn.Sequential(*(lib.nn.Linear(3, 3) for _ in range(2)))
    return [len(s), len(list(s.parameters()))]


@case
def pad_sequence(lib):
    return lib.nn.utils.rnn.pad_sequence((lib.ones(i + 1) * i for i in range(3)),
                                         batch_first=True).numpy()


@case
def broadcast_tensors_unpacked(lib):
    return [t.numpy() for t in lib.broadcast_tensors(*(lib.ones(2, 1) * i for i in range(2)))]


@case
def functional_call_dict_from_generator(lib):
    m = _model(lib)
    return lib.func.functional_call(m, dict((k, v * 2) for k, v in m.named_parameters()),
                                    (_x(lib),)).detach().numpy()


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif a is None or isinstance(a, str):
        assert a == b
    else:
        np.testing.assert_allclose(np.asarray(b, dtype=float), np.asarray(a, dtype=float),
                                   rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generator_argument_matches_torch(name):
    T.manual_seed(0)
    N.manual_seed(0)
    _same(CASES[name](T), CASES[name](N))


def test_clip_grad_norm_empty_generator_warns_like_torch():
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient "
                                         "clipping will occur."):
        N.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    with pytest.warns(UserWarning, match="empty generator"):
        T.nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_generator_actually_clips():
    """The issue's symptom: the returned norm was right but no gradient was scaled."""
    m = _model(N)
    _backward(N, m)
    before = N.nn.utils.get_total_norm([p.grad for p in m.parameters()]).item()
    assert before > 1.0
    N.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    after = N.nn.utils.get_total_norm([p.grad for p in m.parameters()]).item()
    np.testing.assert_allclose(after, 1.0, rtol=1e-5)
