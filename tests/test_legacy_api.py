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
    errs = [error_of(lambda L=L: fn(L)) for L in LIBS]
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
    from ndgrad.autograd.variable import Variable
    assert Variable is ndgrad.autograd.Variable


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


def test_inplace_transposes():
    """t_, transpose_, swapdims_, swapaxes_: metadata changed in place (same tensor, new
    version, TBackward1 / TransposeBackward1 on top of its history), views stay views of
    their base and in-place writes through them reach it, leaves requiring grad refuse."""
    def run(L):
        out = []
        a = L.arange(6.0).reshape(2, 3)
        v0 = a._version
        out.append((a.t_() is a, tuple(a.shape), a._version - v0, a.stride(), a.tolist()))
        x = L.ones(2, 3, requires_grad=True)
        out.append(error_of(lambda: x.t_())[1])
        c = x.clone()
        c.t_()
        out.append((c.grad_fn.name(), c.grad_fn.next_functions[0][0].name()))
        c.transpose_(0, 1)
        c.swapdims_(0, -1)
        c.swapaxes_(1, 0)
        out.append((c.grad_fn.name(), tuple(c.shape)))
        (c * L.arange(6.0).reshape(c.shape)).sum().backward()
        out.append(x.grad.tolist())
        w = L.arange(24.0, requires_grad=True)
        base = (w * 1).reshape(2, 3, 4)
        v = base[0]
        v.t_()
        out.append((v.grad_fn.name(), v._is_view(), tuple(v.shape)))
        v.mul_(L.arange(12.0).reshape(4, 3))
        base.sum().backward()
        out.append(w.grad.tolist())
        out.append(error_of(lambda: L.ones(2, 3, 4).t_())[1])
        g = L.ones(2, 3, requires_grad=True).clone()
        with L.no_grad():
            g.t_()
        out.append((g.grad_fn.name(), tuple(g.shape)))
        return out
    assert run(ndgrad) == run(torch)


