"""RMSprop (centered, momentum), torch.optim.RMSprop's single-tensor update."""

import numpy as np

from . import _kernels as K
from .adam import check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: ``v = alpha v + (1 - alpha) g^2``; ``p -= lr g / (sqrt(v) + eps)``."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        alpha, eps, wd = group["alpha"], group["eps"], group["weight_decay"]
        momentum, centered = group["momentum"], group["centered"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = K.zeros(p)
                if momentum > 0:
                    state["momentum_buffer"] = K.zeros(p)
                if centered:
                    state["grad_avg"] = K.zeros(p)
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            state["step"]._data += 1
            if wd != 0:
                g = K.add(g, x, wd)
            sq = K.real(state["square_avg"]._data)
            K.mul_(sq, alpha)
            K.addcmul_(sq, g, g, 1 - alpha)
            if centered:
                ga = K.real(state["grad_avg"]._data)
                K.lerp_(ga, g, 1 - alpha)
                avg = sq.copy()
                K.addcmul_(avg, ga, ga, -1)
                np.sqrt(avg, out=avg)
            else:
                avg = np.sqrt(sq)
            np.add(avg, K.scalar(avg, eps), out=avg)
            if momentum > 0:
                buf = K.real(state["momentum_buffer"]._data)
                K.mul_(buf, momentum)
                K.addcdiv_(buf, g, avg, 1)
                K.add_(x, buf, -lr)
            else:
                K.addcdiv_(x, g, avg, -lr)
            bump(p)
