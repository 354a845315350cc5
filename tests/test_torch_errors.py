"""Misuse raises torch's exception (class and message, compared with torch 2.13), never a NumPy
one, and a refused call changes nothing: shapes and dims that do not fit, data that is not
numeric, views whose in-place write autograd forbids, complex inputs to ordering ops."""

import numpy as np
import pytest
import torch

import ndgrad
from _helpers import error_of

LIBS = (torch, ndgrad)


def _same_error(fn):
    """``fn(L)`` raises in both libraries, with the same class and message."""
    errs = []
    for L in LIBS:
        err = error_of(lambda L=L: fn(L))
        assert err is not None, f"{L.__name__} did not raise"
        errs.append((err[0].__name__, err[1]))
    assert errs[1] == errs[0]
    return errs[0]


# ----------------------------------------------------------------------- dims and shapes
@pytest.mark.parametrize("fn", [
    lambda L: L.ones(2, 3).movedim((0, 0), (0, 1)),
    lambda L: L.ones(2, 3).movedim((0, -2), (0, 1)),
    lambda L: L.ones(2, 3).movedim((0, 1), (1, 1)),
    lambda L: L.ones(2, 3).movedim((0, 1), (1,)),
    lambda L: L.ones(2, 3).movedim(0, 2),
    lambda L: L.ones(2, 3).flip((0, 0)),
    lambda L: L.ones(2, 3).flip((1, -1)),
    lambda L: L.ones(2, 3).permute(0, 0),
], ids=["movedim-src", "movedim-src-neg", "movedim-dst", "movedim-len", "movedim-range",
        "flip", "flip-neg", "permute"])
def test_repeated_or_mismatched_dims(fn):
    _same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.empty(-1),
    lambda L: L.zeros(2, -1),
    lambda L: L.full((-1,), 1.0),
], ids=["empty", "zeros", "full"])
def test_negative_dimensions(fn):
    _same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.ones(3).masked_fill_(L.ones(4, dtype=L.bool), 0.0),
    lambda L: L.ones(3).masked_fill_(L.ones(2, 3, dtype=L.bool), 0.0),
    lambda L: L.ones(3).masked_fill(L.ones(4, dtype=L.bool), 0.0),
    lambda L: L.ones(2, 3).masked_fill(L.ones(3, 3, dtype=L.bool), 0.0),
], ids=["inplace", "inplace-grows", "outofplace", "outofplace-2d"])
def test_masked_fill_shape_mismatch(fn):
    _same_error(fn)


@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("dst,dim,idx,src", [
    ((3, 2), 0, [0], (1, 3)),
    ((3, 2, 4), 0, [0], (1, 3, 5)),
    ((3, 2, 4), 1, [0], (3, 1, 5)),
    ((3, 2), 0, [0, 1], (1, 2)),
    ((3,), 0, [0], (1, 2)),
    ((3, 2), 0, [0], (2,)),
    ((3,), 0, [0, 1], ()),
    ((3, 2), 0, [1], ()),
])
def test_index_copy_shape_mismatch(inplace, dst, dim, idx, src):
    def fn(L):
        x = L.ones(dst)
        return (x.index_copy_ if inplace else x.index_copy)(dim, L.tensor(idx), L.ones(src))
    _same_error(fn)


def test_index_copy_scalar_source_and_values():
    for args in ((3,), 0, [1]), ((), 0, [0]):
        got = []
        for L in LIBS:
            x = L.arange(float(np.prod(args[0]) or 1)).reshape(args[0])
            got.append(x.index_copy_(args[1], L.tensor(args[2]), L.tensor(5.0)).tolist())
        assert got[0] == got[1]
    got = [L.zeros(3, 2).index_copy(0, L.tensor([2, 0]), L.arange(4.0).reshape(2, 2)).tolist()
           for L in LIBS]
    assert got[0] == got[1] == [[2.0, 3.0], [0.0, 0.0], [0.0, 1.0]]


def test_masked_fill_inplace_refusal_changes_nothing():
    x = ndgrad.ones(3)
    version = x._version
    _same_error(lambda L: L.ones(3).masked_fill_(L.ones(2, 3, dtype=L.bool), 0.0))
    with pytest.raises(RuntimeError):
        x.masked_fill_(ndgrad.ones(2, 3, dtype=ndgrad.bool), 0.0)
    assert x._version == version and x.tolist() == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------------------- view(dtype)
@pytest.mark.parametrize("fn", [
    lambda L: L.ones(3, dtype=L.int8).view(L.int32),
    lambda L: L.ones(4, 4, dtype=L.int8).t().view(L.int32),
    lambda L: L.tensor(1, dtype=L.int8).view(L.int32),
    lambda L: L.ones(4, 4, dtype=L.int32).t().view(L.int8),
    lambda L: L.tensor(1, dtype=L.int32).view(L.int8),
    lambda L: L.ones(9, dtype=L.int8)[1:].view(L.int32),
    lambda L: L.ones(3, 6, dtype=L.int8)[:, :4].view(L.int32),
], ids=["size", "stride-up", "0d-up", "stride-down", "0d-down", "offset", "row-stride"])
def test_view_dtype_refusals(fn):
    _same_error(fn)


