"""ASGD (averaged SGD), torch.optim.ASGD's single-tensor update."""

import numpy as np

from .._tensor import Tensor
from . import _kernels as K
from .adam import check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD: SGD with a decaying step ``eta`` and a running average ``ax`` of the
    iterates (``mu`` weights the average once ``t0`` steps have passed)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                dt = state["step"]._data.dtype
                state["eta"] = Tensor(np.array(lr, dtype=dt))
                state["mu"] = Tensor(np.ones((), dtype=dt))
                state["ax"] = K.zeros(p)
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            ax = K.real(state["ax"]._data)
            step_t = state["step"]._data
            step_t += 1
            if wd != 0:
                g = K.add(g, x, wd)
            eta = state["eta"]._data
            mu = state["mu"]._data
            eta_value = eta.item()
            K.mul_(x, 1 - lambd * eta_value)
            K.add_(x, g, -eta_value)
            bump(p)
            if mu.item() != 1:
                d = x - ax
                np.multiply(d, mu.astype(d.dtype), out=d)
                np.add(ax, d, out=ax)
            else:
                ax[...] = x
            step = step_t.item()
            eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
            mu[...] = 1 / max(1, step - t0)
