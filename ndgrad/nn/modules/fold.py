"""``torch.nn.modules.fold``: Fold and Unfold, by the path torch defines them in.

The classes live in ``misc`` (ndgrad groups layers by family); this module is the same objects
under torch's file name, so ``from torch.nn.modules.fold import ...`` works.
"""

from .misc import Fold, Unfold  # noqa: F401

__all__ = ["Fold", "Unfold"]
