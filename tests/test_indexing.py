"""Indexing, differential against torch 2.13: ``x[key]`` (values, grad_fn chains, gradients with
repeated indices), ``x[key] = v`` (values, history, gradients to base and value), the index
ops (gather, scatter family, index_*, masked_*, take, nonzero), double backward on a subset,
and error types/messages."""

import warnings

import numpy as np
import pytest
import torch
from _helpers import _arr, _chain, check_error, check_gradgrad, check_or_error
from _helpers import check as _check

import ndgrad

warnings.filterwarnings("ignore", category=UserWarning)
RNG = np.random.default_rng(5)


def check(fn, *args, **kw):
    """``_helpers.check`` comparing whole grad_fn chains, not grad dtypes."""
    return _check(fn, *args, chain=True, grad_dtype=False, **kw)


X = np.arange(24.0).reshape(2, 3, 4) + 0.5
M = RNG.standard_normal((3, 4))


# --------------------------------------------------------------------------- x[key]
KEYS = [
    lambda L, x: x[0], lambda L, x: x[-1], lambda L, x: x[0, 1], lambda L, x: x[0, 1:3],
    lambda L, x: x[:, 1], lambda L, x: x[:], lambda L, x: x[...], lambda L, x: x[..., 1],
    lambda L, x: x[None], lambda L, x: x[0, None, 1], lambda L, x: x[[0, 1]],
    lambda L, x: x[[0, 1], [1, 2]], lambda L, x: x[:, [0, 2]], lambda L, x: x[0, [0, 2]],
    lambda L, x: x[:, [[0, 1], [1, 2]]], lambda L, x: x[[0, 1], :, [1, 3]],
    lambda L, x: x[[1, 0, 1]], lambda L, x: x[L.tensor([1, 1, 0])],
    lambda L, x: x[L.tensor([[0], [1]]), L.tensor([0, 2])], lambda L, x: x[x > 5],
    lambda L, x: x[:, x[0, :, 0] > 1], lambda L, x: x[L.tensor(1)], lambda L, x: x[L.tensor(1), 2],
    lambda L, x: x[:, x[0] > 1],
    lambda L, x: x[True], lambda L, x: x[False], lambda L, x: x[::2], lambda L, x: x[1:, ..., 0:3:2],
    lambda L, x: x[..., None], lambda L, x: x[-2:, -1, [0, 0, 3]], lambda L, x: x[5:10],
    lambda L, x: x[1, :, [True, False, True, False]], lambda L, x: x[[[0, 1]]],
    lambda L, x: x[..., [0, 1], :], lambda L, x: x[[0], 1, [2]], lambda L, x: x[0, 1, 2],
    lambda L, x: x[:, :, [-1, 0]], lambda L, x: x[L.tensor([], dtype=L.long)], lambda L, x: x[[]],
    lambda L, x: x[np.int64(1)], lambda L, x: x[[0, 0, 0], [2, 2, 2]],
    lambda L, x: x[L.tensor([[True, False, True], [False, False, True]])],
    lambda L, x: x[..., ...], lambda L, x: x[..., 0, ...], lambda L, x: x[0, ..., ...],
    lambda L, x: x[1][2][3], lambda L, x: x.t()[1] if x.dim() == 2 else x.mT[1, :, [0, 1]],
]


@pytest.mark.parametrize("f", KEYS)
def test_getitem(f):
    check(f, X)


def test_getitem_grad_fn_chains():
    x = ndgrad.ones(3, 4, requires_grad=True)
    assert _chain(x[0, 1:3]) == ["SliceBackward0", "SelectBackward0"]
    assert _chain(x[[0, 1]]) == ["IndexBackward0"]
    assert _chain(x[...]) == ["AliasBackward0"]


def test_getitem_repeated_indices_accumulate():
    x = ndgrad.zeros(4, requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0, 0.0]


def test_getitem_views_share_memory():
    x = ndgrad.arange(12.0).reshape(3, 4).clone()
    v = x[1, 1:3]
    assert v._base is x
    v.mul_(10)
    assert x[1].tolist() == [4.0, 50.0, 60.0, 7.0]
    a = x[[1]]
    assert a._base is None


