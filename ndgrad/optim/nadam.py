"""NAdam (Nesterov Adam), torch.optim.NAdam's single-tensor update."""

import numpy as np

from .._tensor import Tensor
from . import _kernels as K
from .adam import check_betas, check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam with torch's momentum schedule ``mu_t = beta1 (1 - 0.5 * 0.96^(t psi))``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        beta1, beta2 = group["betas"]
        eps, wd, psi = group["eps"], group["weight_decay"], group["momentum_decay"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["mu_product"] = Tensor(np.ones((), dtype=state["step"]._data.dtype))
                state["exp_avg"] = K.zeros(p)
                state["exp_avg_sq"] = K.zeros(p)
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            bias_correction2 = 1 - beta2 ** step
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    K.mul_(x, 1 - lr * wd)
                    bump(p)
                else:
                    g = K.add(g, x, wd)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
            mp = state["mu_product"]._data
            np.multiply(mp, K.scalar(mp, mu), out=mp)  # a 0-d tensor in the step dtype
            m = K.real(state["exp_avg"]._data)
            v = K.real(state["exp_avg_sq"]._data)
            K.lerp_(m, g, 1 - beta1)
            K.mul_(v, beta2)
            K.addcmul_(v, g, g, 1 - beta2)
            denom = v / K.scalar(v, bias_correction2)
            np.sqrt(denom, out=denom)
            mu_product = mp.item()
            mu_product_next = mu_product * mu_next
            np.add(denom, K.scalar(denom, eps), out=denom)
            K.addcdiv_(x, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
            K.addcdiv_(x, m, denom, (-lr * mu_next) / (1.0 - mu_product_next))
            bump(p)
