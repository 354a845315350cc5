"""Bad inputs to MultiheadAttention, avg_pool2d / lp_pool2d, reshape / view and factories
called without a size get torch 2.13's exception class and message, and change nothing."""

import pytest
import torch

import ndgrad

MHA_CASES = [   # query, key, value, key_padding_mask, attn_mask shapes
    ((3, 1, 4), (5, 1, 4), (4, 1, 4), None, None),
    ((3, 1, 4), (5, 1, 4), (5, 4), None, None),
    ((3, 1, 4), (5, 1, 4), (5, 1, 4), None, (3, 4)),
    ((3, 1, 4), (5, 1, 4), (5, 1, 4), None, (1, 2, 3, 5)),
    ((3, 1, 4), (5, 1, 4), (5, 1, 4), None, (4, 3, 5)),
    ((3, 4), (5, 4), (5, 4), None, (2, 3, 4)),
    ((3, 1, 4), (5, 1, 4), (5, 1, 4), (1,), None),
    ((4,), (4,), (4,), None, None),
    ((2, 3, 1, 4), (5, 1, 4), (5, 1, 4), None, None),
]


def _mha_outcome(t, case):
    q, k, v, kpm, am = case
    t.manual_seed(0)
    mha = t.nn.MultiheadAttention(4, 2)
    before = [p.detach().clone() for p in mha.parameters()]
    try:
        mha(t.ones(*q), t.ones(*k), t.ones(*v),
            key_padding_mask=None if kpm is None else t.zeros(*kpm, dtype=t.bool),
            attn_mask=None if am is None else t.zeros(*am))
        outcome = "ok"
    except Exception as e:                       # class and text are compared with torch's
        outcome = (type(e).__name__, str(e))
    assert all(p.grad is None for p in mha.parameters())
    assert all((a == b).all() for a, b in zip(before, mha.parameters()))
    return outcome


@pytest.mark.parametrize("case", MHA_CASES, ids=range(len(MHA_CASES)))
def test_multihead_attention_shape_refusals_as_torch(case):
    ours, theirs = _mha_outcome(ndgrad, case), _mha_outcome(torch, case)
    assert ours == theirs
    assert ours != "ok"


def test_multihead_attention_accepts_what_torch_accepts():
    for case in [((3, 4), (5, 4), (5, 4), None, None), ((3, 1, 4), (5, 1, 4), (5, 1, 4), None,
                                                         (2, 3, 5))]:
        assert _mha_outcome(ndgrad, case) == _mha_outcome(torch, case) == "ok"