@pytest.mark.parametrize("key", [
    lambda L, x: x[2], lambda L, x: x[0, 3], lambda L, x: x[0, 0, 0, 0], lambda L, x: x[[0, 5]],
    lambda L, x: x[:, [3]], lambda L, x: x[0, :, [5]], lambda L, x: x[:, [0], [5]],
    lambda L, x: x[1, 1, 9], lambda L, x: x[-3], lambda L, x: x[1.5], lambda L, x: x[L.tensor([0.0])],
    lambda L, x: x[x[0] > 5], lambda L, x: x[::-1], lambda L, x: x["a"],
])
def test_getitem_errors(key):
    check_error(key, X)


# --------------------------------------------------------------------------- x[key] = v
SET_CASES = [
    (lambda x: (0,), (3, 4)), (lambda x: (0, 1), (4,)), (lambda x: (0, 1, 2), ()),
    (lambda x: (slice(None), 1), (2, 4)), (lambda x: (Ellipsis, 1), (2, 3)),
    (lambda x: (slice(None),), (4,)), (lambda x: ([0, 1],), (2, 3, 4)),
    (lambda x: ([0, 1], [1, 2]), (2, 4)), (lambda x: (slice(None), [0, 2]), (2, 2, 4)),
    (lambda x: (0, [0, 2]), (2, 4)), (lambda x: ([1, 1],), (3, 4)),
    (lambda x: (x > 5,), None), (lambda x: (slice(None), [True, False, True]), (2, 2, 4)),
    (lambda x: (None, 0), (1, 3, 4)), (lambda x: (Ellipsis, [0, 3]), (2, 3, 2)),
    (lambda x: (1, slice(1, 3), [0, 3]), (2, 2)), (lambda x: (0, slice(None), [[0], [1]]), (2, 1)),
    (lambda x: ([0, 1], slice(None), [1, 3]), (2, 3)), (lambda x: (0,), None),
    (lambda x: (True,), None), (lambda x: (False,), None), (lambda x: (Ellipsis,), (4,)),
    (lambda x: (slice(None, None, 2), slice(1, None)), (1, 2, 4)),
]


@pytest.mark.parametrize("case", SET_CASES)
def test_setitem(case):
    keyf, vshape = case
    res = {}
    for lib in (torch, ndgrad):
        leaf = lib.tensor(X, requires_grad=True)
        x = leaf.clone()
        key = keyf(x.detach())
        if vshape is None:
            x[key] = 7.0
            v = None
        else:
            v = lib.tensor(np.random.default_rng(1).standard_normal(vshape), requires_grad=True)
            x[key] = v
        g = np.random.default_rng(0).standard_normal(X.shape)
        (x * lib.tensor(g)).sum().backward()
        res[lib.__name__] = (_arr(x), type(x.grad_fn).__name__, _arr(leaf.grad),
                             None if v is None else _arr(v.grad), x._version)
    t, n = res["torch"], res["ndgrad"]
    np.testing.assert_allclose(n[0], t[0])
    assert n[1] == t[1]
    np.testing.assert_allclose(n[2], t[2])
    if t[3] is not None:
        np.testing.assert_allclose(n[3], t[3], rtol=1e-12)
    assert (n[4] > 0) == (t[4] > 0)


def test_setitem_on_view_and_version():
    x = ndgrad.zeros(3, 4)
    v = x[1]
    v[2] = 5.0
    assert x[1, 2].item() == 5.0 and x._version == v._version == 1
    x[0] = ndgrad.tensor([1, 2, 3, 4])  # int source is cast
    assert x[0].tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("case", [
    (lambda x: (0,), (4, 3)), (lambda x: ([0, 1],), (3, 3, 4)), (lambda x: (5,), (4,)),
    (lambda x: ([5],), (4,)), (lambda x: (slice(None), 1), (3,)), (lambda x: ([5],), None),
])
def test_setitem_errors(case):
    keyf, vs = case
    msgs = []
    for lib in (torch, ndgrad):
        x = lib.tensor(X)
        with pytest.raises(Exception) as e:
            x[keyf(x)] = lib.zeros(vs, dtype=lib.float64) if vs == (4,) and \
                keyf(x) == (5,) else (lib.zeros(vs) if vs is not None else 1.0)
        msgs.append((type(e.value), str(e.value)))
        np.testing.assert_array_equal(_arr(x), X)
    assert issubclass(msgs[1][0], msgs[0][0].__mro__[-3] if msgs[0][0].__module__ != "builtins"
                      else msgs[0][0])
    assert msgs[1][1] == msgs[0][1]


