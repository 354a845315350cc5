"""ndgrad.amp: torch.amp's API on a CPU-only library -- ``autocast`` (the mode and its state
functions) and ``GradScaler`` (loss scaling with inf/nan step skipping, as torch's on the CPU).

ndgrad's CPU autocast casts the ops of torch's CPU lists (amp/_policy.py): see
docs/decisions.md. GradScaler is complete and gives torch's numbers on the CPU.
"""

from .autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype,  # noqa: F401
                            is_autocast_available, is_autocast_enabled)
from .grad_scaler import GradScaler, OptState  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]
