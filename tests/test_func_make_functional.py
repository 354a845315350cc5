"""functorch's legacy stateless-module API (make_functional, make_functional_with_buffers,
combine_state_for_ensemble, functional_init) against torch 2.13's torch._functorch."""

import numpy as np

import ndgrad
import ndgrad._functorch.make_functional as nd_mf
import torch
import torch._functorch.make_functional as t_mf
from _diff import arr, raises_same, same, t


def _mf(lib):
    return nd_mf if lib is ndgrad else t_mf


def _model(lib, bn=False, tied=False):
    lib.manual_seed(0)
    layers = [lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 4)]
    if bn:
        layers.append(lib.nn.BatchNorm1d(4))
    m = lib.nn.Sequential(*layers)
    if tied:
        m[2].weight = lib.nn.Parameter(m[2].weight.detach().clone())
        m.tied = m[2]
    return m


def test_make_functional_runs_given_params_and_leaves_the_model():
    def sc(lib):
        m = _model(lib)
        fm, params = _mf(lib).make_functional(m)
        x = t(lib, arr(0, 5, 3, dtype=np.float32))
        new = tuple(p.detach() * 2 for p in params)
        out = fm(new, x)
        g = lib.autograd.grad(fm(params, x).sum(), params)
        return (out, m(x), g, [p.requires_grad for p in params],
                [tuple(p.shape) for p in params], fm.param_names)
    same(sc)


def test_make_functional_disable_autograd_tracking_and_buffers_error():
    def sc(lib):
        _, params = _mf(lib).make_functional(_model(lib), disable_autograd_tracking=True)
        return [p.requires_grad for p in params]
    same(sc)
    raises_same(lambda lib: _mf(lib).make_functional(_model(lib, bn=True)))


def test_make_functional_with_buffers_under_vmap_grad():
    def sc(lib):
        m = _model(lib, bn=True).eval()
        fm, params, buffers = _mf(lib).make_functional_with_buffers(m)

        def loss(p, b, x):
            return fm(p, b, x.unsqueeze(0)).sum()
        x = t(lib, arr(1, 6, 3, dtype=np.float32))
        per = lib.func.vmap(lib.func.grad(loss), (None, None, 0))(params, buffers, x)
        return per, len(buffers), fm.buffer_names
    same(sc, rtol=1e-5, atol=1e-6)


def test_combine_state_for_ensemble_and_its_errors():
    def sc(lib):
        lib.manual_seed(1)
        models = [lib.nn.Linear(3, 2) for _ in range(4)]
        fm, params, buffers = _mf(lib).combine_state_for_ensemble(models)
        out = lib.func.vmap(fm, (0, 0, None))(params, buffers, t(lib, arr(2, 5, 3, dtype=np.float32)))
        return out, [p.requires_grad for p in params], len(buffers)
    same(sc, rtol=1e-5, atol=1e-6)
    raises_same(lambda lib: _mf(lib).combine_state_for_ensemble([]))
    raises_same(lambda lib: _mf(lib).combine_state_for_ensemble(
        [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]))
    raises_same(lambda lib: _mf(lib).combine_state_for_ensemble(
        [lib.nn.Linear(2, 2), lib.nn.Conv1d(2, 2, 1)]))


def test_functional_init_stacks_fresh_models():
    def sc(lib):
        lib.manual_seed(2)
        weights, fn, names = _mf(lib).functional_init(lib.nn.Linear, (3,))(4, 2)
        lib.manual_seed(2)
        w2, b2, fn2, wn, bn = _mf(lib).functional_init_with_buffers(lib.nn.Linear, (3,))(4, 2)
        x = t(lib, arr(3, 5, 4, dtype=np.float32))
        out = lib.func.vmap(fn, (0, None))(weights, (x,))
        return weights, names, out, w2, wn, bn
    same(sc, rtol=1e-5, atol=1e-6)
    raises_same(lambda lib: _mf(lib).functional_init(lib.nn.Linear, (0,))(4, 2))
    raises_same(lambda lib: _mf(lib).functional_init(lib.nn.Linear, (2, 2))(4, 2))


def test_tied_weights_appear_once():
    def sc(lib):
        fm, params = _mf(lib).make_functional(_model(lib, tied=True))
        return len(params), fm.param_names
    same(sc)
