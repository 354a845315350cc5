"""Rprop (resilient backpropagation), torch.optim.Rprop's single-tensor update."""

import numpy as np

from .._tensor import Tensor
from . import _kernels as K
from .adam import check_lr
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop: per-element step sizes grow by ``etas[1]`` while the gradient keeps its sign and
    shrink by ``etas[0]`` when it flips (that step is then skipped), within ``step_sizes``."""

    _param_first_in_errors = True

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, group, params):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["prev"] = K.zeros(p)
                lr = to_scalar(group["lr"])
                if p._data.dtype.kind == "c":
                    lr = complex(lr, lr)
                state["step_size"] = Tensor(np.full_like(p._grad._data, lr))
            state["step"]._data += 1
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            prev = K.real(state["prev"]._data)
            step_size = K.real(state["step_size"]._data)
            sign = np.sign(g * prev)
            f = x.dtype.type
            sign[sign > 0] = f(etaplus)
            sign[sign < 0] = f(etaminus)
            sign[sign == 0] = 1
            np.multiply(step_size, sign, out=step_size)
            np.clip(step_size, f(step_size_min), f(step_size_max), out=step_size)
            g = g.copy()
            g[sign == f(etaminus)] = 0
            K.addcmul_(x, np.sign(g), step_size, -1)
            prev[...] = g
            bump(p)
