"""ndgrad.utils."""

__all__ = []

from . import checkpoint  # noqa: E402,F401  (torch.utils.checkpoint is there after import torch)
from . import data  # noqa: F401,E402
from . import dlpack  # noqa: F401,E402
