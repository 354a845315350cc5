"""ndgrad.cuda.amp: torch.cuda.amp's deprecated spellings of ``torch.amp.autocast("cuda")``
and ``torch.amp.GradScaler("cuda")``; both are disabled (no CUDA), with torch's warnings."""

import warnings

from .. import amp as _amp

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


def _deprecated(name):
    warnings.warn(f"`torch.cuda.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('cuda', args...)` instead.", FutureWarning, stacklevel=3)


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _deprecated("autocast")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _deprecated("GradScaler")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


custom_fwd = _amp.custom_fwd
custom_bwd = _amp.custom_bwd
