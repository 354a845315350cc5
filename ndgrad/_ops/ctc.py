"""The connectionist temporal classification loss primitive ``ctc_loss`` (torch's
``CtcLossBackward0``): per batch element, the negative log-likelihood of its target sequence
under (T, N, C) log-probabilities, summed over all alignments by the forward (alpha)
recursion in log space.

params = (targets: one int64 array per batch element, input_lengths, target_lengths, blank,
zero_infinity). The extended target interleaves blanks: (blank, l1, blank, l2, ..., blank).

Invariants (torch's CPU kernel): the gradient is torch's ``exp(lp) - exp(log(sum alpha beta)
+ nll - lp)`` for frames inside the input length and 0 after it: the derivative with respect
to the logits when ``log_probs`` is a log_softmax (which torch assumes), not the plain
derivative of the forward; with ``zero_infinity`` an infinite loss gets a zero gradient.
torch implements neither double backward nor forward mode; ndgrad raises its errors.
"""

import numpy as np

from .losses import _not_implemented_op
from .registry import no_forward_ad, primitive

__all__ = []

_NEG_INF = -np.inf


def _lse(*terms):
    m = np.maximum.reduce(terms)
    safe = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        total = np.log(sum(np.exp(t - safe) for t in terms))
    return np.where(np.isfinite(m), safe + total, m)


def _extended(target, blank):
    ext = np.full(2 * target.shape[0] + 1, blank, np.int64)
    ext[1::2] = target
    # s may read s - 2 when the label differs from the one two places back (not a blank)
    skip = np.zeros(ext.shape[0], bool)
    skip[3::2] = ext[3::2] != ext[1:-2:2]
    return ext, skip


def _alpha(lp, ext, skip, length):
    s_len = ext.shape[0]
    la = np.full((max(length, 1), s_len), _NEG_INF)
    if length == 0:
        return la
    la[0, 0] = lp[0, ext[0]]
    if s_len > 1:
        la[0, 1] = lp[0, ext[1]]
    for t in range(1, length):
        prev = la[t - 1]
        one = np.concatenate(([_NEG_INF], prev[:-1]))
        two = np.where(skip, np.concatenate(([_NEG_INF, _NEG_INF], prev[:-2])), _NEG_INF)
        la[t] = _lse(prev, one, two) + lp[t, ext]
    return la


def _beta(lp, ext, skip, length):
    s_len = ext.shape[0]
    lb = np.full((max(length, 1), s_len), _NEG_INF)
    if length == 0:
        return lb
    lb[length - 1, -1] = lp[length - 1, ext[-1]]
    if s_len > 1:
        lb[length - 1, -2] = lp[length - 1, ext[-2]]
    skip_next = np.concatenate((skip[2:], [False, False]))  # s + 2 may come from s
    for t in range(length - 2, -1, -1):
        nxt = lb[t + 1]
        one = np.concatenate((nxt[1:], [_NEG_INF]))
        two = np.where(skip_next, np.concatenate((nxt[2:], [_NEG_INF, _NEG_INF])), _NEG_INF)
        lb[t] = _lse(nxt, one, two) + lp[t, ext]
    return lb


def _nll(la, length, s_len):
    if length == 0:
        return 0.0 if s_len == 1 else np.inf
    last = la[length - 1]
    return -(_lse(last[-1], last[-2]) if s_len > 1 else last[-1])


def _ctc_fwd(lp, p):
    targets, in_lens, tgt_lens, blank, _ = p
    lp64 = lp.astype(np.float64)
    out = np.empty(lp.shape[1], np.float64)
    for b in range(lp.shape[1]):
        ext, skip = _extended(targets[b], blank)
        la = _alpha(lp64[:, b], ext, skip, in_lens[b])
        out[b] = _nll(la, in_lens[b], ext.shape[0])
    return out.astype(lp.dtype)


def _ctc_bw_fwd(g, lp, p):
    targets, in_lens, tgt_lens, blank, zero_infinity = p
    lp64 = lp.astype(np.float64)
    grad = np.zeros(lp.shape, np.float64)
    gd = np.broadcast_to(g.astype(np.float64), (lp.shape[1],))
    n_classes = lp.shape[2]
    for b in range(lp.shape[1]):
        length = in_lens[b]
        ext, skip = _extended(targets[b], blank)
        x = lp64[:length, b]
        la = _alpha(lp64[:, b], ext, skip, length)[:length]
        lb = _beta(lp64[:, b], ext, skip, length)[:length]
        nll = _nll(la, length, ext.shape[0])
        if zero_infinity and nll == np.inf:
            continue
        ab = la + lb
        lcab = np.full((length, n_classes), _NEG_INF)
        for c in np.unique(ext):
            cols = ab[:, ext == c]
            m = cols.max(1)
            safe = np.where(np.isfinite(m), m, 0)
            with np.errstate(divide="ignore"):
                total = np.log(np.exp(cols - safe[:, None]).sum(1))
            lcab[:, c] = np.where(np.isfinite(m), safe + total, m)
        with np.errstate(invalid="ignore", over="ignore"):
            grad[:length, b] = (np.exp(x) - np.exp(lcab + nll - x)) * gd[b]
    return grad.astype(lp.dtype)


CTC_LOSS = primitive("ctc_loss", _ctc_fwd, "CtcLossBackward0", save=((0, None),))
CTC_LOSS_BW = _not_implemented_op("_ctc_loss_backward", _ctc_bw_fwd)


@CTC_LOSS.def_vjp
def _(ctx, g):
    (lp,) = ctx.saved
    return (CTC_LOSS_BW.call(g, lp, params=ctx._params),)


CTC_LOSS.def_jvp(no_forward_ad("_ctc_loss"))
