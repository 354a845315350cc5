"""functorch's legacy stateless-module API (``torch._functorch.make_functional``):
``make_functional``, ``make_functional_with_buffers``, ``combine_state_for_ensemble``,
``functional_init`` and ``functional_init_with_buffers``. torch.func's ``functional_call`` and
``stack_module_state`` replace them; they stay because functorch-era code calls them.

Invariants: the functional module owns a deep copy of the model (the caller's model is never
touched); its parameters are the copy's own tensors, one per distinct tensor (tied weights
appear once, under their first name), in ``named_parameters()`` order; calling it runs the copy
through ``functional_call`` with the tensors given, so tied names all see the given tensor and
the copy's own state is unchanged after the call, errors included.
"""

import copy

from .. import nn
from .._ops.joins import stack
from .module_state import functional_call

__all__ = ["make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "functional_init", "functional_init_with_buffers", "FunctionalModule",
           "FunctionalModuleWithBuffers"]


def _copy_state(model, disable_autograd_tracking):
    stateless = copy.deepcopy(model)
    names, params = zip(*stateless.named_parameters()) if any(True for _ in stateless.parameters()) \
        else ((), ())
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return stateless, tuple(names), tuple(params)


class FunctionalModule(nn.Module):
    """``fmodel(params, *args, **kwargs)``: the model run with `params` (in ``param_names``
    order) in place of its parameters."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                               args, kwargs)


class FunctionalModuleWithBuffers(nn.Module):
    """``fmodel(params, buffers, *args, **kwargs)``: as :class:`FunctionalModule`, buffers too."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    def forward(self, params, buffers, *args, **kwargs):
        state = dict(zip(self.param_names, params))
        state.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, state, args, kwargs)


def make_functional(model, disable_autograd_tracking=False):
    """``(fmodel, params)`` for a model without buffers (torch's RuntimeError otherwise)."""
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    stateless, names, params = _copy_state(model, disable_autograd_tracking)
    return FunctionalModule(stateless, names), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(fmodel, params, buffers)``; ``fmodel(params, buffers, *args, **kwargs)``."""
    stateless, names, params = _copy_state(model, disable_autograd_tracking)
    bnames, buffers = zip(*stateless.named_buffers()) if any(True for _ in stateless.buffers()) \
        else ((), ())
    return FunctionalModuleWithBuffers(stateless, names, tuple(bnames)), params, tuple(buffers)


def _stack_each(groups):
    return tuple(stack(shards).detach() for shards in zip(*groups))


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` with every parameter and buffer stacked over `models`
    (a new leading dim of size ``len(models)``), for ``vmap(fmodel, (0, 0, None))``."""
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    made = [make_functional_with_buffers(m) for m in models]
    return made[0][0], _stack_each([m[1] for m in made]), _stack_each([m[2] for m in made])


def _v1(model, with_buffers):
    """functorch's first API: ``(weights, [buffers,] fun, names[, buffer_names])`` with
    ``fun(weights, [buffers,] data)``."""
    stateless, names, params = _copy_state(model, False)
    if not with_buffers:
        def fun(weights, data):
            return functional_call(stateless, dict(zip(names, weights)), tuple(data))
        return params, fun, names
    bnames, buffers = zip(*stateless.named_buffers()) if any(True for _ in stateless.buffers()) \
        else ((), ())

    def fun_b(weights, bufs, data):
        state = dict(zip(names, weights))
        state.update(zip(bnames, bufs))
        return functional_call(stateless, state, tuple(data))
    return params, tuple(buffers), fun_b, names, tuple(bnames)


def _functional_init(model_class, ensemble_shape, device, with_buffers):
    def wrapped(*args, **kwargs):
        if len(ensemble_shape) >= 2:
            raise ValueError("NYI: ensemble_shape with more than 1 element")
        if len(ensemble_shape) == 0:
            return _v1(model_class(*args, **kwargs).to(device), with_buffers)
        num_models = ensemble_shape[0]
        if num_models <= 0:
            raise ValueError(f"num_models {num_models} should be > 0")
        made = [_v1(model_class(*args, **kwargs).to(device), with_buffers)
                for _ in range(num_models)]
        template = _v1(model_class(*args, **kwargs), with_buffers)
        if not with_buffers:
            return _stack_each([m[0] for m in made]), template[1], template[2]
        return (_stack_each([m[0] for m in made]), _stack_each([m[1] for m in made]),
                template[2], template[3], template[4])
    return wrapped


def functional_init(model_class, ensemble_shape=(), device="cpu"):
    """``functional_init(cls, (M,))(*args)``: M fresh models' weights stacked, the function
    and the names (functorch's prototype)."""
    return _functional_init(model_class, ensemble_shape, device, False)


def functional_init_with_buffers(model_class, ensemble_shape=(), device="cpu"):
    """As :func:`functional_init`, with the buffers stacked too."""
    return _functional_init(model_class, ensemble_shape, device, True)
