"""RAdam (rectified Adam), torch.optim.RAdam's single-tensor update."""

import numpy as np

from . import _kernels as K
from .adam import check_betas, check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam: Adam whose adaptive term is switched on (and rectified) once the variance
    estimate is tractable (``rho_t > 5``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
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
                state["exp_avg_sq"] = K.zeros(p)
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    K.mul_(x, 1 - lr * wd)
                    bump(p)
                else:
                    g = K.add(g, x, wd)
            m = K.real(state["exp_avg"]._data)
            v = K.real(state["exp_avg_sq"]._data)
            K.lerp_(m, g, 1 - beta1)
            K.mul_(v, beta2)
            K.addcmul_(v, g, g, 1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            upd = m / K.scalar(m, bias_correction1)
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            np.multiply(upd, K.scalar(upd, lr), out=upd)
            if rho_t > 5.0:
                sq = np.sqrt(v)
                np.add(sq, K.scalar(sq, eps), out=sq)
                # torch's scalar / tensor is reciprocal(tensor) * scalar
                adaptive = np.reciprocal(sq)
                np.multiply(adaptive, K.scalar(sq, bias_correction2 ** 0.5), out=adaptive)
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                np.multiply(upd, adaptive, out=upd)
                np.multiply(upd, K.scalar(upd, rect), out=upd)
            np.subtract(x, upd, out=x)
            bump(p)
