"""``ctc_loss`` (functional and torch's top-level form with an integer reduction): torch's
argument checks and its composition around the primitive of ``_ops/ctc.py``: zero_infinity
is a ``where`` (WhereBackward0), 'mean' divides each loss by its clamped target length and
averages (MeanBackward0), 'sum' sums (SumBackward0).

Invariant: every check runs before the primitive; nothing is mutated.
"""

import numpy as np

from .._ops.comparison import where
from .._ops.ctc import CTC_LOSS
from .._ops.linalg_common import _tname
from .._tensor import Tensor

__all__ = ["ctc_loss"]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
_WHERE = "while checking arguments for ctc_loss_allocate_outputs"


def _lengths(v, name):
    if isinstance(v, Tensor):
        if v._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return v._data.reshape(-1).astype(np.int64)
    return np.asarray(list(v) if isinstance(v, (list, tuple)) else [v], np.int64)


def ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank=0,
                     reduction=1, zero_infinity=False):
    """torch.ctc_loss: ``reduction`` 0 none, 1 mean, 2 sum."""
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs' ({_WHERE})")
    if lp._data.dtype.kind != "f":
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{_tname(lp)}'")
    tg = targets._data if batched or targets.dim() != 1 else targets._data[None]
    if not batched:
        tg = targets._data.reshape(1, -1)
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if il.shape[0] != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.shape[0] != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    tg = tg.astype(np.int64)
    for b in range(n):
        if tl[b] < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {tl[b]} ({_WHERE})")
        if il[b] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                               f"value {il[b]} ({_WHERE})")
        if il[b] > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but "
                               f"got value {il[b]} ({_WHERE})")
    if tg.ndim == 1:
        total = int(tl.sum())
        if tg.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {tg.shape[0]} for argument #2 'targets' ({_WHERE})")
        starts = np.concatenate(([0], np.cumsum(tl)[:-1]))
        seqs = tuple(tg[s:s + k] for s, k in zip(starts, tl))
    else:
        for b in range(n):
            if tl[b] > tg.shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {tl[b]} at "
                                   f"dimension 1, but got size {tg.shape[1]} for argument #2 "
                                   f"'targets' ({_WHERE})")
        seqs = tuple(tg[b, :tl[b]] for b in range(n))
    params = (seqs, tuple(int(v) for v in il), tuple(int(v) for v in tl), int(blank),
              bool(zero_infinity))
    loss = CTC_LOSS.call(lp, params=params)
    if zero_infinity:
        loss = where(loss == float("inf"), Tensor(np.zeros((), loss._data.dtype)), loss)
    if not batched:
        loss = loss.squeeze(0)
    if reduction == 1:
        denom = Tensor(np.maximum(tl, 1).reshape(loss.shape) if batched else
                       np.asarray(max(int(tl[0]), 1)))
        return (loss / denom).mean()
    if reduction == 2:
        return loss.sum()
    return loss


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The CTC loss of (T, N, C) (or (T, C)) log-probabilities against target sequences."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return ctc_loss_reduced(log_probs, targets, input_lengths, target_lengths, blank,
                            _REDUCTIONS[reduction], zero_infinity)
