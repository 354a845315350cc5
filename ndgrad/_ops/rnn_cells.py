"""The pointwise step of the recurrent cells: ``lstm_cell_pointwise`` (gates, c) -> (h, c')
and ``gru_cell_pointwise`` (gi, gh, h) -> h', with torch's gate orders (i, f, g, o and
r, z, n). ``nn.modules.rnn`` combines them with the fused linear (``_ops/linear.py``).

Invariants: a plain backward (no graph recorded) runs the formulas on arrays; under
``create_graph`` the same formulas run in ndgrad ops, differentiable in every input.
"""

import numpy as np

from .. import _state
from .._tensor import Tensor
from .registry import primitive
from .joins import cat

__all__ = []

_tls = _state.tls


# ============================================================================ LSTM cell
def _lstm_acts(gates):
    h4 = gates.shape[1] // 4
    with np.errstate(over="ignore"):
        sig = 1 / (1 + np.exp(-gates))
    i, f, o = sig[:, :h4], sig[:, h4:2 * h4], sig[:, 3 * h4:]
    g = np.tanh(gates[:, 2 * h4:3 * h4])
    return i, f, g, o


def _lstm_cell_fwd(gates, c, p):
    i, f, g, o = _lstm_acts(gates)
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new


# The pointwise part of an LSTM step (gate order i, f, g, o as torch): (gates, c) -> (h, c').
LSTM_CELL = primitive("lstm_cell_pointwise", _lstm_cell_fwd, "LstmCellPointwiseBackward0",
                      save=((0, None), (1, None)), n_out=2)


def _lstm_cell_bw_fwd(gates, cd, ghd, gcd, p):
    """(d gates, d c) on arrays; p = whether the gradients of h and c' are present."""
    i, f, g, o = _lstm_acts(gates)
    c_new = f * cd + i * g
    tc = np.tanh(c_new)
    dc = gcd.copy() if p[1] else np.zeros_like(cd)
    if p[0]:
        dc += ghd * o * (1 - tc * tc)
        do = ghd * tc * o * (1 - o)
    else:
        do = np.zeros_like(cd)
    dgates = np.concatenate([dc * g * i * (1 - i), dc * cd * f * (1 - f),
                             dc * i * (1 - g * g), do], axis=1)
    return dgates, dc * f


# The arrays rule as an op, run with grad mode off only (it records no node).
LSTM_CELL_BW = primitive("lstm_cell_pointwise_backward", _lstm_cell_bw_fwd,
                         "LstmCellPointwiseBackwardBackward0", n_out=2)


@LSTM_CELL.def_vjp
def _(ctx, gs):
    gates, c = ctx.saved
    gh, gc = tuple(gs) + (None,) * (2 - len(gs))
    if not _tls.grad_enabled:
        # No graph is being recorded (plain backward): the same formulas on arrays (as an
        # op when observed, e.g. by ndgrad.compile's tracer; an absent gradient passes c in
        # its place, flagged absent in the parameters).
        if _state.special:
            return LSTM_CELL_BW.call(gates, c, c if gh is None else gh, c if gc is None else gc,
                                     params=(gh is not None, gc is not None))
        dgates, dc = _lstm_cell_bw_fwd(gates._data, c._data, gh is not None and gh._data,
                                       gc is not None and gc._data, (gh is not None,
                                                                     gc is not None))
        return Tensor(dgates), Tensor(dc)
    # create_graph: the rule in ndgrad ops, differentiable in gates and c.
    a_i, a_f, a_g, a_o = gates.chunk(4, 1)
    i, f, g, o = a_i.sigmoid(), a_f.sigmoid(), a_g.tanh(), a_o.sigmoid()
    c_new = f * c + i * g
    tc = c_new.tanh()
    dc = gc if gc is not None else None
    do = None
    if gh is not None:
        t = gh * o * (1 - tc * tc)
        dc = t if dc is None else dc + t
        do = gh * tc * o * (1 - o)
    if dc is None:
        dc = c * 0
    if do is None:
        do = c * 0
    dgates = cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g), do], 1)
    return dgates, dc * f


# ============================================================================ GRU cell
def _gru_acts(gi, gh):
    h3 = gi.shape[1] // 3
    with np.errstate(over="ignore"):
        rz = 1 / (1 + np.exp(-(gi[:, :2 * h3] + gh[:, :2 * h3])))
    r, z = rz[:, :h3], rz[:, h3:]
    n = np.tanh(gi[:, 2 * h3:] + r * gh[:, 2 * h3:])
    return r, z, n


def _gru_cell_fwd(gi, gh, h, p):
    r, z, n = _gru_acts(gi, gh)
    return (1 - z) * n + z * h


# The pointwise part of a GRU step (gate order r, z, n as torch): (gi, gh, h) -> h'.
GRU_CELL = primitive("gru_cell_pointwise", _gru_cell_fwd, "GruCellPointwiseBackward0",
                     save=((0, None), (1, None), (2, None)))


def _gru_cell_bw_fwd(gi, ghd, hd, gd, p):
    """(d gi, d gh, d h) on arrays."""
    r, z, n = _gru_acts(gi, ghd)
    h3 = hd.shape[1]
    da_n = gd * (1 - z) * (1 - n * n)
    da_r = da_n * ghd[:, 2 * h3:] * r * (1 - r)
    da_z = gd * (hd - n) * z * (1 - z)
    dgi = np.concatenate([da_r, da_z, da_n], axis=1)
    dgh = np.concatenate([da_r, da_z, da_n * r], axis=1)
    return dgi, dgh, gd * z


# The arrays rule as an op, run with grad mode off only (it records no node).
GRU_CELL_BW = primitive("gru_cell_pointwise_backward", _gru_cell_bw_fwd,
                        "GruCellPointwiseBackwardBackward0", n_out=3)


@GRU_CELL.def_vjp
def _(ctx, g):
    gi, gh, h = ctx.saved
    if not _tls.grad_enabled:
        if _state.special:  # observed: the arrays rule as an op
            return GRU_CELL_BW.call(gi, gh, h, g)
        return tuple(Tensor(a) for a in _gru_cell_bw_fwd(gi._data, gh._data, h._data, g._data,
                                                         None))
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    da_n = g * (1 - z) * (1 - n * n)
    da_r = da_n * h_n * r * (1 - r)
    da_z = g * (h - n) * z * (1 - z)
    return cat([da_r, da_z, da_n], 1), cat([da_r, da_z, da_n * r], 1), g * z