def test_setitem_leaf_error():
    for lib in (torch, ndgrad):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[0] = 1.0


# --------------------------------------------------------------------------- index ops
IDX = np.array([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 0, 1]])


@pytest.mark.parametrize("f", [
    lambda L, x: x.gather(0, L.tensor(IDX)), lambda L, x: L.gather(x, 1, L.tensor(IDX[:2, :2])),
    lambda L, x: x.gather(-1, L.tensor([[3], [3], [0]])),
    lambda L, x: L.take_along_dim(x, L.tensor([[0], [1], [3]]), 1),
    lambda L, x: L.take_along_dim(x, L.tensor([0, 5, 5])), lambda L, x: x.take(L.tensor([[0, 11], [5, 5]])),
    lambda L, x: x.take(L.tensor([-1])), lambda L, x: x.index_select(1, L.tensor([3, 0, 3])),
    lambda L, x: L.index_select(x, 0, L.tensor([], dtype=L.long)),
    lambda L, x: x.masked_select(x > 0), lambda L, x: x.masked_select(L.tensor([True, False, True, True])),
    lambda L, x: x.masked_fill(x > 0, 2.0), lambda L, x: x.masked_fill(L.tensor([True, False, True, False]), -1),
    lambda L, x: x.masked_fill(x < 0, x.sum()), lambda L, x: L.masked_fill(x, x > 0, float("nan")),
    lambda L, x: x.scatter(1, L.tensor(IDX[:, :2]), 5.0), lambda L, x: x.scatter(0, L.tensor(IDX[:1]), x[:1] * 2),
    lambda L, x: x.scatter_add(0, L.tensor(IDX), x * 3), lambda L, x: L.scatter_add(x, 1, L.tensor(IDX[:, :2]), x[:, :2]),
    lambda L, x: x.scatter(1, L.tensor(IDX[:, :1]).int(), x[:, 1:2]),
    lambda L, x: x.index_add(1, L.tensor([0, 0, 3]), x[:, :3] * 2),
    lambda L, x: x.index_add(0, L.tensor([2, 2]), x[:2], alpha=-1.5),
    lambda L, x: x.index_copy(1, L.tensor([3, 1]), x[:, :2] * 2),
    lambda L, x: x.index_fill(1, L.tensor([0, 2, 0]), -2.0),
    lambda L, x: x.index_fill(0, L.tensor([1, 1]), x[0, 0] * 3),
    lambda L, x: x.masked_scatter(x > 0, x * 10), lambda L, x: x.masked_scatter(L.tensor([True, False, False, True]), x.flip(0)),
    lambda L, x: x.index_put((L.tensor([0, 2]), L.tensor([1, 1])), x[0, :2] * 2),
    lambda L, x: x.index_put((L.tensor([0, 0]),), x[1] * 2, accumulate=True),
    lambda L, x: L.index_put(x, (L.tensor([0, 0]), L.tensor([1, 1])), L.tensor(3.0).double()),
    lambda L, x: x.nonzero(), lambda L, x: L.nonzero(x > 0, as_tuple=True),
    lambda L, x: L.argwhere(x > 0), lambda L, x: x.unsqueeze(0)[0, 0, 0].nonzero(),
])
def test_index_ops(f):
    check(f, M)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    src = np.array([[1.0, 2.0, 2.0, -1.0], [0.5, 3.0, 2.0, 0.0], [4.0, 2.0, 2.0, 1.0]])
    base = np.array([[2.0, 1.0, 2.0, 0.0], [1.0, 2.0, 2.0, 3.0], [0.0, 2.0, 1.0, 2.0]])
    idx = np.array([[0, 1, 1, 0], [2, 1, 1, 2], [0, 0, 3, 3]])
    check(lambda L, x, s: x.scatter_reduce(1, L.tensor(idx), s, reduce, include_self=include_self),
          base, src)
    check_gradgrad(lambda L, x, s: x.scatter_reduce(1, L.tensor(idx), s, reduce,
                                                    include_self=include_self) ** 2
                   if reduce != "prod" else x.scatter_reduce(1, L.tensor(idx), s + 2.0, reduce,
                                                             include_self=include_self),
                   base, src)


