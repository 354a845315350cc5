"""Adam (with amsgrad and decoupled weight decay), torch.optim.Adam's single-tensor update."""

import numpy as np

from .._tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, bump, grad_array, new_step, to_scalar

__all__ = ["Adam"]


def check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_betas(eps, betas, weight_decay):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Adam: ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 v + (1 - beta2) g^2``,
    ``p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check_lr(lr)
        check_betas(eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("amsgrad", False), ("maximize", False), ("foreach", None),
                         ("capturable", False), ("differentiable", False),
                         ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(k, v)
            for p in group["params"]:
                st = self.state.get(p, {})
                if st and not isinstance(st["step"], Tensor):
                    st["step"] = Tensor(np.array(float(st["step"]),
                                                 dtype=new_step()._data.dtype))

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        beta1, beta2 = (to_scalar(b) for b in group["betas"])
        eps, wd, amsgrad = group["eps"], group["weight_decay"], group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = K.zeros(p)
                state["exp_avg_sq"] = K.zeros(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = K.zeros(p)
            x = K.real(p._data)
            g = K.real(grad_array(p, group["maximize"]))
            step_t = state["step"]._data
            step_t += 1
            step = step_t.item()
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            scalars = (lr, beta1, beta2, eps, wd, decoupled, lr / bias_correction1,
                       bias_correction2 ** 0.5)
            arrays = (x, g, K.real(state["exp_avg"]._data), K.real(state["exp_avg_sq"]._data),
                      K.real(state["max_exp_avg_sq"]._data) if amsgrad else None)
            for part in K.blocks(arrays):
                _adam_arrays(part, scalars)
            bump(p)


def _adam_arrays(arrays, scalars):
    """One Adam update of x (the parameter), m, v (and vmax) in place from gradient g, all
    elementwise: run on whole arrays or on blocks of them (K.blocks), the same numbers."""
    x, g, m, v, vmax = arrays
    lr, beta1, beta2, eps, wd, decoupled, step_size, bias_correction2_sqrt = scalars
    if wd != 0:
        if decoupled:
            K.mul_(x, 1 - lr * wd)
        else:
            g = K.add(g, x, wd)
    K.lerp_(m, g, 1 - beta1)
    K.mul_(v, beta2)
    K.addcmul_(v, g, g, 1 - beta2)
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        denom = np.sqrt(vmax)
    else:
        denom = np.sqrt(v)
    np.divide(denom, K.scalar(denom, bias_correction2_sqrt), out=denom)
    np.add(denom, K.scalar(denom, eps), out=denom)
    K.addcdiv_(x, m, denom, -step_size)
