"""Adamax (Adam with the infinity norm), torch.optim.Adamax's single-tensor update."""

import numpy as np

from . import _kernels as K
from .adam import check_betas, check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax: ``u = max(beta2 u, |g| + eps)``; ``p -= lr / (1 - beta1^t) * m / u``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        beta1, beta2 = group["betas"]
        eps, wd = group["eps"], group["weight_decay"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = K.zeros(p)
                state["exp_inf"] = K.zeros(p)
            step_t = state["step"]._data
            step_t += 1
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            if wd != 0:
                g = K.add(g, x, wd)
            m = K.real(state["exp_avg"]._data)
            u = K.real(state["exp_inf"]._data)
            K.lerp_(m, g, 1 - beta1)
            K.mul_(u, beta2)
            a = np.abs(g)
            np.add(a, K.scalar(a, eps), out=a)
            np.maximum(u, a, out=u)
            clr = lr / (1 - beta1 ** step_t.item())
            K.addcdiv_(x, m, u, -clr)
            bump(p)
