"""``torch.nn.modules.linear_cross_entropy_options``: LinearCrossEntropyOptions, by the path torch
defines them in.

The classes live in ``linear_cross_entropy`` (ndgrad groups layers by family); this module is
the same objects under torch's file name, so ``from
torch.nn.modules.linear_cross_entropy_options import ...`` works.
"""

from .linear_cross_entropy import LinearCrossEntropyOptions  # noqa: F401

__all__ = ["LinearCrossEntropyOptions"]
