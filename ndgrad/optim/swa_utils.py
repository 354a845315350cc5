"""Stochastic weight averaging (torch.optim.swa_utils): AveragedModel, SWALR, update_bn and
the averaging functions (SWA and EMA), with torch's CPU code paths and numbers."""

import itertools
import math
import warnings
from copy import deepcopy

from .._creation import tensor
from .._dtype import long
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA of lists of tensors: ``ema = lerp(ema, current, 1 - decay)``."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for p_ema, p in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p, 1 - decay)
            else:
                for p_ema, p in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean of lists of tensors."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
                for p_avg, p in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p, float(1 / (num_averaged + 1)))
            else:
                for p_avg, p in zip(averaged_param_list, current_param_list):
                    diff = p - p_avg
                    if isinstance(num_averaged, Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Running mean of one tensor: ``avg + (current - avg) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the running average (SWA by default, or
    ``avg_fn`` / ``multi_avg_fn``, e.g. an EMA) of ``model``'s parameters over the calls
    to :meth:`update_parameters`."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        self.register_buffer("n_averaged", tensor(0, dtype=long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params, model_params = self.parameters(), model.parameters()
        mine, theirs = [], []
        copy_param = bool(self.n_averaged == 0)
        with no_grad():
            for p_avg, p_model in zip(self_params, model_params):
                p_model_ = p_model.detach()
                mine.append(p_avg.detach())
                theirs.append(p_model_)
                if copy_param:
                    p_avg.detach().copy_(p_model_)
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(mine, theirs, self.n_averaged)
                else:
                    # torch's CPU path: the per-tensor function (SWA unless avg_fn given)
                    avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for p_avg, p_model in zip(mine, theirs):
                        p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the BatchNorm running statistics of ``model`` with one pass over ``loader``
    (cumulative averages: momentum None), as after weight averaging."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for inp in loader:
            if isinstance(inp, (list, tuple)):
                inp = inp[0]
            model(inp)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` (cosine or linear), then
    hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