def _raised(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return "ok"


@pytest.mark.parametrize("shape", [(), (4,), (2, 4), (0, 2, 2)])
@pytest.mark.parametrize("name", ["avg_pool2d", "lp_pool2d"])
def test_2d_pooling_of_low_rank_input_as_torch(name, shape):
    def call(t):
        x = t.ones(shape)
        if name == "lp_pool2d":
            return lambda: t.nn.functional.lp_pool2d(x, 2, 2)
        return lambda: t.nn.functional.avg_pool2d(x, 2)
    ours, theirs = _raised(call(ndgrad)), _raised(call(torch))
    assert ours == theirs != "ok"


@pytest.mark.parametrize("make", [
    lambda x: (lambda: x.reshape(("2", 2))),
    lambda x: (lambda: x.view("float32")),
    lambda x: (lambda: x.view("2", 2)),
    lambda x: (lambda: x.reshape((2, None))),
    lambda x: (lambda: x.view(None)),
])
def test_shape_given_as_strings_or_none_is_a_type_error(make):
    classes = []
    for t in (torch, ndgrad):
        x = t.ones(4)
        v = x._version
        with pytest.raises(TypeError) as info:
            make(x)()
        assert x._version == v
        classes.append(info.value)
    # ndgrad's text names the argument and element as torch's does (torch adds the position)
    text = str(classes[1])
    assert "tuple of ints" in text and ("str" in text or "NoneType" in text)


def test_shapes_torch_accepts_still_work():
    import numpy as np
    for t in (torch, ndgrad):
        x = t.arange(4.)
        assert x.reshape(np.int64(2), 2).shape == (2, 2)
        assert x.reshape(t.tensor(2), 2).shape == (2, 2)
        assert x.view(t.int32).dtype == t.int32
        assert x.view(-1, 1).shape == (4, 1)


@pytest.mark.parametrize("shape, new", [((0,), (0, -1)), ((0,), (-1, 0)), ((0,), (-1, 2)),
                                        ((0, 3), (3, -1, 0)), ((2,), (0, -1)), ((0,), (-1,))])
@pytest.mark.parametrize("op", ["reshape", "view"])
def test_inferred_size_of_zero_elements_as_torch(op, shape, new):
    def outcome(t):
        try:
            return tuple(getattr(t.zeros(shape), op)(new).shape)
        except RuntimeError as e:
            return "RuntimeError", str(e)
    ours, theirs = outcome(ndgrad), outcome(torch)
    assert ours == theirs
    if shape == (0,) and new == (0, -1):
        assert theirs[0] == "RuntimeError" and "ambiguous" in theirs[1]


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn", "arange"])
def test_factory_without_a_size_is_torchs_type_error(name):
    texts = []
    for t in (torch, ndgrad):
        with pytest.raises(TypeError) as info:
            getattr(t, name)()
        texts.append(str(info.value))
    assert texts[0] == texts[1]


def test_factory_sizes_torch_accepts_still_work():
    for t in (torch, ndgrad):
        assert t.zeros(()).shape == () and t.ones(size=()).shape == ()
        assert t.rand(0).shape == (0,) and t.randn(2, 3).shape == (2, 3)
        assert t.arange(end=3).tolist() == [0, 1, 2] and t.arange(1, 4, 2).tolist() == [1, 3]


REFUSALS = {   # calls torch refuses; ndgrad must raise the same class and text
    "arange_inf_end": lambda t: t.arange(0, float("inf"), 2),
    "arange_inf_start": lambda t: t.arange(float("-inf"), 1, 2),
    "arange_step_sign": lambda t: t.arange(0, -3, 2),
    "sum_to_size_larger": lambda t: t.ones(5, 10).sum_to_size(10, 10),
    "sum_to_size_mismatch": lambda t: t.ones(5, 10).sum_to_size(11, 1),
    "masked_fill_complex_into_float": lambda t: t.ones(3).masked_fill(
        t.ones(3, dtype=t.bool), 1j),
    "masked_fill_complex_tensor_into_double": lambda t: t.ones(3, dtype=t.float64).masked_fill(
        t.ones(3, dtype=t.bool), t.tensor(1j)),
    "avg_pool1d_negative_pad": lambda t: t.nn.functional.avg_pool1d(t.ones(1, 1, 10), 2, 50, -1),
    "narrow_start_1d_tensor": lambda t: t.ones(3, 10, 4).narrow(1, t.tensor([1]), 2),
    "hsplit_string": lambda t: t.ones(5, 5).hsplit("abc"),
    "vsplit_string": lambda t: t.ones(5, 5).vsplit("abc"),
    "embedding_1d_weight": lambda t: t.nn.functional.embedding(t.tensor([0, 1]), t.ones(3)),
    "window_sparse_layout": lambda t: t.signal.windows.hann(5, layout=t.sparse_coo),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusal_as_torch(name):
    ours, theirs = _raised(lambda: REFUSALS[name](ndgrad)), _raised(lambda: REFUSALS[name](torch))
    assert theirs != "ok"
    assert ours[0] == theirs[0]
    assert ours[1].split("\n")[0] == theirs[1].split("\n")[0]


def test_accepted_neighbours_of_the_refusals():
    for t in (torch, ndgrad):
        assert t.ones(5, 10).sum_to_size(1, 10).tolist() == [[5.0] * 10]
        assert t.ones(3, 10, 4).narrow(1, t.tensor(1), 2).shape == (3, 2, 4)
        assert t.ones(2).layout == t.strided and t.ones(2).layout != t.sparse_coo
