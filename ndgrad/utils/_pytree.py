"""``torch.utils._pytree``'s everyday functions, for code that flattens nested containers
the way torch's own helpers do: ``tree_flatten``, ``tree_unflatten``, ``tree_map``,
``tree_leaves``, ``tree_structure``. Containers are tuples, lists, dicts, OrderedDicts and
named tuples (torch.func's pytrees, ``ndgrad/_functorch/pytree.py``); a spec is ndgrad's own
(opaque) value, usable only with these functions."""

from .._functorch.pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["tree_flatten", "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]


def tree_leaves(tree):
    """The leaves of `tree`, left to right."""
    return tree_flatten(tree)[0]


def tree_structure(tree):
    """The spec of `tree` (its containers, without the leaves)."""
    return tree_flatten(tree)[1]
