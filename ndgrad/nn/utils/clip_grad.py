"""Gradient clipping: ``clip_grad_norm_`` (= ``get_total_norm`` then
``clip_grads_with_norm_``) and ``clip_grad_value_``, with torch's formulas."""

import math
import types
import warnings

import numpy as np

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ... import _creation

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the per-tensor norms of `tensors` (as if concatenated into one vector)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _creation.tensor(0.0)
    dt = tensors[0]._data.dtype
    if norm_type == math.inf:
        norms = [np.max(np.abs(g._data)) if g._data.size else dt.type(0) for g in tensors]
        total = np.max(np.array(norms, dtype=dt))
    else:
        norms = [np.linalg.norm(g._data.reshape(-1).astype(np.float64), ord=norm_type)
                 if norm_type != 0 else np.count_nonzero(g._data) for g in tensors]
        norms = np.array(norms, dtype=dt)
        total = np.linalg.norm(norms.astype(np.float64), ord=norm_type) \
            if norm_type != 0 else np.count_nonzero(norms)
    total = np.asarray(total, dtype=dt)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return Tensor(np.asarray(total))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = _grads(parameters)
    if len(grads) == 0:
        return
    total = np.asarray(total_norm._data if isinstance(total_norm, Tensor) else total_norm)
    dt = total.dtype if total.dtype.kind == "f" else np.dtype(np.float32)
    clip_coef = dt.type(float(max_norm)) / (total.astype(dt) + dt.type(1e-6))
    clip_coef_clamped = min(clip_coef, dt.type(1.0))
    with no_grad():
        for g in grads:
            g.mul_(float(clip_coef_clamped))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale gradients in place so their joint norm is at most `max_norm`; return the norm.

    The total norm is the norm of the per-tensor norms; the scale ``max_norm / (norm + 1e-6)``
    is clamped to 1, as torch does. `parameters` is read once: a generator (what
    ``model.parameters()`` returns) is materialised before the norm consumes it.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    if len(grads):
        clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient elementwise to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