def test_in_place_index_ops():
    for f in (lambda L, x: x.clone().index_fill_(1, L.tensor([0]), 2.0),
              lambda L, x: x.clone().index_copy_(0, L.tensor([1]), x[:1] * 2),
              lambda L, x: x.clone().masked_scatter_(x > 0, x * 3),
              lambda L, x: x.clone().masked_fill_(x > 0, x[0, 0]),
              lambda L, x: x.clone().scatter_(1, L.tensor(IDX[:, :1]), 0.5),
              lambda L, x: x.clone().scatter_(1, L.tensor(IDX[:, :1]), x[:, :1] * 2),
              lambda L, x: x.clone().scatter_add_(1, L.tensor(IDX[:, :1]), x[:, :1] * 2),
              lambda L, x: x.clone().scatter_reduce_(1, L.tensor(IDX), x, "amax"),
              lambda L, x: x.clone().index_add_(1, L.tensor([1, 1]), x[:, :2]),
              lambda L, x: x.clone().index_put_((L.tensor([0, 0]),), x[1], accumulate=True)):
        check(f, M)


def test_scatter_with_reduce_has_no_derivative():
    for lib in (torch, ndgrad):
        x = lib.tensor(M, requires_grad=True)
        y = x.scatter(1, lib.tensor(IDX[:, :1]), x[:, :1], reduce="add")
        assert type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            y.sum().backward()
    check(lambda L, x: x.scatter(1, L.tensor(IDX[:, :2]), 2.0, reduce="multiply"), M, grad=False)
    check(lambda L, x: x.scatter(1, L.tensor(IDX[:, :2]), x[:, :2], reduce="add"), M, grad=False)


def test_unique_fill_value_counts_once():
    # index_fill's value gradient uses the distinct indices, as torch
    check(lambda L, x, v: x.index_fill(1, L.tensor([1, 1, 3]), v), M, np.array(2.0))
    check(lambda L, x, v: x.masked_fill(x > 0, v), M, np.array(2.0))


@pytest.mark.parametrize("f", [
    lambda L, x: x.gather(1, L.tensor([[4]])), lambda L, x: x.gather(1, L.tensor([[0.0]])),
    lambda L, x: x.scatter(1, L.tensor([[4]]), 1.0), lambda L, x: x.take(L.tensor([12])),
    lambda L, x: x.index_select(0, L.tensor([3])), lambda L, x: x.index_select(0, L.tensor([[0]])),
    lambda L, x: x.masked_fill(x, 1.0), lambda L, x: x.masked_fill(x > 0, L.ones(2)),
    lambda L, x: x.masked_select(L.tensor([True, False])),
    lambda L, x: x.scatter(1, L.tensor([[0]]), x, reduce="sum"),
    lambda L, x: x.masked_fill(x.long(), 1.0), lambda L, x: x.masked_fill(x.float(), 1.0),
    lambda L, x: x.index_select(0, L.tensor([0.])), lambda L, x: x.index_fill(0, L.tensor([0.]), 1.0),
    lambda L, x: x.index_copy(0, L.tensor([0], dtype=L.int32), x[:1]),
    lambda L, x: x.masked_select(x.long()), lambda L, x: x.masked_scatter(x.long(), x),
    lambda L, x: x.masked_scatter(x > 0, x.float()),
    lambda L, x: x.scatter(1, L.tensor([[0]]), x.float()), lambda L, x: x.index_add(0, L.tensor([0]), x[:1].float()),
    lambda L, x: x.gather(0, L.tensor([0])), lambda L, x: x.scatter(0, L.tensor([[0, 0, 0, 0, 0]]), 1.0),
    lambda L, x: x.index_put((L.tensor([0, 0]), L.tensor([1, 1])), L.tensor(3.0)),
    lambda L, x: x.scatter_add(1, L.tensor([[0.]]), x),
    lambda L, x: x.index_fill(1, L.tensor([4]), 1.0), lambda L, x: x.index_copy(0, L.tensor([0]), x[:1].float()),
    lambda L, x: x.take(L.tensor([0], dtype=L.int32)),
])
def test_index_op_errors(f):
    check_error(f, M)


