"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the legacy
nn.utils.weight_norm against torch 2.13: values, gradients, grad_fn names, state_dict keys,
class swapping, caching, removal and errors."""

import warnings

import numpy as np
import pytest
import torch
from _diff import arr, raises_same, same, t

import ndgrad


def _state(m):
    return {k: v for k, v in m.state_dict().items()}


def _module(lib, cls, args, sd):
    m = getattr(lib.nn, cls)(*args, dtype=lib.float64)
    m.load_state_dict({k: t(lib, v) for k, v in sd.items()})
    return m


def _torch_sd(cls, args):
    torch.manual_seed(0)
    m = getattr(torch.nn, cls)(*args, dtype=torch.float64)
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


_LINEAR = ("Linear", (3, 4))
_CONV1D = ("Conv1d", (2, 3, 2))
_INPUTS = {"Linear": (2, 3), "Conv1d": (2, 2, 5), "Conv2d": (1, 2, 4, 4),
           "ConvTranspose2d": (1, 2, 3, 3)}


def _loss_and_grads(lib, m, cls, calls=1):
    x = t(lib, arr(5, *_INPUTS[cls]))
    for _ in range(calls):
        y = m(x)
    (y * y).sum().backward()
    return [y, [(n, p.grad) for n, p in m.named_parameters()]]


@pytest.mark.parametrize("cls,args,dim", [(*_LINEAR, 0), (*_LINEAR, 1), (*_LINEAR, None),
                                          (*_CONV1D, 1), (*_CONV1D, 2), (*_CONV1D, -1)])
def test_weight_norm_parametrization(cls, args, dim):
    sd = _torch_sd(cls, args)

    def scenario(lib):
        m = _module(lib, cls, args, sd)
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        w = m.weight
        out = [w, w.grad_fn.name(), type(m).__name__, list(_state(m)),
               type(m.parametrizations.weight).__name__,
               lib.nn.utils.parametrize.is_parametrized(m),
               lib.nn.utils.parametrize.is_parametrized(m, "bias"),
               lib.nn.utils.parametrize.type_before_parametrizations(m).__name__]
        return out + _loss_and_grads(lib, m, cls)

    same(scenario, rtol=1e-10, atol=1e-12)


def test_weight_norm_assignment_and_removal():
    sd = _torch_sd(*_LINEAR)
    new = arr(6, 4, 3)

    def scenario(lib):
        m = _module(lib, *_LINEAR, sd)
        lib.nn.utils.parametrizations.weight_norm(m)
        g = m.parametrizations.weight.original0
        m.weight = t(lib, new)
        after = [m.weight, g, m.parametrizations.weight.original1,
                 m.parametrizations.weight.original0 is g]
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        return after + [m.weight, type(m.weight).__name__, type(m).__name__, list(_state(m)),
                        hasattr(m, "parametrizations")]

    same(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls,args,kw", [("Linear", (3, 4), {}),
                                         ("Linear", (3, 4), {"n_power_iterations": 3}),
                                         ("Conv2d", (2, 3, 2), {}),
                                         ("ConvTranspose2d", (2, 3, 2), {}),
                                         ("Linear", (3, 4), {"dim": 1})])
def test_spectral_norm_parametrization(cls, args, kw):
    sd = _torch_sd(cls, args)

    def scenario(lib):
        m = _module(lib, cls, args, sd)
        lib.manual_seed(7)
        lib.nn.utils.parametrizations.spectral_norm(m, **kw)
        sn = m.parametrizations.weight[0]
        first = [sn._u.clone(), sn._v.clone(), list(_state(m)), sn.dim]
        res = _loss_and_grads(lib, m, cls, calls=3)
        m.eval()
        w1, w2 = m.weight, m.weight
        return first + res + [sn._u, sn._v, w1, w2, w1.grad_fn.name()]

    same(scenario, rtol=1e-9, atol=1e-11)


def test_spectral_norm_of_a_vector_and_errors():
    def scenario(lib):
        m = lib.nn.Linear(3, 4, dtype=lib.float64)
        with lib.no_grad():
            m.bias.copy_(t(lib, [3.0, 0.0, 4.0, 0.0]))
        lib.nn.utils.parametrizations.spectral_norm(m, name="bias")
        return m.bias

    same(scenario)
    raises_same(lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(3, 4), dim=2))
    raises_same(lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(3, 4), n_power_iterations=0))


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(0, 1)

        def right_inverse(self, a):
            return a.triu()

    return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return 2 * x

    return Scale()


def test_custom_parametrizations_chain_cache_and_remove():
    sd = _torch_sd("Linear", (3, 3))

    def scenario(lib):
        m = _module(lib, "Linear", (3, 3), sd)
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _symmetric(lib))
        P.register_parametrization(m, "weight", _scale(lib))
        w = m.weight
        out = [w, w.grad_fn.name(), m.parametrizations.weight.original, list(_state(m)),
               m.weight is m.weight]
        with P.cached():
            a, b = m.weight, m.weight
            out.append(a is b)
        out.append(m.weight is m.weight)
        y = m(t(lib, arr(8, 2, 3)))
        y.sum().backward()
        out.append(m.parametrizations.weight.original.grad)
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        out += [m.weight, type(m).__name__, P.is_parametrized(m)]
        return out

    same(scenario, rtol=1e-10, atol=1e-12)


def test_parametrize_buffer_and_leave_parametrized():
    def scenario(lib):
        m = lib.nn.BatchNorm1d(3, dtype=lib.float64)
        with lib.no_grad():
            m.running_mean.copy_(t(lib, [1.0, 2.0, 3.0]))
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "running_mean", _scale(lib))
        out = [m.running_mean, list(_state(m)), [n for n, _ in m.named_buffers()]]
        P.remove_parametrizations(m, "running_mean")
        return out + [m.running_mean, [n for n, _ in m.named_buffers()]]

    same(scenario)


def test_parametrize_errors():
    P = "nn.utils.parametrize"

    def reg(lib, name, p, **kw):
        mod = lib.nn.Linear(3, 4)
        return lib.nn.utils.parametrize.register_parametrization(mod, name, p(lib), **kw)

    class Shrink:
        def __call__(self, lib):
            class S(lib.nn.Module):
                def forward(self, x):
                    return x[:2]
            return S()

    raises_same(lambda lib: reg(lib, "nope", _scale))
    raises_same(lambda lib: reg(lib, "weight", Shrink()))
    raises_same(lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        lib.nn.Linear(2, 2), "weight"))

    def no_inverse(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib))
        m.weight = lib.zeros(2, 2)

    raises_same(no_inverse)

    def sequence_left_unparametrized(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrizations.weight_norm(m)
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)

    raises_same(sequence_left_unparametrized)
    # unsafe lets a shape-changing parametrization through
    m = reg(ndgrad, "weight", Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (2, 3) and P


def test_parametrized_module_keeps_other_instances_and_refuses_pickling():
    a, b = ndgrad.nn.Linear(2, 2), ndgrad.nn.Linear(2, 2)
    ndgrad.nn.utils.parametrizations.weight_norm(a)
    assert type(b) is ndgrad.nn.Linear and "weight" in b._parameters
    import pickle
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
        pickle.dumps(a)


def test_legacy_weight_norm():
    sd = _torch_sd(*_CONV1D)

    def scenario(lib):
        m = _module(lib, *_CONV1D, sd)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.utils.weight_norm(m, dim=2)
        msgs = [(c.category.__name__, str(c.message)) for c in w]
        out = [msgs, [n for n, _ in m.named_parameters()], m.weight, m.weight_g]
        out += _loss_and_grads(lib, m, "Conv1d")
        lib.nn.utils.remove_weight_norm(m)
        return out + [[n for n, _ in m.named_parameters()], m.weight]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        same(scenario, rtol=1e-10, atol=1e-12)

        def twice(lib):
            m = lib.nn.Linear(2, 2)
            lib.nn.utils.weight_norm(m)
            lib.nn.utils.weight_norm(m)

        raises_same(twice)
        raises_same(lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)))


def test_weight_norm_kernel_double_backward_and_no_forward_ad():
    v = ndgrad.tensor(arr(9, 3, 4), requires_grad=True)
    g = ndgrad.tensor(arr(10, 3, 1), requires_grad=True)
    fn = ndgrad.nn.utils.parametrizations._weight_norm
    assert ndgrad.autograd.gradcheck(lambda a, b: fn(a, b, 0), (v, g))
    assert ndgrad.autograd.gradgradcheck(lambda a, b: fn(a, b, 0), (v, g))
    fwd = ndgrad.autograd.forward_ad
    with fwd.dual_level(), pytest.raises(NotImplementedError, match="_weight_norm_interface"):
        fn(fwd.make_dual(v.detach(), ndgrad.ones(3, 4)), g.detach(), 0)
    assert np.isfinite(v.detach().numpy()).all()


@pytest.mark.parametrize("cls,args,kw", [("Linear", (3, 4), {}),
                                         ("Conv2d", (2, 3, 2), {"n_power_iterations": 2}),
                                         ("ConvTranspose2d", (2, 3, 2), {})])
def test_legacy_spectral_norm(cls, args, kw):
    sd = _torch_sd(cls, args)

    def scenario(lib):
        m = _module(lib, cls, args, sd)
        lib.manual_seed(5)
        lib.nn.utils.spectral_norm(m, **kw)
        first = [m.weight_u.clone(), m.weight_v.clone(), list(_state(m)),
                 [n for n, _ in m.named_parameters()]]
        res = _loss_and_grads(lib, m, cls, calls=2)
        m.eval()
        y = m(t(lib, arr(5, *_INPUTS[cls])))
        u_after = m.weight_u.clone()
        lib.nn.utils.remove_spectral_norm(m)
        return first + res + [y, u_after, m.weight, type(m.weight).__name__,
                              [n for n, _ in m.named_parameters()], list(_state(m))]

    same(scenario, rtol=1e-9, atol=1e-11)


def test_legacy_spectral_norm_errors():
    def twice(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.spectral_norm(m)
        lib.nn.utils.spectral_norm(m)

    raises_same(twice)
    raises_same(lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)))
    raises_same(lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2),
                                                       n_power_iterations=0))
    raises_same(lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False),
                                                       name="bias"))
