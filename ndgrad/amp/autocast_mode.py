"""``autocast``: the automatic-mixed-precision mode, per device type, with torch's argument
checks and warnings, and the state functions torch scripts read (``is_autocast_enabled``,
``get_autocast_dtype``, ...).

Inside an enabled CPU region the ops of torch's CPU autocast lists cast their inputs (to
float16, or to float32): the lists and the casting wrappers live in ``amp/_policy.py``.
CPU autocast's default dtype is bfloat16, which ndgrad does not have: that region is disabled
with a warning, as torch disables autocast for a dtype it cannot use. CUDA autocast is
disabled with torch's CPU-build warning.

Invariant: the mode is thread-local and restored on exit, also when the block raises.
"""

import functools
import threading
import warnings

from .. import _dtype
from .._device import device
from .._tensor import Tensor

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "custom_fwd", "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu", "mtia", "xla", "maia", "ipu")


class _State(threading.local):
    def __init__(self):
        self.enabled = {}
        self.dtype = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16, "mps": _dtype.float16}
        self.cache = True
        self.nesting = 0


_state = _State()


def is_autocast_available(device_type):
    """Whether autocast exists for this device type (torch's answer; ndgrad computes on CPU)."""
    return device_type in _DEVICE_TYPES


def is_autocast_enabled(device_type="cuda"):
    return _state.enabled.get(device_type, False)


def set_autocast_enabled(device_type, enabled):
    _state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type):
    """The autocast dtype of a device type (CPU: torch's bfloat16, which ndgrad spells None)."""
    device(device_type)  # torch's error for an unknown device type
    return _state.dtype.get(device_type, _dtype.float16)


def set_autocast_dtype(device_type, dtype):
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled():
    return _state.cache


def set_autocast_cache_enabled(enabled):
    _state.cache = bool(enabled)


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context manager
    and decorator marking a mixed-precision region (see the module for what is cast)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        if enabled:
            if device_type in ("cuda", "xpu", "mps", "hpu", "mtia", "xla", "maia", "ipu"):
                if device_type == "cuda":
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                else:
                    warnings.warn(f"ndgrad runs on the CPU only: {device_type} autocast is "
                                  f"disabled.", stacklevel=2)
                enabled = False
            elif self.fast_dtype is _dtype.bfloat16:
                warnings.warn("In CPU autocast, ndgrad has no bfloat16 (NumPy has none): "
                              "autocast is disabled and ops run in their inputs' dtypes. Pass "
                              "dtype=torch.float16 to mark a float16 region.", stacklevel=2)
                enabled = False
            elif self.fast_dtype is not _dtype.float16:
                warnings.warn("In CPU autocast, but the target dtype is not supported. "
                              "Disabling autocast.\nCPU Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev = is_autocast_enabled(self.device)
        self.prev_dtype = get_autocast_dtype(self.device)
        self.prev_cache = is_autocast_cache_enabled()
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        set_autocast_cache_enabled(self._cache_enabled)
        _state.nesting += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        _state.nesting -= 1
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_dtype)
        set_autocast_cache_enabled(self.prev_cache)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorated


def _cast_inputs(value, dtype):
    if isinstance(value, Tensor):
        eligible = value.dtype.is_floating_point and value.dtype is not _dtype.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast_inputs(k, dtype): _cast_inputs(v, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type="cuda", cast_inputs=None):
    """``torch.amp.custom_fwd``: with `cast_inputs`, inside an enabled region `fwd` runs with
    autocast off and its floating inputs (not float64) cast to `cast_inputs`; `ctx` records
    the region for ``custom_bwd``."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = enabled
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_inputs(args, cast_inputs), **_cast_inputs(kwargs, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type="cuda"):
    """``torch.amp.custom_bwd``: `bwd` runs in the autocast state its forward ran in."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
