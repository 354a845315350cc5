"""The fused recurrent layer ``mkldnn_rnn_layer`` (torch's ``MkldnnRnnLayerBackward0``): one
LSTM layer in one direction over a whole padded sequence, the kernel torch runs a float32
``nn.LSTM`` with on the CPU. ``nn.modules.rnn`` calls it per layer and direction; packed
sequences, projections and other dtypes keep the per-step cells (``rnn_cells.py``), as in
torch.

Inputs (input (L, N, I), w_ih (4H, I), w_hh (4H, H), b_ih (4H,), b_hh (4H,), hx (N, H),
cx (N, H)); a layer without biases passes zeros, as torch does. Outputs (output (L, N, H),
hy, cy, workspace); params = (reverse, hidden_size, has_biases, train, num_layers,
bidirectional), the last five only for the node's ``_saved_*`` attributes, as torch's.

The workspace (not differentiable) holds, per step, the four gate activations (torch's order
i, f, g, o) and the new cell state: (L, 5, N, H), each block contiguous. The VJP is backpropagation through time on
it: a plain backward (no graph recorded) runs on arrays, one matrix product per step for the
recurrence and one per weight for the whole sequence; under ``create_graph`` the steps are
recomputed in ndgrad ops from the saved inputs and the same formulas run on them, so double
backward works. torch has no forward-mode formula for this op; neither does ndgrad.
"""

import numpy as np

from .. import _state
from .._tensor import Tensor
from .joins import cat, stack
from .registry import no_forward_ad, primitive

__all__ = []

_tls = _state.tls


def _steps(n, reverse):
    return range(n - 1, -1, -1) if reverse else range(n)


def _layer_fwd(x, w_ih, w_hh, b_ih, b_hh, hx, cx, p):
    reverse = p[0]
    n_steps, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    h2, h3, h4 = 2 * hidden, 3 * hidden, 4 * hidden
    dt = x.dtype
    # the input projection of every step at once; both biases join it (as the per-step
    # cells' fused path adds them)
    gi = ((x.reshape(n_steps * batch, -1) @ w_ih.T + b_ih) + b_hh).reshape(
        n_steps, batch, h4)
    out = np.empty((n_steps, batch, hidden), dt)
    work = np.empty((n_steps, 5, batch, hidden), dt)
    w_hh_t = w_hh.T
    h, c = hx, cx
    with np.errstate(over="ignore"):
        for t in _steps(n_steps, reverse):
            w = work[t]
            gates = h @ w_hh_t
            gates += gi[t]
            np.tanh(gates[:, h2:h3], out=w[2])
            # the sigmoid 1 / (1 + exp(-a)) of the other three gates, in place
            np.negative(gates, out=gates)
            np.exp(gates, out=gates)
            gates += 1
            np.reciprocal(gates, out=gates)
            w[0] = gates[:, :hidden]
            w[1] = gates[:, hidden:h2]
            w[3] = gates[:, h3:]
            c_new = w[4]
            np.multiply(w[1], c, out=c_new)
            c_new += w[0] * w[2]
            h = out[t]
            np.multiply(w[3], np.tanh(c_new), out=h)
            c = c_new
    if n_steps == 0:
        return out, hx.copy(), cx.copy(), work
    return out, h.copy(), c.copy(), work


MKLDNN_RNN_LAYER = primitive(
    "mkldnn_rnn_layer", _layer_fwd, "MkldnnRnnLayerBackward0",
    save=((0, None), (1, None), (2, None), (3, None), (4, None), (5, None), (6, None),
          ("out", None), ("out1", None), ("out2", None), ("out3", None)),
    n_out=4, diff_outs=(True, True, True, False))
MKLDNN_RNN_LAYER.def_jvp(no_forward_ad("mkldnn_rnn_layer"))


