"""torch.nn.attention: the scaled-dot-product-attention backend selection. ndgrad computes
``scaled_dot_product_attention`` one way (torch's math backend), so ``sdpa_kernel`` only
checks its argument and restores nothing, and the fused kernels report unavailable."""

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "can_use_flash_attention",
           "can_use_efficient_attention"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """torch's backend ids (only MATH runs in ndgrad)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Select attention backends (a no-op beyond the argument check: ndgrad has one)."""
    items = backends if isinstance(backends, (list, tuple)) else [backends]
    for b in items:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend")
    yield


def can_use_flash_attention(params, debug=False):
    return False


def can_use_efficient_attention(params, debug=False):
    return False
