"""``rearrange``: torch.func's native einops-style reordering of a tensor's elements.

A pattern ``"lhs -> rhs"`` names the input's dims on the left and the output's on the right;
a parenthesized group is several axes merged into one dim, ``...`` stands for the dims not
named, ``()`` for a dim of size 1. The result is one reshape into the elementary axes, one
permute into the right side's order and one reshape into its groups (views where possible,
so gradients flow as through any view). Invariant: every axis appears once on each side.
"""

import math
import re

from .._ops.joins import stack
from .._tensor import Tensor

__all__ = ["rearrange"]

_ELLIPSIS = "\u2026"  # "..." as one token
_TOKEN = re.compile(r"\(|\)|" + _ELLIPSIS + r"|[A-Za-z_][A-Za-z0-9_]*|1(?![0-9])|\S")


def _parse(side):
    """A side of the pattern as a list of groups, each a list of axis names."""
    groups, current = [], None
    for tok in _TOKEN.findall(side.replace("...", _ELLIPSIS)):
        if tok == "(":
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets "
                                 "not allowed)")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append(current)
            current = None
        elif tok == "1":  # an anonymous axis of size 1, as "()"
            if current is None:
                groups.append([])
        elif tok == _ELLIPSIS or tok.isidentifier():
            if current is None:
                groups.append([tok])
            else:
                current.append(tok)
        else:
            raise ValueError(f"Unknown character '{tok}'")
    if current is not None:
        raise ValueError("Brackets are not balanced")
    names = [n for g in groups for n in g]
    dup = {n for n in names if names.count(n) > 1 and n != _ELLIPSIS}
    if dup:
        raise ValueError(f"Indexing expression contains duplicate dimension \"{dup.pop()}\"")
    if names.count(_ELLIPSIS) > 1:
        raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                         "ellipsis per side")
    return groups


def rearrange(tensor, pattern, **axes_lengths):
    """Reorder, merge and split the dims of `tensor` (a tensor, or a sequence of tensors
    stacked along a new first dim) as `pattern` says (torch.func.rearrange, einops' syntax).

    Example::

        >>> import ndgrad as torch
        >>> torch.func.rearrange(torch.arange(6).reshape(2, 3), "a b -> b a").shape
        torch.Size([3, 2])
    """
    if not isinstance(tensor, Tensor):
        tensor = stack(list(tensor), 0)
    if "->" not in pattern:
        raise ValueError("Pattern must contain '->'")
    left_s, right_s = pattern.split("->", 1)
    left, right = _parse(left_s), _parse(right_s)
    lnames = {n for g in left for n in g}
    rnames = {n for g in right for n in g}
    if lnames != rnames:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {lnames ^ rnames}")
    unknown = set(axes_lengths) - lnames
    if unknown:
        raise ValueError(f"Identifiers only on one side of expression (should be on both): "
                         f"{unknown}")
    shape = tuple(tensor.shape)
    has_ellipsis = _ELLIPSIS in lnames
    n_named = len(left) - (1 if has_ellipsis else 0)
    if (not has_ellipsis and n_named != len(shape)) or (has_ellipsis and len(shape) < n_named):
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({len(shape)})")
    # The elementary axes of the left side with their sizes (the ellipsis as its dims).
    sizes, elementary, dim = {}, [], 0
    for group in left:
        if group == [_ELLIPSIS]:
            k = len(shape) - n_named
            ell = [f"{_ELLIPSIS}{i}" for i in range(k)]
            for i, name in enumerate(ell):
                sizes[name] = shape[dim + i]
            elementary += ell
            dim += k
            continue
        known = [axes_lengths[n] for n in group if n in axes_lengths]
        missing = [n for n in group if n not in axes_lengths]
        total = shape[dim]
        if len(missing) > 1:
            raise ValueError(f"Could not infer sizes for {set(missing)}")
        prod = math.prod(known)
        if missing:
            if prod == 0 or total % prod:
                raise ValueError(f"Shape mismatch, can't divide axis of length {total} in "
                                 f"chunks of {prod}")
            axes_lengths_group = dict(zip(missing, [total // prod]))
        else:
            if prod != total:
                raise ValueError(f"Shape mismatch, {total} != {prod}")
            axes_lengths_group = {}
        for n in group:
            sizes[n] = axes_lengths[n] if n in axes_lengths else axes_lengths_group[n]
        elementary += group
        dim += 1
    ell_names = [n for n in elementary if n.startswith(_ELLIPSIS)]
    order, out_shape = [], []
    for group in right:
        names = ell_names if group == [_ELLIPSIS] else \
            [m for n in group for m in (ell_names if n == _ELLIPSIS else [n])]
        order += [elementary.index(n) for n in names]
        if group == [_ELLIPSIS]:
            out_shape += [sizes[n] for n in names]
        else:
            out_shape.append(math.prod(sizes[n] for n in names))
    x = tensor.reshape([sizes[n] for n in elementary])
    if order != list(range(len(order))):
        x = x.permute(order)
    return x.reshape(out_shape)
