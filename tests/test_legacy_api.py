"""torch's legacy and utility API, differential against torch 2.13: ``autograd.Variable``, the
typed tensor classes (``FloatTensor``...), ``Tensor.new``, ``is_inference``,
``set_warn_always``, ``isin`` and ``split_with_sizes``."""

import warnings

import numpy as np
import pytest
import torch

import ndgrad
from _helpers import error_of

LIBS = (torch, ndgrad)


def _both(fn):
    return [fn(L) for L in LIBS]


def _same_error(fn):
    errs = [error_of(lambda: fn(L)) for L in LIBS]
    assert errs[0] is not None and errs[1] is not None
    assert (errs[1][0].__name__, errs[1][1]) == (errs[0][0].__name__, errs[0][1])


# ----------------------------------------------------------------------------- Variable
def test_variable_is_a_detached_alias_that_may_require_grad():
    for L in LIBS:
        x = L.ones(3) * 2
        v = L.autograd.Variable(x, requires_grad=True)
        assert v is not x and v.requires_grad and v.is_leaf and not x.requires_grad
        assert isinstance(v, L.autograd.Variable) and isinstance(x, L.autograd.Variable)
        x.add_(1)                                 # shares memory with the original
        assert v.tolist() == [3.0, 3.0, 3.0]
        (v * v).sum().backward()
        assert v.grad.tolist() == [6.0, 6.0, 6.0]
        assert not L.autograd.Variable(x).requires_grad
    assert not isinstance([1], ndgrad.autograd.Variable)


def test_variable_volatile_warns_and_non_tensor_is_refused():
    msgs = []
    for L in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.autograd.Variable(L.ones(2), volatile=True)
        msgs.append([(x.category, str(x.message)) for x in w])
    assert msgs[1] == [(UserWarning, msgs[0][0][1])]
    _same_error(lambda L: L.autograd.Variable([1, 2]))


# -------------------------------------------------------------------- typed constructors
NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
         "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_typed_constructors(name):
    def parts(L):
        cls = getattr(L, name)
        data = cls([1, 0, 2])
        sized = cls(2, 3)
        from_size = cls(L.Size([4]))
        same = cls(data)
        return (repr(data.dtype), data.tolist(), tuple(sized.shape), repr(sized.dtype),
                tuple(from_size.shape),
                tuple(cls().shape), same.tolist(), isinstance(data, cls),
                isinstance(L.ones(1, dtype=L.complex64), cls), isinstance(data, L.Tensor))
    t, n = _both(parts)
    assert n == t


def test_typed_constructor_refusals():
    _same_error(lambda L: L.FloatTensor(L.ones(2, dtype=L.float64)))
    _same_error(lambda L: L.FloatTensor(2, dtype=L.float64))
    assert ndgrad.IntTensor([1.5]).tolist() == torch.IntTensor([1.5]).tolist()


# -------------------------------------------------------------------------- Tensor.new
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_tensor_new_keeps_the_dtype(dtype):
    def parts(L):
        t = L.ones(2, dtype=getattr(L, dtype))
        return (repr(t.new().dtype), tuple(t.new().shape), tuple(t.new(2, 3).shape),
                tuple(t.new(L.Size([2, 1])).shape), t.new([1, 0]).tolist(),
                repr(t.new([1, 0]).dtype), t.new(t).tolist())
    t, n = _both(parts)
    assert n == t


def test_tensor_new_refusals():
    _same_error(lambda L: L.ones(2, dtype=L.float64).new(L.ones(2)))
    _same_error(lambda L: L.ones(2).new(2, dtype=L.int32))


# -------------------------------------------------------------------- small utilities
def test_is_inference():
    for L in LIBS:
        with L.inference_mode():
            t = L.ones(2)
        assert L.is_inference(t) and not L.is_inference(L.ones(2))
    _same_error(lambda L: L.is_inference([1]))


def test_set_warn_always_round_trip():
    for L in LIBS:
        before = L.is_warn_always_enabled()
        try:
            L.set_warn_always(True)
            assert L.is_warn_always_enabled() is True
            L.set_warn_always(False)
            assert L.is_warn_always_enabled() is False
        finally:
            L.set_warn_always(before)


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 6, (3, 4)), rng.integers(0, 6, 5)
    cases = [lambda L: L.isin(L.tensor(a), L.tensor(b), invert=invert),
             lambda L: L.isin(L.tensor(a), 3, invert=invert),
             lambda L: L.isin(2, L.tensor(b), invert=invert),
             lambda L: L.isin(L.tensor(a * 1.0), L.tensor(b), invert=invert),
             lambda L: L.isin(L.tensor([1.0, 2.5]), L.tensor([2.5]), assume_unique=True)]
    for case in cases:
        t, n = _both(case)
        assert repr(n.dtype) == repr(t.dtype) and n.tolist() == t.tolist()
    _same_error(lambda L: L.isin(1, 2))
    assert not hasattr(ndgrad.Tensor, "isin") and not hasattr(torch.Tensor, "isin")


def test_split_with_sizes():
    def parts(L):
        leaf = L.arange(10.0, requires_grad=True)
        x = leaf.reshape(5, 2)
        pieces = x.split_with_sizes([2, 3])
        (pieces[0].sum() * 2 + pieces[1].sum()).backward()
        return ([p.tolist() for p in pieces], pieces[0].grad_fn.name(), leaf.grad.tolist(),
                [p.detach().tolist() for p in x.split_with_sizes((1, 1), 1)])
    t, n = _both(parts)
    assert n == t


def test_profiler_util_and_kineto_available():
    from ndgrad.autograd import profiler, profiler_util
    from torch.autograd.profiler_util import _format_time as torch_format_time
    for name in ("EventList", "FunctionEvent", "FunctionEventAvg"):
        assert getattr(profiler_util, name) is getattr(profiler, name)
    for us in (0, 12, 999, 1234, 1234567, 98765432.5):
        assert profiler_util._format_time(us) == torch_format_time(us)
    # no Kineto backend: callers take their non-Kineto path (docs/decisions.md)
    assert ndgrad.autograd.kineto_available() is False
    assert ndgrad.autograd.profiler.kineto_available is ndgrad.autograd.kineto_available


def test_inf_and_nan_constants():
    assert ndgrad.inf == torch.inf and ndgrad.nan != ndgrad.nan and np.isnan(torch.nan)


def test_unsafe_split_parts_share_memory_but_are_not_views():
    def parts(L):
        a = L.arange(6.0, requires_grad=True)
        names = [[p.grad_fn.name() for p in ps] for ps in
                 (a.unsafe_chunk(2), L.unsafe_split(a, 4), a.unsafe_split_with_sizes([2, 4]))]
        b = L.arange(6.0)
        first = b.unsafe_split(3)[0]
        first.mul_(2)                               # writes into b, bumps only its own version
        c = a * 1
        q = c.unsafe_split(4)
        q[0].mul_(2)                                # allowed: not a view
        (q[0].sum() + q[1].sum() * 3).backward()
        return (names, first._is_view(), b.tolist(), b._version, first._version,
                q[0].grad_fn.name(), a.grad.tolist())
    t, n = _both(parts)
    assert n == t
