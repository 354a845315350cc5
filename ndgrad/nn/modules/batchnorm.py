"""``torch.nn.modules.batchnorm``: the batch normalisations, by the path torch defines them in.

The classes live in ``normalization``, ``lazy``, ``sync_batchnorm`` (ndgrad groups layers by
family); this module is the same objects under torch's file name, so ``from
torch.nn.modules.batchnorm import ...`` works.
"""

from .normalization import (_NormBase, _BatchNorm, BatchNorm1d, BatchNorm2d,  # noqa: F401
                            BatchNorm3d)
from .lazy import _LazyNormBase, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401
from .sync_batchnorm import SyncBatchNorm  # noqa: F401

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
