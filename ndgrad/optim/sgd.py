"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch.optim.SGD)."""

from .._tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, bump, grad_array, to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, the same update (and rounding) as torch's single-tensor
    implementation::

        g = grad (+ weight_decay * p);  buf = momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf;  p = p - lr * g
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _update(self, group, params):
        lr = to_scalar(group["lr"])
        wd, momentum = group["weight_decay"], group["momentum"]
        dampening, nesterov = group["dampening"], group["nesterov"]
        maximize = group["maximize"]
        if wd == 0 and momentum == 0 and not maximize:
            # Plain SGD (the common case): only ``p.add_(grad, alpha=-lr)`` per parameter.
            K.add_many_([p._data for p in params], [p._grad._data for p in params], -lr)
            for p in params:
                p._vc[0] += 1
            return
        for p in params:
            x = K.real(p._data)
            g = K.real(grad_array(p, maximize))
            if wd != 0:
                g = K.add(g, x, wd)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = Tensor(K.unreal(g.copy(), p._data))
                    state["momentum_buffer"] = buf
                else:
                    b = K.real(buf._data)
                    K.mul_(b, momentum)
                    K.add_(b, g, 1 - dampening)
                    state["momentum_buffer"] = buf
                b = K.real(buf._data)
                g = K.add(g, b, momentum) if nesterov else b
            K.add_(x, g, -lr)
            bump(p)