# --------------------------------------------------------------------------- double backward
@pytest.mark.parametrize("f", [
    lambda L, x: x[0, 1:3] ** 2, lambda L, x: x[[0, 0, 2]] ** 2, lambda L, x: x[x > 0] ** 3,
    lambda L, x: x[..., None] * x[:, None], lambda L, x: x.gather(1, L.tensor(IDX)) ** 2,
    lambda L, x: x.take(L.tensor([0, 0, 5])) ** 2, lambda L, x: x.index_select(0, L.tensor([2, 2])) ** 2,
    lambda L, x: x.scatter(1, L.tensor(IDX[:, :2]), x[:, :2] ** 2),
    lambda L, x: x.scatter_add(1, L.tensor(IDX[:, :2]), x[:, 1:3]) ** 2,
    lambda L, x: x.index_add(1, L.tensor([0, 0]), x[:, :2] ** 2),
    lambda L, x: x.masked_fill(x > 0, 1.0) ** 2, lambda L, x: x.masked_select(x > 0) ** 2,
    lambda L, x: x.masked_scatter(x > 0, x ** 2), lambda L, x: x.index_copy(1, L.tensor([2]), x[:, :1] ** 2),
    lambda L, x: x.index_put((L.tensor([0, 0]),), x[1] ** 2, accumulate=True) ** 2,
])
def test_double_backward(f):
    check_gradgrad(f, M)


def test_double_backward_setitem():
    def f(L, x):
        y = x.clone()
        y[0, 1:3] = x[1, :2] ** 2
        y[[2, 2]] = x[0] * 3
        return y ** 2
    check_gradgrad(f, M)


_DTYPE_OPS = [
    lambda L, x: L.cat([x, x.to(L.float32)]), lambda L, x: x.flip(1), lambda L, x: x.rot90(),
    lambda L, x: x.repeat_interleave(2, dim=0), lambda L, x: L.diag_embed(x),
    lambda L, x: L.kron(x, x), lambda L, x: x.scatter(1, L.tensor([[0], [1], [2]]), 1),
    lambda L, x: x.scatter_add(1, L.tensor([[0, 0], [1, 1], [2, 2]]), x[:, :2]),
    lambda L, x: x.scatter_reduce(1, L.tensor([[0, 0], [1, 1], [2, 2]]), x[:, :2], "mean"),
    lambda L, x: x.scatter_reduce(1, L.tensor([[0, 0], [1, 1], [2, 2]]), x[:, :2], "amax",
                                  include_self=False),
    lambda L, x: x.index_add(0, L.tensor([1, 1]), x[:2], alpha=2),
    lambda L, x: x.index_fill(0, L.tensor([1]), 3), lambda L, x: x.masked_fill(x > 1, 7),
    lambda L, x: x.masked_scatter(x > 1, x * 2), lambda L, x: x[x > 1],
    lambda L, x: x.index_put((L.tensor([0, 0]),), x[1], accumulate=True),
]


