"""Adafactor, torch.optim.Adafactor's single-tensor update: a second-moment estimate factored
into row and column means for every parameter of 2 or more dims (a full estimate for vectors),
a relative step size and update clipping.

Invariant: state per parameter is ``step`` plus either ``row_var`` (last dim 1) and
``col_var`` (second-to-last dim 1), or ``variance`` (vectors); ``eps1=None`` means the machine
epsilon of the first updated parameter's dtype, as in torch's loop.
"""

import math

import numpy as np

from . import _kernels as K
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar
from .. import _creation

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    _elementwise_state = False  # row_var / col_var are factored

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _update(self, group, params):
        for p in params:
            if p._data.dtype.kind == "c":
                raise RuntimeError("Adafactor does not support complex parameters")
        # a Tensor lr stays a 0-d tensor in torch: the step size is then computed in its dtype
        lr_dt = group["lr"]._data.dtype if hasattr(group["lr"], "_data") else None
        lr = to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        d, wd, decay = group["d"], group["weight_decay"], group["beta2_decay"]
        for p in params:
            state = self.state[p]
            g = grad_array(p, group["maximize"])
            if len(state) == 0:
                state["step"] = new_step()
                if g.ndim > 1:
                    state["row_var"] = _creation.zeros(g.shape[:-1] + (1,), dtype=p.dtype)
                    state["col_var"] = _creation.zeros(g.shape[:-2] + (1, g.shape[-1]),
                                                       dtype=p.dtype)
                else:
                    state["variance"] = _creation.zeros(g.shape, dtype=p.dtype)
            x = p._data
            dt = x.dtype
            if eps1 is None:
                eps1 = float(np.finfo(dt).eps)
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            weight = step ** decay
            rho = min(lr, 1 / step ** 0.5)
            norm = float(np.sqrt(np.sum(x.astype(np.float64) ** 2)))
            alpha = max(eps2, norm / x.size ** 0.5) * rho
            if lr_dt is not None and rho == lr:
                alpha = lr_dt.type(max(eps2, norm / x.size ** 0.5)) * lr_dt.type(lr)
            if wd != 0:
                factor = 1 - lr * wd if lr_dt is None else \
                    lr_dt.type(1) - lr_dt.type(lr) * lr_dt.type(wd)
                K.mul_(x, float(factor))
            if g.ndim > 1:
                row_var, col_var = state["row_var"]._data, state["col_var"]._data
                row_mean = (np.square(np.sqrt(np.sum(g * g, axis=-1, keepdims=True)))
                            / dt.type(g.shape[-1])).astype(dt)
                K.lerp_(row_var, row_mean, weight)
                col_mean = (np.square(np.sqrt(np.sum(g * g, axis=-2, keepdims=True)))
                            / dt.type(g.shape[-2])).astype(dt)
                K.lerp_(col_var, col_mean, weight)
                var = np.matmul(row_var, col_var)
                var = var / np.maximum(row_var.mean(axis=-2, keepdims=True), dt.type(eps1))
            else:
                variance = state["variance"]._data
                K.lerp_(variance, g * g, weight)
                var = variance.copy()
            update = (1 / np.sqrt(np.maximum(var, dt.type(eps1 * eps1)))).astype(dt) * g
            unorm = float(np.sqrt(np.sum(update.astype(np.float64) ** 2)))
            denom = max(1.0, unorm / (math.sqrt(update.size) * d))
            step_size = -alpha / denom if lr_dt is None or rho != lr else \
                lr_dt.type(-alpha) / lr_dt.type(denom)
            np.add(x, (update * dt.type(step_size)).astype(dt), out=x)
            bump(p)