def test_storages_are_shared_by_a_tensor_and_its_views():
    def run(L):
        a = L.arange(6.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = a.storage()
        u = a.untyped_storage()
        v = a[2:]
        return ((s.size(), len(s), repr(s.dtype), s.tolist(), s.data_ptr() == a.data_ptr(),
                 s.element_size(), s.nbytes(), s[1]),
                (u.nbytes(), len(u), u.data_ptr() == a.data_ptr(), u.tolist()[:8], u[7]),
                (v.untyped_storage().data_ptr() == u.data_ptr(), v.untyped_storage().nbytes(),
                 v.storage_offset(), v.data_ptr() == a.data_ptr() + 8))
    assert run(ndgrad) == run(torch)


def test_typed_storage_warns_once():
    from ndgrad import _storage
    _storage._warned[0] = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ndgrad.ones(2).storage()
        ndgrad.ones(2).storage()
    assert len(w) == 1 and "TypedStorage is deprecated" in str(w[0].message)


def test_set_and_resize():
    def run(L):
        out = []
        a = L.arange(6.0)
        b = L.zeros(2)
        v0 = b._version
        b.set_(a)
        out.append((b.tolist(), b._version - v0, b.data_ptr() == a.data_ptr(), a._version))
        b.add_(1)
        out.append(a.tolist())                      # same memory
        c = L.zeros(1)
        c.set_(a.untyped_storage(), 2, (2, 2), (1, 2))
        out.append(c.tolist())
        d = L.zeros(1)
        d.set_(a.untyped_storage())
        out.append(d.tolist())
        e = L.zeros(3)
        e.set_()
        out.append(tuple(e.shape))
        out.append(error_of(lambda: L.ones(2, requires_grad=True).set_(L.ones(2)))[1])
        out.append(error_of(lambda: L.ones(2, dtype=L.float64).set_(L.ones(2)))[1])
        f = L.arange(6.0)
        v0 = f._version
        f.resize_(2, 2)
        out.append((f.tolist(), f._version - v0))
        f.resize_(8)                                # grows: the storage's elements, then new
        out.append((tuple(f.shape), f[:6].tolist()))
        g = L.arange(6.0)
        h = g[:3]
        g.resize_(2)
        out.append((g.tolist(), h.tolist()))
        k = L.arange(6.0).reshape(2, 3).t()
        k.resize_(2)                                # storage order, not k's order
        out.append(k.tolist())
        m = L.arange(6.0)
        m.resize_as_(L.ones(3, 1))
        out.append(tuple(m.shape))
        out.append(error_of(lambda: L.ones(2, requires_grad=True).resize_(3))[1])
        return out
    assert run(ndgrad) == run(torch)


def test_as_strided():
    """Views of the storage with given sizes, strides and offset (AsStridedBackward0/1):
    values, torch's bounds and argument errors, the gradient scattered through the storage
    (divided where the input itself overlaps), writes through the view, double backward."""
    def run(L):
        out = []
        a = L.arange(6.0, requires_grad=True)
        b = a.as_strided((2, 2), (1, 2))
        out.append((b.grad_fn.name(), b._is_view(), b._base is a, b.tolist()))
        out.append(error_of(lambda: a.as_strided((4, 2), (2, 1)))[1])
        out.append((a[1:].as_strided((2,), (1,)).tolist(),
                    a[1:].as_strided((2,), (1,), 0).tolist()))
        o = a.as_strided((2, 2), (1, 1))
        (o * L.tensor([[1.0, 2], [3, 4]])).sum().backward()
        out.append(a.grad.tolist())
        x = L.arange(4.0, requires_grad=True).clone()
        x.as_strided_((2, 2), (1, 2))
        out.append((x.grad_fn.name(), x.tolist()))
        z = L.ones(2, 4, requires_grad=True)
        w = (z * 1).as_strided((3,), (2,))
        (w * L.tensor([1.0, 2, 3])).sum().backward()
        out.append(z.grad.tolist())
        e = L.ones(3, requires_grad=True)
        (e * 1)[:1].expand(4).as_strided((2,), (1,)).sum().backward()
        out.append(e.grad.tolist())
        base = L.zeros(6)
        base.as_strided((2, 2), (1, 3)).add_(1)
        out.append(base.tolist())
        q = L.arange(6.0, requires_grad=True)
        r = q * 1
        r.as_strided((3,), (2,)).mul_(10)
        r.sum().backward()
        out.append((r.tolist(), q.grad.tolist()))
        h = L.arange(4.0, requires_grad=True, dtype=L.float64)
        gg, = L.autograd.grad((h.as_strided((2, 2), (1, 1)) ** 2).sum(), h, create_graph=True)
        gg.sum().backward()
        out.append((gg.tolist(), h.grad.tolist()))
        out.append(error_of(lambda: L.ones(4).as_strided((2,), (1, 1)))[1])
        out.append(error_of(lambda: L.ones(4).as_strided((2,), (-1,)))[1])
        return out
    assert run(ndgrad) == run(torch)


def test_inplace_squeeze_and_unsqueeze():
    def run(L):
        x = L.ones(1, 3, 1, requires_grad=True)
        out = []
        for f in (lambda c: c.unsqueeze_(0), lambda c: c.squeeze_(), lambda c: c.squeeze_(0),
                  lambda c: c.squeeze_((0, 2)), lambda c: c.squeeze_(-1),
                  lambda c: c.unsqueeze_(-1)):
            c = x.clone()
            v = c._version
            f(c)
            out.append((c.grad_fn.name(), tuple(c.shape), c._version - v))
        c = x.clone()
        c.squeeze_()
        c.unsqueeze_(1)
        (c * L.arange(3.0).reshape(3, 1)).sum().backward()
        out.append(x.grad.tolist())
        return out
    assert run(ndgrad) == run(torch)


def test_put_and_put_():
    def run(L):
        out = []
        x = L.arange(6.0, requires_grad=True)
        y = x.reshape(2, 3) * 1
        y.put_(L.tensor([1, 4]), L.tensor([10.0, 20.0]))
        out.append((y.grad_fn.name(), y.tolist()))
        (y * L.arange(6.0).reshape(2, 3)).sum().backward()
        out.append(x.grad.tolist())
        x2 = L.arange(6.0, requires_grad=True)
        s = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.put(x2.reshape(2, 3), L.tensor([[0], [5]]), s * 1, accumulate=True)
        (z * L.arange(6.0).reshape(2, 3)).sum().backward()
        out.append((z.grad_fn.name(), z.tolist(), x2.grad.tolist(), s.grad.tolist()))
        out.append(L.ones(3).put_(L.tensor([-1]), L.tensor([5.0])).tolist())
        for bad in (lambda: L.ones(3).put_(L.tensor([1, 9]), L.tensor([1.0, 2.0])),
                    lambda: L.ones(3).put_(L.tensor([1, 2]), L.tensor([1.0])),
                    lambda: L.ones(3).put_(L.tensor([1.0, 2]), L.tensor([1.0, 2])),
                    lambda: L.ones(3).put_(L.tensor([1]), L.tensor([5])),
                    lambda: L.ones(3).put_(L.tensor([-4]), L.tensor([5.0]))):
            e = error_of(bad)
            out.append((e[0].__name__, e[1]))
        return out
    assert run(ndgrad) == run(torch)
