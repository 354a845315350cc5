"""``torch.nn.modules.utils``: the argument normalisers layer code imports by this path.

``_single`` / ``_pair`` / ``_triple`` / ``_quadruple`` turn an int into an n-tuple and pass an
iterable through as a tuple (as torch: a string is an iterable); ``_reverse_repeat_tuple`` and
``_list_with_default`` are the padding and adaptive-size helpers; and
``consume_prefix_in_state_dict_if_present`` strips a prefix (``"module."`` from DataParallel)
from a state dict's keys in place, its ``_metadata`` included.
"""

import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Each element of `t` repeated `n` times, last element first (F.pad's order)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """`out_size` with each None replaced by the matching trailing entry of `defaults`."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip `prefix` from every key of `state_dict` that has it (in place, metadata too)."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # the metadata of the top module is under "", of its children under "child"
        if len(key) == 0:
            continue
        if key == prefix.replace(".", "") or key.startswith(prefix):
            metadata[key[len(prefix):]] = metadata.pop(key)