def _bptt_arrays(x, w_ih, w_hh, hx, cx, out, work, g_out, g_hy, g_cy, reverse, need):
    """Gradients of (x, w_ih, w_hh, b_ih, b_hh, hx, cx) on arrays; `need` per input. What does
    not depend on the recurrence (the gates' local derivatives) is computed for all steps at
    once; the loop over steps keeps only the recurrence (a few operations per step)."""
    n_steps, batch = x.shape[:2]
    hidden = w_hh.shape[1]
    h4 = 4 * hidden
    dt = x.dtype
    i, f, g, o, c = (work[:, k] for k in range(5))
    # the states each step started from, in step order
    if n_steps:
        if reverse:
            c_prev = np.concatenate([c[1:], cx[None]], 0)
            h_prev = np.concatenate([out[1:], hx[None]], 0)
        else:
            c_prev = np.concatenate([cx[None], c[:-1]], 0)
            h_prev = np.concatenate([hx[None], out[:-1]], 0)
    else:
        c_prev = h_prev = np.empty((0, batch, hidden), dt)
    tc = np.tanh(c)
    dh_to_dc = o * (1 - tc * tc)          # d c_t / d h_t through h = o tanh(c)
    dh_to_do = tc * o * (1 - o)           # d a_o / d h_t
    # d a_{i,f,g} / d c_t, side by side as (L, N, 3, H)
    dc_to = np.stack([g * i * (1 - i), c_prev * f * (1 - f), i * (1 - g * g)], 2)
    d_gates = np.empty((n_steps, batch, 4, hidden), dt)
    dh = np.zeros((batch, hidden), dt) if g_hy is None else g_hy.copy()
    dc = np.zeros((batch, hidden), dt) if g_cy is None else g_cy.copy()
    for t in _steps(n_steps, not reverse):
        if g_out is not None:
            dh += g_out[t]
        dc += dh * dh_to_dc[t]
        dg = d_gates[t]
        np.multiply(dc[:, None, :], dc_to[t], out=dg[:, :3])
        np.multiply(dh, dh_to_do[t], out=dg[:, 3])
        dc *= f[t]
        dh = dg.reshape(batch, h4) @ w_hh
    flat = d_gates.reshape(n_steps * batch, h4)
    grads = [None] * 7
    if need[0]:
        grads[0] = (flat @ w_ih).reshape(x.shape)
    if need[1]:
        grads[1] = flat.T @ x.reshape(n_steps * batch, -1)
    if need[2]:
        grads[2] = flat.T @ h_prev.reshape(n_steps * batch, hidden)
    if need[3] or need[4]:
        gb = flat.sum(0)
        grads[3] = gb if need[3] else None
        grads[4] = gb.copy() if need[4] else None
    if need[5]:
        grads[5] = dh
    if need[6]:
        grads[6] = dc
    return grads


def _bptt_graph(x, w_ih, w_hh, b_ih, b_hh, hx, cx, g_out, g_hy, g_cy, reverse, need):
    """The same gradients in ndgrad ops, the steps recomputed from the inputs so that the
    result is differentiable in all of them (double backward)."""
    n_steps = x.shape[0]
    gi = x.matmul(w_ih.t()) + b_ih + b_hh
    w_hh_t = w_hh.t()
    h, c = hx, cx
    acts = {}
    for t in _steps(n_steps, reverse):
        a_i, a_f, a_g, a_o = (gi[t] + h.mm(w_hh_t)).chunk(4, 1)
        i, f, g, o = a_i.sigmoid(), a_f.sigmoid(), a_g.tanh(), a_o.sigmoid()
        c_new = f * c + i * g
        acts[t] = (i, f, g, o, c, c_new, h)
        h, c = o * c_new.tanh(), c_new
    dh = g_hy if g_hy is not None else hx * 0
    dc = g_cy if g_cy is not None else cx * 0
    d_gates = [None] * n_steps
    for t in reversed(list(_steps(n_steps, reverse))):
        i, f, g, o, c_prev, c_t, _ = acts[t]
        if g_out is not None:
            dh = dh + g_out[t]
        tc = c_t.tanh()
        dc = dc + dh * o * (1 - tc * tc)
        d = cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                 dh * tc * o * (1 - o)], 1)
        d_gates[t] = d
        dc = dc * f
        dh = d.mm(w_hh)
    grads = [None] * 7
    if n_steps == 0:
        return [x * 0 if need[0] else None, w_ih * 0 if need[1] else None,
                w_hh * 0 if need[2] else None, b_ih * 0 if need[3] else None,
                b_hh * 0 if need[4] else None, dh if need[5] else None,
                dc if need[6] else None]
    flat = stack(d_gates, 0).reshape(-1, d_gates[0].shape[1])
    if need[0]:
        grads[0] = flat.mm(w_ih).reshape(x.shape)
    if need[1]:
        grads[1] = flat.t().mm(x.reshape(-1, x.shape[2]))
    if need[2]:
        h_prev = stack([acts[t][6] for t in range(n_steps)], 0)
        grads[2] = flat.t().mm(h_prev.reshape(-1, h_prev.shape[2]))
    if need[3]:
        grads[3] = flat.sum(0)
    if need[4]:
        grads[4] = flat.sum(0)
    if need[5]:
        grads[5] = dh
    if need[6]:
        grads[6] = dc
    return grads


