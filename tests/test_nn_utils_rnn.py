"""nn.utils.rnn (packing, padding, PackedSequence) and RNN/LSTM/GRU on packed input, against
torch 2.13: values, int64 lengths and batch sizes, grad_fn names, gradients and errors."""

import numpy as np
import pytest
import torch
from _diff import arr, assert_same, raises_same, same, t, to_np

import ndgrad


def _packed(p):
    return [p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices]


def _names(*ts):
    return [None if x.grad_fn is None else x.grad_fn.name() for x in ts]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([4, 3, 3, 1], True),
                                                     ([2, 4, 1, 3], False),
                                                     ([3, 3, 2, 3], False)])
def test_pack_pad_round_trip(batch_first, lengths, enforce_sorted):
    x0 = arr(0, 4, 4, 2)
    w = arr(1, 4, 6, 2) if batch_first else arr(1, 6, 4, 2)

    def scenario(lib):
        x = t(lib, x0.transpose(1, 0, 2) if batch_first else x0, requires_grad=True)
        p = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                                  enforce_sorted=enforce_sorted)
        out, lens = lib.nn.utils.rnn.pad_packed_sequence(p, batch_first=batch_first,
                                                         padding_value=-2.0, total_length=6)
        (out * t(lib, w)).sum().backward()
        return _packed(p) + [out, lens, x.grad, _names(p.data, out),
                             type(p).__name__, p._fields]

    same(scenario)


@pytest.mark.parametrize("lengths", [[5, 3, 2], [4, 4, 4], [6, 5, 5, 2, 2, 1]])
def test_pad_packed_graph_is_torch_s(lengths):
    # one CopySlices per run of steps with the same batch size, each over a ViewBackward0
    # of the packed data, as torch's kernel records
    def chain(out):
        n, names = out.grad_fn, []
        while n is not None:
            names.append((n.name(), [e[0].name() if e[0] is not None else None
                                     for e in n.next_functions]))
            n = n.next_functions[0][0]
        return names

    def scenario(lib):
        x = t(lib, arr(2, max(lengths), len(lengths), 3), requires_grad=True)
        p = lib.nn.utils.rnn.pack_padded_sequence(x, lengths)
        q = lib.nn.utils.rnn.PackedSequence(p.data * 2, p.batch_sizes)
        out, lens = lib.nn.utils.rnn.pad_packed_sequence(q, total_length=max(lengths) + 1)
        (out * out).sum().backward()
        return [out, lens, x.grad, chain(out)]
    same(scenario)


def test_pack_padded_accepts_tensor_lengths_of_any_dtype_and_nd_trailing_dims():
    def scenario(lib):
        x = t(lib, arr(2, 3, 2, 2, 3), requires_grad=True)
        p = lib.nn.utils.rnn.pack_padded_sequence(x, t(lib, [3.0, 2.0]))
        p.data.pow(2).sum().backward()
        return _packed(p) + [x.grad]

    same(scenario)


def test_pack_sequence_unpack_and_unpad():
    seqs = [arr(3, 2, 3), arr(4, 4, 3), arr(5, 1, 3)]

    def scenario(lib):
        xs = [t(lib, s, requires_grad=True) for s in seqs]
        p = lib.nn.utils.rnn.pack_sequence(xs, enforce_sorted=False)
        parts = lib.nn.utils.rnn.unpack_sequence(p)
        sum((v * (i + 1)).sum() for i, v in enumerate(parts)).backward()
        padded = lib.nn.utils.rnn.pad_sequence(xs, batch_first=True)
        unpadded = lib.nn.utils.rnn.unpad_sequence(padded, t(lib, [2, 4, 1]), batch_first=True)
        tm = lib.nn.utils.rnn.pad_sequence(xs, padding_value=7.0)
        unpadded_tm = lib.nn.utils.rnn.unpad_sequence(tm, t(lib, [2, 4, 1]))
        return (_packed(p) + parts + [x.grad for x in xs] + unpadded + unpadded_tm +
                [_names(*parts), _names(*unpadded)])

    same(scenario)


def test_pack_sequence_sorted_and_invert_permutation():
    def scenario(lib):
        p = lib.nn.utils.rnn.pack_sequence([t(lib, [1, 2, 3]), t(lib, [4, 5]), t(lib, [6])])
        inv = lib.nn.utils.rnn.invert_permutation(t(lib, [2, 0, 3, 1]))
        return _packed(p) + [inv, lib.nn.utils.rnn.invert_permutation(None)]

    same(scenario)


def test_packed_sequence_construction_and_conversions():
    def scenario(lib):
        data = t(lib, [[1.0], [2.0], [3.0]])
        bs = t(lib, [2, 1])
        a = lib.nn.utils.rnn.PackedSequence(data, bs, t(lib, [1, 0]))
        b = lib.nn.utils.rnn.PackedSequence((data, bs))
        c = a.double()
        return (_packed(a) + _packed(b) + _packed(c) + [a.to(lib.float32) is a, a.long().data,
                                                         a.is_cuda, isinstance(a, tuple)])

    same(scenario)


@pytest.mark.parametrize("case", [
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 3]),
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [4, 3, 0]),
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [4, 3]),
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [[4, 3, 2]]),
    lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x[:0], [1, 1, 1]),
    lambda lib, x: lib.nn.utils.rnn.pack_sequence([x[:2, 0], x[:, 0]]),
    lambda lib, x: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(x, [4, 3, 2]), total_length=3),
    lambda lib, x: lib.nn.utils.rnn.pad_sequence([x[0], x[1]], padding_side="middle"),
    lambda lib, x: lib.nn.utils.rnn.unpad_sequence(x, t(lib, [4, 2])),
    lambda lib, x: lib.nn.utils.rnn.PackedSequence(x),
], ids=["unsorted", "zero-length", "len-mismatch", "2d-lengths", "empty", "seq-unsorted",
        "total-length", "padding-side", "unpad-count", "bad-init"])
