"""``torch.nn.modules.channelshuffle``: ChannelShuffle, by the path torch defines them in.

The classes live in ``pixelshuffle`` (ndgrad groups layers by family); this module is the same
objects under torch's file name, so ``from torch.nn.modules.channelshuffle import ...`` works.
"""

from .pixelshuffle import ChannelShuffle  # noqa: F401

__all__ = ["ChannelShuffle"]
