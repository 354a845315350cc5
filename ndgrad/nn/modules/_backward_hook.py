"""Full backward hooks of a Module (torch's ``BackwardHook``).

The module's tensor inputs and outputs are passed through identity nodes named
``BackwardHookFunctionBackward``. The output node sees ``grad_output`` (and runs the backward
pre-hooks, which may replace it); the input node sees ``grad_input`` once all of it is known,
and runs the backward hooks, which may replace it.
"""

import warnings

from ... import _state
from ..._tensor import Tensor
from ...autograd.graph import Node


class BackwardHookFunctionBackward(Node):
    """Identity node: hands the gradients of its outputs to a hook callback."""

    __slots__ = ()

    def _apply(self, gs):
        n = len(self._next)
        gs = list(gs) + [None] * (n - len(gs))
        return tuple(self._extra["callback"](tuple(gs)))


def _identity_with_hook(tensors, callback):
    """New tensors aliasing `tensors` whose gradients pass through `callback`."""
    rgs = [t.requires_grad for t in tensors]
    outs = []
    for t in tensors:
        o = Tensor(t._data)
        o._vc = t._vc
        outs.append(o)
    if not any(rgs) or not _state.tls.grad_enabled:
        return outs, False
    node = BackwardHookFunctionBackward(tuple(t._edge() if rg else None
                                              for t, rg in zip(tensors, rgs)))
    node._extras()["callback"] = callback
    for k, (o, rg) in enumerate(zip(outs, rgs)):
        if rg:
            o._rg = True
            o._grad_fn = node
            o._output_nr = k
    return outs, True


def _replace(seq, positions, new):
    seq = list(seq)
    for pos, t in zip(positions, new):
        seq[pos] = t
    return tuple(seq)


class BackwardHookState:
    """Per-call state linking the input and output identity nodes of one module call.

    `global_hooks` / `global_pre_hooks` are the live registries of the module-global backward
    hooks (``nn.modules.module``), read when the gradients arrive, like the module's own."""

    def __init__(self, module, global_hooks, global_pre_hooks):
        self.module = module
        self.global_hooks = global_hooks
        self.global_pre_hooks = global_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_hooked = False

    def _hooks(self):
        return list(self.global_hooks.values()) + list(self.module._backward_hooks.values())

    def _pre_hooks(self):
        return (list(self.global_pre_hooks.values())
                + list(self.module._backward_pre_hooks.values()))

    def _check(self, result, expected, what):
        if not isinstance(result, (tuple, list)):
            result = (result,)
        if len(result) != expected:
            raise RuntimeError(f"Backward hook returned an invalid number of grad_{what} - got "
                               f"{len(result)}, but expected {expected}")
        return tuple(result)

    def setup_input_hook(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(positions)
        if not positions:
            return args
        new, hooked = _identity_with_hook([args[i] for i in positions], self._input_callback)
        self.input_hooked = hooked
        return _replace(args, positions, new) if hooked else args

    def _input_callback(self, grad_inputs):
        grad_inputs = tuple(grad_inputs)
        for hook in self._hooks():
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None:
                grad_inputs = self._check(res, len(grad_inputs), "input")
        return grad_inputs

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        seq = (result,) if single else result
        if not isinstance(seq, tuple):
            return result
        positions = [i for i, a in enumerate(seq) if isinstance(a, Tensor)]
        if not positions:
            return result
        new, hooked = _identity_with_hook([seq[i] for i in positions], self._output_callback)
        if not hooked:
            return result
        seq = _replace(seq, positions, new)
        return seq[0] if single else seq

    def _output_callback(self, grad_outputs):
        grad_outputs = tuple(grad_outputs)
        for hook in self._pre_hooks():
            res = hook(self.module, grad_outputs)
            if res is not None:
                grad_outputs = self._check(res, len(grad_outputs), "output")
        self.grad_outputs = grad_outputs
        if not self.input_hooked:
            # No input needs a gradient: torch calls the hooks now with grad_input all None.
            gi = (None,) * max(self.n_inputs, 1) if self.n_inputs else ()
            hooks = self._hooks()
            if hooks:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients. See https://docs."
                    "pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                    "register_full_backward_hook for more details.", stacklevel=2)
            for hook in hooks:
                hook(self.module, gi, grad_outputs)
        return grad_outputs
