"""torch's module path ``torch.distributions.one_hot_categorical``: ``OneHotCategorical``
and ``OneHotCategoricalStraightThrough`` live with ``Categorical`` in ``categorical``."""

from .categorical import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
