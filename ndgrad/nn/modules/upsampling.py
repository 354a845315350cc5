"""``torch.nn.modules.upsampling``: the upsampling layers, by the path torch defines them in.

The classes live in ``misc`` (ndgrad groups layers by family); this module is the same objects
under torch's file name, so ``from torch.nn.modules.upsampling import ...`` works.
"""

from .misc import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