def _bptt_fwd(x, w_ih, w_hh, hx, cx, out, work, g_out, g_hy, g_cy, p):
    reverse, need, present = p
    g_out, g_hy, g_cy = (a if k else None for a, k in zip((g_out, g_hy, g_cy), present))
    grads = _bptt_arrays(x, w_ih, w_hh, hx, cx, out, work, g_out, g_hy, g_cy, reverse, need)
    z = np.zeros((), x.dtype)
    return tuple(z if a is None else a for a in grads)


# The arrays rule as an op (run with grad mode off only, so it records no node): what an
# observer such as ndgrad.compile's tracer sees of a plain backward, a gradient not needed
# being a 0-d zero.
BPTT_ARRAYS = primitive("mkldnn_rnn_layer_backward", _bptt_fwd, "MkldnnRnnLayerBackwardBackward0",
                        n_out=7)


@MKLDNN_RNN_LAYER.def_vjp
def _(ctx, gs):
    x, w_ih, w_hh, b_ih, b_hh, hx, cx, out, _, _, work = ctx.saved
    gs = tuple(gs) + (None,) * (3 - len(gs))
    g_out, g_hy, g_cy = gs[0], gs[1], gs[2]
    reverse = ctx._params[0]
    need = ctx.needs_input_grad
    if not _tls.grad_enabled and _state.special:
        # observed (ndgrad.compile's trace): the same arrays rule as one op; an absent
        # gradient passes x in its place, flagged absent in the parameters
        present = tuple(a is not None for a in (g_out, g_hy, g_cy))
        grads = BPTT_ARRAYS.call(x, w_ih, w_hh, hx, cx, out, work,
                                 *(x if a is None else a for a in (g_out, g_hy, g_cy)),
                                 params=(reverse, tuple(need), present))
        return tuple(gr if n else None for gr, n in zip(grads, need))
    if not _tls.grad_enabled:
        grads = _bptt_arrays(x._data, w_ih._data, w_hh._data, hx._data, cx._data, out._data,
                             work._data, None if g_out is None else g_out._data,
                             None if g_hy is None else g_hy._data,
                             None if g_cy is None else g_cy._data, reverse, need)
        return tuple(None if a is None else Tensor(a) for a in grads)
    return tuple(_bptt_graph(x, w_ih, w_hh, b_ih, b_hh, hx, cx, g_out, g_hy, g_cy, reverse,
                             need))


def mkldnn_rnn_layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse, hidden_size,
                     has_biases, train, num_layers=1, bidirectional=False):
    """One LSTM layer over a padded sequence: (output, hy, cy) and the workspace."""
    return MKLDNN_RNN_LAYER.call(
        input, w_ih, w_hh, b_ih, b_hh, hx, cx,
        params=(reverse, hidden_size, has_biases, train, num_layers, bidirectional))