def test_view_dtype_that_fits_reinterprets_the_bytes():
    got = [L.arange(16, dtype=L.int8).reshape(2, 8)[:, 4:].view(L.int32).tolist() for L in LIBS]
    assert got[0] == got[1]


# ------------------------------------------------------------------------- tensor(data)
@pytest.mark.parametrize("data", [
    "a", ["a"], ("a",), ["ab", [1]], [[1], "ab"], [1, "a"], b"ab", [b"a"],
    [[1], [1, 2]], [[1, 2], [3]], [[[1]], [[1, 2]]], [[1], []],
    [1, [1]], [True, [1]], [1.0, [1.0]], [1 + 1j, [1]], [[1], 2], [[1.0], 2.0],
    [None], [1, None], [None, [1]], [[1, 2], [None, 2]], [object()], {1: 2}, [{1: 2}],
])
def test_tensor_from_unusable_data(data):
    _same_error(lambda L: L.tensor(data))


# --------------------------------------------------------------------------- convolution
@pytest.mark.parametrize("fn", [
    lambda F, L: F.conv1d(L.ones(1, 1, 2), L.ones(1, 1, 3)),
    lambda F, L: F.conv1d(L.ones(1, 1, 2), L.ones(1, 1, 5), padding=1),
    lambda F, L: F.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
    lambda F, L: F.conv2d(L.ones(1, 1, 4, 2), L.ones(1, 1, 3, 3)),
    lambda F, L: F.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 3, 3), dilation=2),
    lambda F, L: F.conv2d(L.ones(1, 2, 4), L.ones(1, 2, 5, 5)),
])
def test_conv_kernel_larger_than_the_padded_input(fn):
    _same_error(lambda L: fn(L.nn.functional, L))


def test_conv_kernel_as_large_as_the_padded_input_runs():
    got = [L.nn.functional.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 4, 4), padding=1).tolist()
           for L in LIBS]
    assert got[0] == got[1] == [[[[4.0]]]]


# ------------------------------------------------------------------------------ RNN states
@pytest.mark.parametrize("kind,x,h", [
    ("LSTM", (5, 2, 3), ((1, 2, 5), (1, 2, 4))),
    ("LSTM", (5, 2, 3), ((1, 2, 4), (1, 2, 5))),
    ("LSTM", (5, 2, 3), ((1, 3, 4), (1, 2, 4))),
    ("LSTM", (5, 3), ((1, 2, 4), (1, 2, 4))),
    ("LSTM", (5, 2, 3), ((2, 4), (2, 4))),
    ("GRU", (5, 2, 3), (1, 2, 5)),
    ("GRU", (5, 3), (1, 1, 4)),
    ("RNN", (5, 2, 3), (2, 2, 4)),
    ("RNN", (5, 2, 3), (2, 4)),
])
def test_rnn_initial_state_of_the_wrong_size(kind, x, h):
    def fn(L):
        L.manual_seed(0)
        m = getattr(L.nn, kind)(3, 4)
        hx = tuple(L.zeros(s) for s in h) if kind == "LSTM" else L.zeros(h)
        return m(L.ones(x), hx)
    _same_error(fn)


# ------------------------------------------------------------------------------- clamp
@pytest.mark.parametrize("fn", [
    lambda L: L.ones(3).clamp_(),
    lambda L: L.ones(3).clamp_(None, None),
    lambda L: L.ones(3).clip_(),
    lambda L: L.ones(3, dtype=L.complex64).clamp_(0, 1),
])
def test_clamp_inplace_refusals_leave_the_tensor(fn):
    _same_error(fn)
    x = ndgrad.ones(3)
    with pytest.raises(RuntimeError):
        x.clamp_()
    assert x._version == 0


# ------------------------------------------------------------------ ordering of complex
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", [
    lambda x: x.max(), lambda x: x.min(), lambda x: x.max(0), lambda x: x.min(0, keepdim=True),
    lambda x: x.amax(), lambda x: x.amin(0), lambda x: x.argmax(), lambda x: x.argmin(0),
], ids=["max", "min", "max-dim", "min-dim", "amax", "amin", "argmax", "argmin"])
def test_ordering_reductions_refuse_complex(dtype, fn):
    _same_error(lambda L: fn(L.ones(3, dtype=getattr(L, dtype))))


# ----------------------------------------------------------- in-place on views, autograd
def test_inplace_on_a_view_taken_under_no_grad():
    def fn(L):
        a = L.ones(3, requires_grad=True).clone()
        with L.no_grad():
            v = a[:2]
        v.mul_(2)
    assert _same_error(fn)[1].startswith("A view was created in no_grad mode")

    def leaf(L):
        a = L.ones(3, requires_grad=True)
        with L.no_grad():
            v = a[:2]
        v.mul_(2)
    # torch names the no_grad view; ndgrad, which does not record where a view was taken,
    # names the leaf (both refuse the write)
    for L in LIBS:
        assert error_of(lambda L=L: leaf(L))[0] is RuntimeError