@pytest.mark.parametrize("dt", ["int8", "uint8", "int64", "bool", "float16"])
def test_dtypes(dt):
    rng = np.random.default_rng(2)
    a = (rng.integers(0, 2, (3, 4)).astype(bool) if dt == "bool" else
         rng.standard_normal((3, 4)).astype(dt) if dt == "float16" else
         rng.integers(0, 5, (3, 4)).astype(dt))
    check_or_error(_DTYPE_OPS, a, checker=check, grad=False, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("f", [
    lambda L, x: x.gather(1, L.tensor([[-1]])), lambda L, x: x.scatter(1, L.tensor([[-1]]), 1.0),
    lambda L, x: x.index_select(1, L.tensor([-1])), lambda L, x: x.index_select(1, L.tensor([4])),
    lambda L, x: x.index_add(1, L.tensor([-1]), x[:, :1]),
    lambda L, x: x.index_add(1, L.tensor([4]), x[:, :1]),
    lambda L, x: x.index_copy(1, L.tensor([-1]), x[:, :1]),
    lambda L, x: x.index_copy(1, L.tensor([4]), x[:, :1]),
    lambda L, x: x.scatter_add(1, L.tensor([[-1]]), x[:1, :1]),
    lambda L, x: x.index_fill(1, L.tensor([4]), 1.0), lambda L, x: x.index_fill(1, L.tensor([-5]), 1.0),
    lambda L, x: x.take(L.tensor([-13])), lambda L, x: x.gather(1, L.tensor([[4]])),
])
def test_index_bounds(f):
    check_error(f, M)


def test_negative_indices_where_torch_accepts_them():
    for f in (lambda L, x: x.take(L.tensor([-1, -12])), lambda L, x: x.index_fill(1, L.tensor([-1]), 1.0),
              lambda L, x: x[:, L.tensor([-1])], lambda L, x: x.index_put((L.tensor([-1]),), x[0] * 2)):
        check(f, M)


def _random_key(lib, rnd):
    parts = []
    for _ in range(rnd.randint(1, 4)):
        c = rnd.random()
        if c < 0.2:
            parts.append(rnd.randint(-4, 4))
        elif c < 0.4:
            parts.append(slice(rnd.choice([None, -3, -1, 0, 1, 2, 5]),
                               rnd.choice([None, -2, 0, 1, 3, 6]), rnd.choice([None, 1, 2, 3])))
        elif c < 0.5:
            parts.append(None)
        elif c < 0.57:
            parts.append(Ellipsis)
        elif c < 0.75:
            parts.append([rnd.randint(-3, 3) for _ in range(rnd.randint(0, 3))])
        elif c < 0.85:
            parts.append(lib.tensor([rnd.randint(-3, 3) for _ in range(rnd.randint(1, 3))]))
        elif c < 0.93:
            parts.append(lib.tensor([rnd.random() < 0.5 for _ in range(rnd.choice([3, 4, 5]))]))
        else:
            parts.append(rnd.choice([True, False]))
    return tuple(parts)


@pytest.mark.parametrize("write", [False, True])
def test_random_keys_match_torch(write):
    """Random mixes of ints, slices, None, Ellipsis, lists, index and mask tensors and bools:
    x[key] (values, grads) and x[key] = -1 (values, history, grads), or the same error."""
    import random
    a = np.arange(60.0).reshape(3, 4, 5)
    rnd = random.Random(1 if write else 0)
    for _ in range(150):
        state = rnd.getstate()
        res = []
        for lib in (torch, ndgrad):
            rnd.setstate(state)
            key = _random_key(lib, rnd)
            if sum(k is Ellipsis for k in key) > 1:
                res.append("skip")  # torch's own handling of repeated Ellipsis is erratic
                continue
            leaf = lib.tensor(a, requires_grad=True)
            try:
                if write:
                    x = leaf.clone()
                    x[key] = -1.0
                    (x * lib.tensor(a)).sum().backward()
                    res.append((_arr(x).tolist(), type(x.grad_fn).__name__,
                                _arr(leaf.grad).tolist()))
                else:
                    y = leaf[key]
                    y.backward(lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))))
                    res.append((tuple(y.shape), _arr(y).tolist(), _arr(leaf.grad).tolist()))
            except Exception as e:  # noqa: BLE001 - compared with torch's
                res.append(f"{type(e).__name__}: {e}")
        assert res[0] == res[1], key


def test_index_ops_on_0d_and_empty_tensors():
    s = np.array(1.5)
    e = np.zeros((0, 3))
    for f in (lambda L, x: x.gather(0, L.tensor(0)), lambda L, x: x.scatter(0, L.tensor(0), 2.0),
              lambda L, x: x.scatter_add(0, L.tensor(0), x * 2),
              lambda L, x: x.index_select(0, L.tensor([0])),
              lambda L, x: x.index_add(0, L.tensor([0]), x * 3)):
        check(f, s)
    for f in (lambda L, x: x.index_select(0, L.tensor([0, 0])),
              lambda L, x: x.index_add(0, L.tensor([0, 0]), x),
              lambda L, x: x.index_add(0, L.tensor([0]), x.reshape(1)),
              lambda L, x: x.index_put((L.tensor([0]),), L.tensor(1.0).double())):
        check_error(f, s)
    check_error(lambda L, x: x.take(L.tensor([0])), e)
    check_error(lambda L, x: x.index_put((L.tensor([0]),), L.tensor(1.0).double()), e)
    check(lambda L, x: x.index_add(1, L.tensor([0, 0]), L.ones(0, 2, dtype=L.float64)), e)
    check_error(lambda L, x: x[0].index_add(0, L.tensor([3]), x[0, :1]),
                np.zeros((1, 3)))
