"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, batch_first) and their
cells, with torch's parameter names, initialisation and gate order. The layers take a padded
batch or a ``nn.utils.rnn.PackedSequence`` (then only the running sequences advance at each
step, and h_n/c_n hold each sequence's state after its own last step).

The input projection of a whole sequence is one matrix product per layer and direction; only
the recurrence itself loops over time steps.
"""

import math
import warnings
import weakref

from ... import _creation
from ..._ops import joins as J
from ..._ops.linear import LINEAR
from ..._ops.rnn_cells import GRU_CELL, LSTM_CELL
from ..._ops.rnn_layer import mkldnn_rnn_layer
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(mode, gi, h, w_hh, b_hh):
    """One time step given the precomputed input part ``gi`` (N, G*H)."""
    gh = F.linear(h, w_hh, b_hh)
    if mode == "RNN_TANH":
        return (gi + gh).tanh()
    if mode == "RNN_RELU":
        return (gi + gh).relu()
    # GRU
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (1 - z) * n + z * h


def _lstm_step(gi, h, c, w_hh, b_hh):
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return h, c


def _rnn_step_fused(mode, gi_t, h, w_hh_t, b_hh):
    """One RNN/GRU step with a precomputed ``W_hh.T`` (RNN: ``gi_t`` holds both biases)."""
    if mode == "GRU":
        gh = LINEAR.call(b_hh, h, w_hh_t) if b_hh is not None else h.mm(w_hh_t)
        return GRU_CELL.call(gi_t, gh, h)
    pre = LINEAR.call(gi_t, h, w_hh_t, params=True)
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _lstm_step_fused(gi_t, h, c, w_hh_t):
    """One LSTM step from ``gi_t`` (input projection plus both biases): one fused matmul-add
    and one fused pointwise cell (two graph nodes instead of about fifteen)."""
    gates = LINEAR.call(gi_t, h, w_hh_t, params=True)
    return LSTM_CELL.call(gates, c)


def _fusable(x, w, h, c):
    dt = x._data.dtype
    return dt.kind == "f" and w._data.dtype == dt and h._data.dtype == dt and \
        c._data.dtype == dt


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [Parameter(_creation.empty((gate_size, layer_input), dtype=dtype)),
                          Parameter(_creation.empty((gate_size, real_hidden), dtype=dtype))]
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                if bias:
                    params += [Parameter(_creation.empty(gate_size, dtype=dtype)),
                               Parameter(_creation.empty(gate_size, dtype=dtype))]
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                if proj_size > 0:
                    params.append(Parameter(_creation.empty((proj_size, hidden_size),
                                                            dtype=dtype)))
                    names.append(f"weight_hr_l{layer}{suffix}")
                for name, p in zip(names, params):
                    setattr(self, name, p)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    # ``_flat_weights`` is what forward reads, a plain list as in torch: setting one of the
    # named weights updates its entry, and code that assigns the whole list (libraries that
    # patch an RNN's weights with other tensors) makes forward use those tensors. It is
    # rebuilt from the named weights by ``_apply`` (``.to``, ``.double()``...) and, at each
    # forward, when a named weight is no longer the tensor it was built from (functional_call,
    # parametrizations): ``_flat_weight_refs`` remembers those tensors.
    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, w, None) for w in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                  for w in self._flat_weights]

    def _update_flat_weights(self):
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names):
            w = getattr(self, name, None)
            if w is not None and ref is not None and ref() is not w:
                self._init_flat_weights()
                return

    def __getstate__(self):
        self._update_flat_weights()
        state = super().__getstate__()
        state.pop("_flat_weight_refs", None)  # weak references do not pickle
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_flat_weights" in self.__dict__:
            self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                      for w in self._flat_weights]
        else:
            self._init_flat_weights()

    def __setattr__(self, name, value):
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and name in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(name)] = value
        super().__setattr__(name, value)

    def _apply(self, fn, recurse=True):
        out = super()._apply(fn, recurse)
        self._init_flat_weights()
        return out

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self):
        """No-op (cuDNN weight flattening has no meaning here)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _block(self, layer, direction):
        """The `_flat_weights` of one layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
        n = 2 + 2 * bool(self.bias) + (self.proj_size > 0)
        start = (layer * (2 if self.bidirectional else 1) + direction) * n
        return self._flat_weights[start:start + n]

    def _weights(self, layer, direction):
        block = self._block(layer, direction)
        if self.bias:
            return block[0], block[1], block[2], block[3]
        return block[0], block[1], None, None

    def _projection(self, layer, direction):
        if not self.proj_size:
            return None
        return self._block(layer, direction)[-1]

    def _run(self, input, hx, cx, batch_sizes=None):
        """input (L, N, I), or packed data (sum(lengths), I) with its ``batch_sizes``;
        hx/cx (layers*dirs, N, H). Returns output (same layout as input), h_n, c_n."""
        lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        self._update_flat_weights()
        layer_input = input
        h_out, c_out = [], []
        for layer in range(self.num_layers):
            dir_outputs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                out, h, c = self._direction(layer, direction, layer_input, hx[idx],
                                            cx[idx] if lstm else None, batch_sizes)
                dir_outputs.append(out)
                h_out.append(h)
                if lstm:
                    c_out.append(c)
            layer_input = dir_outputs[0] if num_directions == 1 else \
                J.cat(dir_outputs, layer_input.dim() - 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, J.stack(h_out, 0), (J.stack(c_out, 0) if lstm else None)

    def _direction(self, layer, direction, layer_input, h, c, batch_sizes):
        """One layer in one direction. Packed input (``batch_sizes`` given): at step t only
        the first ``batch_sizes[t]`` sequences advance; a sequence's final state is the
        state after its own last step (forward), or starts from ``hx`` at its last step
        (reverse)."""
        lstm = self.mode == "LSTM"
        w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
        w_hr = self._projection(layer, direction)
        if lstm and batch_sizes is None and w_hr is None and \
                _fusable(layer_input, w_hh, h, c) and layer_input._data.dtype.name == "float32" \
                and w_ih._data.dtype.name == "float32" and layer_input._data.size:
            # torch's CPU kernel for a float32 LSTM over a padded batch: one fused layer
            # (MkldnnRnnLayerBackward0); a layer without biases passes zeros, as torch does
            if b_ih is None:
                b_ih = b_hh = _creation.zeros(w_ih.shape[0], dtype=w_ih.dtype)
            out, h, c, _ = mkldnn_rnn_layer(layer_input, w_ih, w_hh, b_ih, b_hh, h, c,
                                            direction == 1, self.hidden_size, self.bias,
                                            self.training, self.num_layers,
                                            self.bidirectional)
            return out, h, c
        w_hr_t = w_hr.t() if w_hr is not None else None
        # One GEMM for the input projection of every step.
        gi_all = F.linear(layer_input, w_ih, b_ih)
        fused = _fusable(layer_input, w_hh, h, c if lstm else h)
        if fused:
            # the recurrent bias joins the input projection, except in GRU where it
            # sits inside r * (W_hn h + b_hn)
            if b_hh is not None and self.mode != "GRU":
                gi_all = gi_all + b_hh
            w_hh_t = w_hh.t()
        # unbind/split: one graph node whose backward assembles all step gradients at once
        # (per-step indexing would scatter a full-size gradient for every step).
        if batch_sizes is None:
            gi_steps = gi_all.unbind(0)
            seq_len = len(gi_steps)
        else:
            gi_steps = gi_all.split(list(batch_sizes), 0)
            seq_len = len(batch_sizes)
        steps = range(seq_len - 1, -1, -1) if direction == 1 else range(seq_len)
        outs = [None] * seq_len
        h0, c0 = h, c
        finished_h, finished_c = [], []
        if batch_sizes is not None and direction == 1:
            h, c = h0[:batch_sizes[-1]], (c0[:batch_sizes[-1]] if lstm else None)
        for t in steps:
            if batch_sizes is not None:
                b, running = batch_sizes[t], h.shape[0]
                if b < running:  # forward: the last sequences just ended
                    finished_h.append(h[b:])
                    h = h[:b]
                    if lstm:
                        finished_c.append(c[b:])
                        c = c[:b]
                elif b > running:  # reverse: longer sequences start from their hx rows
                    h = J.cat([h, h0[running:b]], 0)
                    if lstm:
                        c = J.cat([c, c0[running:b]], 0)
            if fused and lstm:
                h, c = _lstm_step_fused(gi_steps[t], h, c, w_hh_t)
            elif fused:
                h = _rnn_step_fused(self.mode, gi_steps[t], h, w_hh_t, b_hh)
            elif lstm:
                h, c = _lstm_step(gi_steps[t], h, c, w_hh, b_hh)
            else:
                h = _rnn_step(self.mode, gi_steps[t], h, w_hh, b_hh)
            if w_hr_t is not None:
                h = h.mm(w_hr_t)
            outs[t] = h
        if finished_h:
            h = J.cat([h] + finished_h[::-1], 0)
            if lstm:
                c = J.cat([c] + finished_c[::-1], 0)
        out = J.stack(outs, 0) if batch_sizes is None else J.cat(outs, 0)
        return out, h, c

    def _forward_packed(self, input, hx):
        """RNN/LSTM/GRU on a PackedSequence: ``hx`` is given in the batch's original order
        (permuted to the sorted order here), the output is packed like the input, and h_n/c_n
        hold each sequence's state after its own last step, in the original order."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        sizes = tuple(int(b) for b in batch_sizes.tolist())
        lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        if hx is None:
            def zeros(size):
                return _creation.zeros((self.num_layers * num_directions, sizes[0], size),
                                       dtype=data.dtype)
            h0 = zeros(self.proj_size or self.hidden_size)
            c0 = zeros(self.hidden_size) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
            if sorted_indices is not None:
                h0 = h0.index_select(1, sorted_indices)
                c0 = c0.index_select(1, sorted_indices) if lstm else None
        out, h, c = self._run(data, h0, c0, sizes)
        if unsorted_indices is not None:
            h = h.index_select(1, unsorted_indices)
            c = c.index_select(1, unsorted_indices) if lstm else None
        output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return output, ((h, c) if lstm else h)

    def _prepare(self, input, hx):
        batched = input.dim() == 3
        if input.dim() not in (2, 3):
            raise ValueError(f"{self.mode if self.mode != 'RNN_TANH' else 'RNN'}: Expected "
                             f"input to be 2D or 3D, got {input.dim()}D instead")
        if hx is not None:
            self._check_hidden_dims(hx, batched)
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[2] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[2]}")
        return input, batched

    def _check_hidden_dims(self, hx, batched):
        """torch's check that the initial state has the input's batchedness."""
        kind, want = ("batched 3-D", 3) if batched else ("unbatched 2-D", 2)
        if self.mode == "LSTM":
            dims = tuple(h.dim() for h in hx)
            if dims != (want, want):
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({dims[0]}-D, {dims[1]}-D) tensors")
        elif hx.dim() != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{hx.dim()}-D tensor")

    def _check_hidden_size(self, input, h, which="", cell=False):
        """torch's check of an initial state's size (`input` is (L, N, I) by now)."""
        expected = tuple(self._zeros(input[:0], cell).shape)
        if tuple(h.shape) != expected:
            raise RuntimeError(f"Expected hidden{which} size {expected}, got {list(h.shape)}")

    def _zeros(self, input, cell=False):
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size and not cell else self.hidden_size
        return _creation.zeros((self.num_layers * num_directions, input.shape[1], size),
                               dtype=input.dtype)

    def _finish(self, output, batched):
        if not batched:
            return output.squeeze(1)
        return output.transpose(0, 1) if self.batch_first else output


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, batched = self._prepare(input, hx)
        if hx is None:
            hx = self._zeros(x)
        elif not batched:
            hx = hx.unsqueeze(1)
        self._check_hidden_size(x, hx)
        out, h, _ = self._run(x, hx, None)
        return self._finish(out, batched), (h if batched else h.squeeze(1))


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, batched = self._prepare(input, hx)
        if hx is None:
            h0, c0 = self._zeros(x), self._zeros(x, cell=True)
        else:
            h0, c0 = hx
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            self._check_hidden_size(x, h0, "[0]")
            self._check_hidden_size(x, c0, "[1]", cell=True)
        out, h, c = self._run(x, h0, c0)
        if not batched:
            h, c = h.squeeze(1), c.squeeze(1)
        return self._finish(out, batched), (h, c)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, batched = self._prepare(input, hx)
        if hx is None:
            hx = self._zeros(x)
        elif not batched:
            hx = hx.unsqueeze(1)
        self._check_hidden_size(x, hx)
        out, h, _ = self._run(x, hx, None)
        return self._finish(out, batched), (h if batched else h.squeeze(1))


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size),
                                                   dtype=dtype))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size),
                                                   dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input, hx):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _creation.zeros((input.shape[0], self.hidden_size), dtype=input.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, h, batched = self._batch(input, hx)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        out = _rnn_step(mode, F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh,
                        self.bias_hh)
        return out if batched else out.squeeze(0)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, h, batched = self._batch(input, hx)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        if _fusable(x, self.weight_hh, h, h):
            out = _rnn_step_fused("GRU", gi, h, self.weight_hh.t(), self.bias_hh)
        else:
            out = _rnn_step("GRU", gi, h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is None:
            x, h, batched = self._batch(input, None)
            c = h
        else:
            x, h, batched = self._batch(input, hx[0])
            c = hx[1] if batched else hx[1].unsqueeze(0)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        if _fusable(x, self.weight_hh, h, c):
            if self.bias_hh is not None:
                gi = gi + self.bias_hh
            h, c = _lstm_step_fused(gi, h, c, self.weight_hh.t())
        else:
            h, c = _lstm_step(gi, h, c, self.weight_hh, self.bias_hh)
        if not batched:
            h, c = h.squeeze(0), c.squeeze(0)
        return h, c
