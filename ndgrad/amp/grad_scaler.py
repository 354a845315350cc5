"""``GradScaler``: loss scaling for mixed-precision training, as torch's on the CPU.

``scale(loss)`` multiplies by the current scale (a 0-d float32 tensor); ``unscale_(opt)``
divides the optimizer's gradients by it in place and records whether any is inf/nan;
``step(opt)`` skips the optimizer step when one was; ``update()`` backs the scale off after a
skipped step and grows it after ``growth_interval`` clean steps.

A scaler made for ``"cuda"`` (the default device) is disabled with torch's CPU-build warning:
it then passes losses through and steps unconditionally.
"""

import warnings
from collections import defaultdict
from enum import Enum

import numpy as np

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_state():
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_state)

    def _lazy_init(self):
        from .._creation import full
        from .. import _dtype
        self._scale = full((), self._init_scale, dtype=_dtype.float32)
        self._growth_tracker = self._init_growth_tracker

    def scale(self, outputs):
        """`outputs` (a tensor or nested iterables of tensors) times the scale."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor
        if self._scale is None:
            self._lazy_init()

        def apply(x):
            if isinstance(x, Tensor):
                return x * self._scale
            if isinstance(x, (list, tuple)):
                out = [apply(v) for v in x]
                return type(x)(out) if isinstance(x, tuple) else out
            if hasattr(x, "__iter__"):
                return map(apply, x)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divide `optimizer`'s gradients by the scale, in place, noting any inf/nan."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from ..autograd.grad_mode import no_grad
        inv = np.float32(1.0 / np.float64(self._scale.item()))
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not np.isfinite(g._data).all():
                        found = True
                    g.mul_(float(inv))
        state["found_inf"] = found
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless the (unscaled) gradients held an inf/nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Back off after a skipped step, grow after ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        self._check_scale("update")
        from .._creation import full
        from .. import _dtype
        if new_scale is not None:
            value = new_scale.item() if hasattr(new_scale, "item") else float(new_scale)
            self._scale = full((), value, dtype=_dtype.float32)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = np.float32(self._scale.item())
            if any(found):
                scale = np.float32(scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                done = self._growth_tracker + 1
                if done == self._growth_interval:
                    grown = np.float32(scale * np.float32(self._growth_factor))
                    if np.isfinite(grown):
                        scale = grown
                    done = 0
                self._growth_tracker = done
            self._scale = full((), float(scale), dtype=_dtype.float32)
        self._per_optimizer_states = defaultdict(_refresh_state)

    def _check_scale(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 f"your script did not use scaler.scale(loss or outputs) "
                                 f"earlier in the iteration.")

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else self._growth_tracker

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            from .._creation import full
            from .. import _dtype
            self._scale = full((), state_dict["scale"], dtype=_dtype.float32)
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]
