"""The pytrees of torch.func: nested tuples, lists, dicts and OrderedDicts whose leaves are anything else.

Named tuples (``torch.return_types.max``, ``collections.namedtuple`` types) are nodes like
tuples whose spec keeps their type, so a structure comes back as the same named tuple.
``tree_flatten`` gives the leaves (left to right, dict keys in insertion order) and a spec
that ``tree_unflatten`` turns back into the same structure; ``broadcast_prefix`` expands a
prefix tree (``in_dims=0`` for a tuple of arguments) to one entry per leaf of a full tree.
"""

from collections import OrderedDict

__all__ = ["broadcast_prefix", "spec_str", "tree_flatten", "tree_map", "tree_unflatten"]


def tree_flatten(tree):
    """``(leaves, spec)`` of `tree`. A spec is None for a leaf, else ``(type, keys, children)``."""
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves):
    t = type(tree)
    if t is tuple or t is list:
        return (t, None, [_flatten(x, leaves) for x in tree])
    if t is dict or t is OrderedDict:
        keys = list(tree)
        return (t, keys, [_flatten(tree[k], leaves) for k in keys])
    if _is_namedtuple(t):
        return (t, None, [_flatten(x, leaves) for x in tree])
    leaves.append(tree)
    return None


def _is_namedtuple(t):
    return issubclass(t, tuple) and isinstance(getattr(t, "_fields", None), tuple)


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec is None:
        return next(it)
    t, keys, children = spec
    if t is dict or t is OrderedDict:
        return t((k, _unflatten(it, c)) for k, c in zip(keys, children))
    if t is tuple or t is list:
        return t(_unflatten(it, c) for c in children)
    return t(*[_unflatten(it, c) for c in children])  # a named tuple


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def spec_str(spec):
    """torch's printed form of a spec (``TreeSpec(tuple, None, [*, *])``), for messages."""
    if spec is None:
        return "*"
    t, keys, children = spec
    inner = ",\n  ".join(spec_str(c) for c in children)
    return f"TreeSpec({t.__name__}, {keys}, [{inner}])"


def broadcast_prefix(prefix, tree, is_leaf_value):
    """One value of `prefix` per leaf of `tree`: a leaf of `prefix` (``is_leaf_value``) covers
    the whole subtree below it. Returns None when the structures disagree."""
    out = []
    if not _broadcast(prefix, tree, is_leaf_value, out):
        return None
    return out


def _broadcast(prefix, tree, is_leaf_value, out):
    if is_leaf_value(prefix):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return True
    tp, tt = type(prefix), type(tree)
    if tp in (tuple, list) and tt in (tuple, list):
        if tp is not tt or len(prefix) != len(tree):
            return False
        return all(_broadcast(p, t, is_leaf_value, out) for p, t in zip(prefix, tree))
    if tp in (dict, OrderedDict) and tt in (dict, OrderedDict):
        if set(prefix) != set(tree):
            return False
        return all(_broadcast(prefix[k], tree[k], is_leaf_value, out) for k in tree)
    return False
