"""``torch.nn.modules.instancenorm``: the instance normalisations, by the path torch defines them
in.

The classes live in ``normalization``, ``lazy`` (ndgrad groups layers by family); this module is
the same objects under torch's file name, so ``from torch.nn.modules.instancenorm import ...``
works.
"""

from .normalization import (_InstanceNorm, InstanceNorm1d, InstanceNorm2d,  # noqa: F401
                            InstanceNorm3d)
from .lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
