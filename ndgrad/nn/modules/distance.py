"""``torch.nn.modules.distance``: the distance layers, by the path torch defines them in.

The classes live in ``misc`` (ndgrad groups layers by family); this module is the same objects
under torch's file name, so ``from torch.nn.modules.distance import ...`` works.
"""

from .misc import PairwiseDistance, CosineSimilarity  # noqa: F401

__all__ = ["PairwiseDistance", "CosineSimilarity"]
