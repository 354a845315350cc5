"""The bag-of-embeddings primitive ``embedding_bag`` (torch's ``EmbeddingBagBackward0``): rows
of a weight picked by a flat index list and reduced per bag by sum (optionally weighted per
sample), mean or max.

params = (indices (M,), bag of each index (M,), kept (M,) bool: not the padding index,
number of bags, mode (0 sum, 1 mean, 2 max), scale_grad_by_freq). Inputs: the weight and,
in sum mode, optionally the per-sample weights.

Invariants: an empty bag (or one holding only padding) gives a zero row; padding entries
neither contribute nor receive gradient; max keeps, per feature, the first maximal entry of
the bag. The VJP is written in ndgrad ops (index_select, index_add, scatter_add), so it is
differentiable again. torch has no forward-mode formula; neither does ndgrad.
"""

import numpy as np

from .._tensor import Tensor
from .registry import no_forward_ad, primitive

__all__ = []


def bag_max_indices(w, p):
    """(num_bags, D) row of the first maximum per bag and feature; -1 for an empty bag."""
    idx, bags, kept, nb = p[:4]
    out = np.full((nb, w.shape[1]), -1, np.int64)
    best = np.full((nb, w.shape[1]), -np.inf)
    for j in range(idx.shape[0]):  # in order, so a tie keeps the first entry
        if not kept[j]:
            continue
        b, row = bags[j], w[idx[j]]
        better = (row > best[b]) | (out[b] < 0)
        best[b] = np.where(better, row, best[b])
        out[b] = np.where(better, idx[j], out[b])
    return out


def freq_scale(idx, num):
    """Per weight row, the factor scale_grad_by_freq applies, as torch's CPU kernel computes
    it: its i-th distinct index (in sorted order) is divided by the count of the i-th entry of
    the sorted indices, which is that index's own count except after a run of repeats (a
    quirk of torch's loop that ndgrad reproduces to give torch's gradients)."""
    srt = np.sort(idx)
    uniq = np.unique(srt)
    counts = np.bincount(idx, minlength=num)
    scale = np.ones(num)
    scale[uniq] = 1.0 / counts[srt[:uniq.shape[0]]]
    return scale


def bag_counts(p):
    idx, bags, kept, nb = p[:4]
    return np.bincount(bags[kept], minlength=nb)


def _fwd(*args):
    *arrays, p = args
    w = arrays[0]
    idx, bags, kept, nb, mode = p[:5]
    if mode == 2:
        mi = bag_max_indices(w, p)
        rows = w[np.maximum(mi, 0), np.arange(w.shape[1])]
        return np.where(mi >= 0, rows, 0).astype(w.dtype)
    rows = w[idx] * kept[:, None].astype(w.dtype)
    if len(arrays) > 1:
        rows = rows * arrays[1][:, None]
    out = np.zeros((nb, w.shape[1]), w.dtype)
    np.add.at(out, bags, rows)
    if mode == 1:
        out = out / np.maximum(bag_counts(p), 1)[:, None].astype(w.dtype)
    return out


def _vjp(ctx, g):
    p = ctx._params
    w = ctx.saved[0]
    idx, bags, kept, nb, mode, by_freq = p
    num = w.shape[0]
    dt = g._data.dtype
    need = ctx.needs_input_grad
    gw = gp = None
    if mode == 2:
        mi = bag_max_indices(w._data, p)
        gm = g * Tensor((mi >= 0).astype(dt))
        gw = Tensor(np.zeros(w.shape, dt)).scatter_add(0, Tensor(np.maximum(mi, 0)), gm)
        return (gw,)
    coef = kept.astype(dt)
    if mode == 1:
        coef = coef / np.maximum(bag_counts(p), 1)[bags].astype(dt)
    if by_freq:
        coef = coef * freq_scale(idx, num).astype(dt)[idx]
    rows = g.index_select(0, Tensor(bags.astype(np.int64)))  # (M, D)
    if need[0]:
        src = rows * Tensor(coef[:, None])
        if len(ctx.saved) > 1:
            src = src * ctx.saved[1].unsqueeze(1)
        gw = Tensor(np.zeros(w.shape, dt)).index_add(0, Tensor(idx.astype(np.int64)), src)
    if len(ctx.saved) > 1:
        if need[1]:
            picked = w.index_select(0, Tensor(idx.astype(np.int64)))
            gp = (rows * picked).sum(1) * Tensor(kept.astype(dt))
        return gw, gp
    return (gw,)


EMBEDDING_BAG = primitive("embedding_bag", _fwd, "EmbeddingBagBackward0",
                          save=((0, None), (1, None)))
EMBEDDING_BAG_PLAIN = primitive("embedding_bag_plain", _fwd, "EmbeddingBagBackward0",
                                save=((0, None),))
for _op in (EMBEDDING_BAG, EMBEDDING_BAG_PLAIN):
    _op.def_vjp(_vjp)
    _op.def_jvp(no_forward_ad("_embedding_bag"))
