"""``torch.autograd.variable``: where old code imports ``Variable`` from (see ``_legacy``)."""

from .._legacy import Variable  # noqa: F401

__all__ = ["Variable"]
