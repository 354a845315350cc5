"""ndgrad.optim.lr_scheduler against torch 2.13: the lr of every param group after every
step, compared exactly (the schedulers do the same float operations in the same order)."""

import warnings

import pytest
import torch

import ndgrad


def make(lib, opt_name="SGD", n_groups=2, **kw):
    params = [lib.ones(2, requires_grad=True) for _ in range(n_groups)]
    groups = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if opt_name == "SGD":
        kw.setdefault("momentum", 0.9)
    return getattr(lib.optim, opt_name)(groups, **kw)


def trajectory(lib, build, steps=25, metric=None, opt_name="SGD"):
    opt = make(lib, opt_name)
    sched = build(lib, opt)
    out = [[g["lr"] for g in opt.param_groups]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(steps):
            opt.step()
            if metric is None:
                sched.step()
            else:
                sched.step(metric(i))
            out.append([g["lr"] for g in opt.param_groups] + list(sched.get_last_lr()))
            if "betas" in opt.param_groups[0]:
                out[-1].append(opt.param_groups[0]["betas"])
            elif "momentum" in opt.param_groups[0]:
                out[-1].append(opt.param_groups[0]["momentum"])
    return out


S = lambda lib: lib.optim.lr_scheduler  # noqa: E731

CASES = {
    "StepLR": lambda lib, o: S(lib).StepLR(o, step_size=3, gamma=0.7),
    "MultiStepLR": lambda lib, o: S(lib).MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3),
    "ExponentialLR": lambda lib, o: S(lib).ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda lib, o: S(lib).CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "LambdaLR": lambda lib, o: S(lib).LambdaLR(o, lambda e: 1.0 / (1 + e) ** 0.5),
    "LambdaLR-list": lambda lib, o: S(lib).LambdaLR(o, [lambda e: 0.9 ** e, lambda e: e % 3]),
    "MultiplicativeLR": lambda lib, o: S(lib).MultiplicativeLR(o, lambda e: 0.95),
    "LinearLR": lambda lib, o: S(lib).LinearLR(o, start_factor=0.2, end_factor=0.9,
                                               total_iters=6),
    "ConstantLR": lambda lib, o: S(lib).ConstantLR(o, factor=0.4, total_iters=4),
    "PolynomialLR": lambda lib, o: S(lib).PolynomialLR(o, total_iters=10, power=1.7),
    "OneCycleLR": lambda lib, o: S(lib).OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=25),
    "OneCycleLR-linear-3phase": lambda lib, o: S(lib).OneCycleLR(
        o, max_lr=0.8, epochs=5, steps_per_epoch=5, anneal_strategy="linear",
        three_phase=True, pct_start=0.25),
    "SequentialLR": lambda lib, o: S(lib).SequentialLR(
        o, [S(lib).LinearLR(o, start_factor=0.1, total_iters=5),
            S(lib).CosineAnnealingLR(o, T_max=10),
            S(lib).ExponentialLR(o, gamma=0.9)], milestones=[5, 15]),
    "ChainedScheduler": lambda lib, o: S(lib).ChainedScheduler(
        [S(lib).ConstantLR(o, factor=0.5, total_iters=3), S(lib).ExponentialLR(o, gamma=0.9)]),
    "CosineAnnealingWarmRestarts": lambda lib, o: S(lib).CosineAnnealingWarmRestarts(
        o, T_0=4, T_mult=2, eta_min=0.01),
    "CyclicLR": lambda lib, o: S(lib).CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.3],
                                               step_size_up=4, step_size_down=3),
    "CyclicLR-triangular2": lambda lib, o: S(lib).CyclicLR(o, 0.01, 0.2, step_size_up=3,
                                                           mode="triangular2"),
    "CyclicLR-exp_range": lambda lib, o: S(lib).CyclicLR(o, 0.01, 0.2, step_size_up=5,
                                                         mode="exp_range", gamma=0.97),
}


@pytest.mark.parametrize("name", list(CASES))
def test_schedule_matches_torch_exactly(name):
    assert trajectory(ndgrad, CASES[name]) == trajectory(torch, CASES[name])


def test_onecycle_with_adam_cycles_beta1():
    build = CASES["OneCycleLR"]
    assert (trajectory(ndgrad, build, opt_name="Adam")
            == trajectory(torch, build, opt_name="Adam"))


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", patience=2, factor=0.5, cooldown=1),
                                dict(threshold_mode="abs", threshold=0.1, patience=1,
                                     min_lr=[0.01, 0.05])])
def test_reduce_lr_on_plateau_matches_torch(kw):
    metric = lambda i: [5, 4, 4, 4.1, 3.9, 3.95, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3][i % 16]  # noqa
    build = lambda lib, o: S(lib).ReduceLROnPlateau(o, **kw)  # noqa: E731
    assert trajectory(ndgrad, build, metric=metric) == trajectory(torch, build, metric=metric)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "LinearLR", "ConstantLR", "PolynomialLR"])
def test_closed_form_with_explicit_epoch(name):
    def go(lib):
        opt = make(lib)
        sched = CASES[name](lib, opt)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in [3, 7, 2, 12]:
                sched.step(e)
                out.append(sched.get_last_lr())
        return out
    assert go(ndgrad) == go(torch)


def test_state_dict_round_trip_resumes():
    def go(lib):
        opt = make(lib)
        sched = CASES["SequentialLR"](lib, opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(7):
                opt.step()
                sched.step()
            sd = sched.state_dict()
            opt2 = make(lib)
            opt2.load_state_dict(opt.state_dict())
            sched2 = CASES["SequentialLR"](lib, opt2)
            sched2.load_state_dict(sd)
            out = []
            for _ in range(10):
                opt2.step()
                sched2.step()
                out.append(sched2.get_last_lr())
        return sorted(k for k in sd if k != "_schedulers"), out
    assert go(ndgrad) == go(torch)


def test_warnings_and_errors_like_torch():
    def go(lib):
        opt = make(lib)
        sched = S(lib).StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sched.step()  # before optimizer.step()
        msgs = [str(x.message)[:60] for x in w]
        errs = []
        for bad in [lambda: S(lib).StepLR(object(), 2),
                    lambda: S(lib).LinearLR(opt, start_factor=0),
                    lambda: S(lib).ReduceLROnPlateau(opt, factor=1.0),
                    lambda: S(lib).ReduceLROnPlateau(opt, mode="avg"),
                    lambda: S(lib).OneCycleLR(opt, max_lr=1.0),
                    lambda: S(lib).SequentialLR(opt, [S(lib).StepLR(opt, 2)], milestones=[3]),
                    lambda: S(lib).ExponentialLR(make(lib), 0.9, last_epoch=3)]:
            try:
                bad()
            except Exception as e:  # noqa: BLE001
                errs.append((type(e).__name__, str(e)))
        return msgs, errs
    assert go(ndgrad) == go(torch)
