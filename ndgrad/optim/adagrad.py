"""Adagrad, torch.optim.Adagrad's single-tensor update (state created at construction)."""

import numpy as np

from .._tensor import Tensor
from . import _kernels as K
from .adam import check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad: ``s += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)``."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step()
                init = group["initial_accumulator_value"]
                if p._data.dtype.kind == "c":
                    init = complex(init, init)
                state["sum"] = Tensor(np.full_like(p._data, init))

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        wd, lr_decay, eps = group["weight_decay"], group["lr_decay"], group["eps"]
        for p in params:
            state = self.state[p]
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            if wd != 0:
                g = K.add(g, x, wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            s = K.real(state["sum"]._data)
            K.addcmul_(s, g, g, 1)
            std = np.sqrt(s)
            np.add(std, K.scalar(std, eps), out=std)
            K.addcdiv_(x, g, std, -clr)
            bump(p)