def test_inplace_on_views_that_autograd_allows():
    """Views taken under no_grad of a base without grad, written in no_grad, or views that
    went stale after a write to their base: allowed, with torch's values and gradients."""
    got = []
    for L in LIBS:
        a = L.ones(3, requires_grad=True)
        c = a.clone()
        with L.no_grad():
            v = c[:2]
            v.mul_(2)                         # both inside no_grad
        b = L.zeros(3)
        with L.no_grad():
            w = b[:2]
        w.mul_(2)                             # base without grad
        z = L.zeros(3)
        u = z[:2]
        z.add_(a)                             # u is now a view of a base with history
        (c * z * u.sum()).sum().backward()
        got.append((c.tolist(), z.tolist(), w.tolist(), a.grad.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("op", ["unbind", "split", "chunk"])
def test_inplace_on_outputs_of_multi_output_views(op):
    def fn(L):
        a = L.ones(4, 2, requires_grad=True).clone()
        parts = {"unbind": lambda: a.unbind(0), "split": lambda: a.split(2),
                 "chunk": lambda: a.chunk(2)}[op]()
        parts[0].mul_(2)
    _same_error(fn)


def test_write_into_a_self_overlapping_tensor():
    _same_error(lambda L: L.ones(1).expand(3).copy_(L.ones(3)))
    _same_error(lambda L: L.ones(1).expand(3).add_(1))


# ------------------------------------------------- refused in-place ops change nothing
@pytest.mark.parametrize("fn", [
    lambda L, x: x.copy_(L.ones(4)),
    lambda L, x: x.__setitem__(slice(0, 2), L.ones(3)),
    lambda L, x: x.index_add_(0, L.tensor([1, 5]), L.tensor([1.0, 2.0])),
    lambda L, x: x.index_add_(0, L.tensor([0]), L.ones(2)),
    lambda L, x: x.masked_scatter_(L.tensor([True, True, True]), L.tensor([1.0, 2.0])),
    lambda L, x: x.masked_scatter_(L.ones(4, dtype=L.bool), L.ones(5)),
    lambda L, x: x.masked_scatter_(L.ones(2, 3, dtype=L.bool), L.ones(9)),
    lambda L, x: x.lerp_(L.ones(4), 0.5),
    lambda L, x: x.addcmul_(L.ones(4), L.ones(4)),
    lambda L, x: x.clamp_(L.zeros(4)),
    lambda L, x: x.normal_(0, -1),
    lambda L, x: x.normal_(0, -1.5),
    lambda L, x: x.unsqueeze_(5),
    lambda L, x: x.fill_(L.ones(2)),
], ids=["copy_", "setitem", "index_add_-range", "index_add_-count", "masked_scatter_-short",
        "masked_scatter_-mask", "masked_scatter_-mask-2d", "lerp_", "addcmul_", "clamp_",
        "normal_-int", "normal_-float", "unsqueeze_", "fill_"])
def test_refused_inplace_ops_raise_torchs_error_and_change_nothing(fn):
    got = []
    for L in LIBS:
        x = L.tensor([1.0, 2.0, 3.0])
        err = error_of(lambda L=L, x=x: fn(L, x))
        assert err is not None
        got.append((err[0].__name__, err[1], x.tolist(), x._version))
    assert got[1][:2] == got[0][:2]
    # ndgrad changes nothing (torch has already added the in-range rows of index_add_)
    assert got[1][2:] == ([1.0, 2.0, 3.0], 0)


def test_type_names_in_messages():
    """torch names bool and complex tensor types CPUBoolType / CPUComplexFloatType."""
    for dt in ("bool", "float32", "complex64", "float16", "int64"):
        _same_error(lambda L, dt=dt: L.ones(2, 3, dtype=getattr(L, dt)).expand(3))


# ----------------------------------------------------------------------- where, clamp, uniform_
@pytest.mark.parametrize("fn", [
    lambda L: L.where(L.tensor([True, False, True]), L.ones(3), L.zeros(4)),
    lambda L: L.where(L.tensor([True, False]), L.ones(3), L.zeros(3)),
    lambda L: L.where(L.ones(2, 1, dtype=L.bool), L.ones(3), L.zeros(4, 2, 2)),
    lambda L: L.clamp(L.ones(2, dtype=L.complex64), 0, 1),
    lambda L: L.ones(2, dtype=L.complex128).clamp(min=0),
    lambda L: L.clamp_min(L.ones(2, dtype=L.complex64), 0),
    lambda L: L.clamp_max(L.ones(2, dtype=L.complex64), 0),
    lambda L: L.empty(3).uniform_(2, 1),
    lambda L: L.empty(3).uniform_(2.5, -1.25),
])
def test_where_clamp_uniform_refusals(fn):
    _same_error(fn)


def test_refused_uniform_leaves_the_tensor_as_it_was():
    x = ndgrad.arange(3.0)
    v = x._version
    with pytest.raises(RuntimeError):
        x.uniform_(2, 1)
    assert x._version == v
    np.testing.assert_array_equal(x.numpy(), [0.0, 1.0, 2.0])