def test_errors(case):
    raises_same(lambda lib: case(lib, t(lib, arr(6, 4, 3, 2))))


def test_pack_failure_leaves_input_untouched():
    x = ndgrad.tensor(arr(7, 4, 3, 2), requires_grad=True)
    v = x._version
    with pytest.raises(RuntimeError):
        ndgrad.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 3])
    assert x._version == v and x.grad is None and x.grad_fn is None


def test_pack_padded_double_backward_matches_finite_differences():
    x = ndgrad.tensor(arr(8, 3, 3, 2), requires_grad=True)

    def fn(v):
        return ndgrad.nn.utils.rnn.pack_padded_sequence(v, [3, 2, 1]).data.pow(3)

    assert ndgrad.autograd.gradcheck(fn, (x,))
    assert ndgrad.autograd.gradgradcheck(fn, (x,))


_CONFIGS = [{}, {"bidirectional": True}, {"num_layers": 2}, {"bias": False},
            {"num_layers": 2, "bidirectional": True}]


def _rnn_case(lib, kind, kw, lengths, enforce_sorted, give_hidden, sd):
    m = getattr(lib.nn, kind)(3, 4, dtype=lib.float64, **kw)
    m.load_state_dict({k: t(lib, v) for k, v in sd.items()})
    directions = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    rows = layers * directions
    batch = len(lengths)
    x = t(lib, arr(10, max(lengths), batch, 3), requires_grad=True)
    h0 = t(lib, arr(11, rows, batch, kw.get("proj_size") or 4), requires_grad=True)
    c0 = t(lib, arr(12, rows, batch, 4), requires_grad=True)
    hidden = None
    if give_hidden:
        hidden = (h0, c0) if kind == "LSTM" else h0
    p = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    out, state = m(p, hidden)
    states = list(state) if kind == "LSTM" else [state]
    outs = [out.data] + states
    loss = sum((o * t(lib, arr(20 + i, *o.shape))).sum() for i, o in enumerate(outs))
    loss.backward()
    grads = [x.grad] + [p_.grad for p_ in m.parameters()]
    if give_hidden:
        grads += [h0.grad] + ([c0.grad] if kind == "LSTM" else [])
    padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out)
    return (_packed(out) + outs + grads + [padded, lens, _names(*outs), type(out).__name__])


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", _CONFIGS, ids=lambda kw: "-".join(kw) or "plain")
@pytest.mark.parametrize("lengths,enforce_sorted,give_hidden", [
    ([4, 3, 3, 1], True, False), ([2, 4, 1, 3], False, True), ([3, 3], True, True)])
def test_rnn_on_packed_sequence(kind, kw, lengths, enforce_sorted, give_hidden):
    sd = {k: v.detach().numpy().copy()
          for k, v in getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **kw)
          .state_dict().items()}
    same(lambda lib: _rnn_case(lib, kind, kw, lengths, enforce_sorted, give_hidden, sd),
         rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("kind,kw", [("LSTM", {"proj_size": 2, "num_layers": 2,
                                               "bidirectional": True}),
                                     ("RNN", {"nonlinearity": "relu", "bidirectional": True})])
def test_rnn_on_packed_sequence_projection_and_relu(kind, kw):
    sd = {k: v.detach().numpy().copy()
          for k, v in getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **kw)
          .state_dict().items()}
    same(lambda lib: _rnn_case(lib, kind, kw, [2, 5, 1], False, True, sd),
         rtol=1e-9, atol=1e-10)


def test_packed_output_equals_per_sequence_runs():
    """Each sequence of a packed batch gives what it gives alone (no padding leaks in)."""
    m = ndgrad.nn.GRU(3, 4, bidirectional=True, dtype=ndgrad.float64)
    seqs = [ndgrad.tensor(arr(30 + i, n, 3)) for i, n in enumerate([2, 5, 3])]
    out, h = m(ndgrad.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False))
    parts = ndgrad.nn.utils.rnn.unpack_sequence(out)
    for i, s in enumerate(seqs):
        alone, h_alone = m(s.unsqueeze(1))
        assert_same(to_np(parts[i]), to_np(alone[:, 0]), 1e-12, 1e-12)
        assert_same(to_np(h[:, i]), to_np(h_alone[:, 0]), 1e-12, 1e-12)


def test_lstm_packed_float32_batch_first_ignored():
    """batch_first does not change how a PackedSequence is read (float32 path)."""
    tm = torch.nn.LSTM(2, 3, batch_first=True)
    sd = {k: v.detach().numpy().copy() for k, v in tm.state_dict().items()}

    def scenario(lib):
        m = lib.nn.LSTM(2, 3, batch_first=True)
        m.load_state_dict({k: t(lib, v) for k, v in sd.items()})
        x = t(lib, arr(40, 4, 3, 2, dtype=np.float32))
        p = lib.nn.utils.rnn.pack_padded_sequence(x, [1, 3, 2, 2], batch_first=True,
                                                  enforce_sorted=False)
        out, (h, c) = m(p)
        return _packed(out) + [h, c]

    same(scenario, rtol=1e-5, atol=1e-6)
