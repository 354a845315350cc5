"""Adadelta, torch.optim.Adadelta's single-tensor update."""

import numpy as np

from . import _kernels as K
from .adam import check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta: ``delta = sqrt(u + eps) / sqrt(v + eps) * g``; ``p -= lr * delta``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = K.zeros(p)
                state["acc_delta"] = K.zeros(p)
            state["step"]._data += 1
            arrays = (K.real(p._data), K.real(grad_array(p, group["maximize"])),
                      K.real(state["square_avg"]._data), K.real(state["acc_delta"]._data))
            for part in K.blocks(arrays):
                _adadelta_arrays(part, lr, rho, eps, wd)
            bump(p)


def _adadelta_arrays(arrays, lr, rho, eps, wd):
    """One Adadelta update of x, square_avg and acc_delta in place from gradient g, all
    elementwise: on whole arrays or on blocks of them (K.blocks), the same numbers."""
    x, g, sq, acc = arrays
    if wd != 0:
        g = K.add(g, x, wd)
    K.mul_(sq, rho)
    K.addcmul_(sq, g, g, 1 - rho)
    std = sq + K.scalar(sq, eps)
    np.sqrt(std, out=std)
    delta = acc + K.scalar(acc, eps)
    np.sqrt(delta, out=delta)
    np.divide(delta, std, out=delta)
    np.multiply(delta, g, out=delta)
    K.mul_(acc, rho)
    K.addcmul_(acc, delta, delta, 1 - rho)
    K.add_(x, delta, -lr)
