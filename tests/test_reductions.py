"""Reductions, scans, sorting and selection, differential against torch 2.13: values, dtypes,
shapes, grad_fn names, gradients (backward with random grad_outputs), double backward on a
representative subset, ties and special values, and error types/messages."""

import warnings

import numpy as np
import pytest
import torch
from _helpers import (
    _arr,
    _name,
    backward_linspace,
    check,
    check_error,
    check_gradgrad,
    check_or_error,
)

import ndgrad

warnings.filterwarnings("ignore", category=UserWarning)
RNG = np.random.default_rng(1234)


def r(*shape, dtype=np.float64, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def ties(*shape, k=3, dtype=np.float64):
    return RNG.integers(0, k, shape).astype(dtype)


X = r(3, 4)
X3 = r(2, 3, 4)


# --------------------------------------------------------------------------- sum / mean / prod
@pytest.mark.parametrize("f", [
    lambda L, x: x.sum(), lambda L, x: x.sum(1), lambda L, x: x.sum(-1, keepdim=True),
    lambda L, x: x.sum((0, 2)), lambda L, x: L.sum(x, dim=[-1, 0]), lambda L, x: x.mean(),
    lambda L, x: x.mean((0, 1), keepdim=True), lambda L, x: L.mean(x, -2),
    lambda L, x: x.prod(), lambda L, x: x.prod(1), lambda L, x: x.prod(-1, keepdim=True),
    lambda L, x: x.sum(dtype=L.float32), lambda L, x: x.amax(), lambda L, x: x.amax((0, 2)),
    lambda L, x: x.amin(1, keepdim=True), lambda L, x: x.max(), lambda L, x: x.min(),
    lambda L, x: x.max(1), lambda L, x: x.min(-1, keepdim=True), lambda L, x: L.max(x, 0),
    lambda L, x: L.max(x, dim=2, keepdim=True).values, lambda L, x: x.nansum(),
    lambda L, x: x.nansum(1), lambda L, x: x.nanmean(), lambda L, x: x.nanmean(-1, True),
    lambda L, x: x.logsumexp(1), lambda L, x: x.logsumexp((0, 1), keepdim=True),
    lambda L, x: L.logsumexp(x, -1),
])
def test_reductions_3d(f):
    check(f, X3)


@pytest.mark.parametrize("f", [
    lambda L, x: x.var(), lambda L, x: x.var(1), lambda L, x: x.var(0, unbiased=False),
    lambda L, x: x.var(1, correction=0, keepdim=True), lambda L, x: x.std(),
    lambda L, x: x.std(-1), lambda L, x: x.std(0, correction=2), lambda L, x: L.var_mean(x),
    lambda L, x: L.var_mean(x, 1, keepdim=True), lambda L, x: L.std_mean(x, 0),
    lambda L, x: L.std_mean(x, (0, 1), correction=0), lambda L, x: x.var(False),
    lambda L, x: L.var(x, dim=None, correction=1.5), lambda L, x: x.std((0, 1)),
])
def test_var_std(f):
    check(f, X)


def test_var_mean_single_output_grad():
    check(lambda L, x: L.var_mean(x, 1)[1], X)
    check(lambda L, x: L.std_mean(x, 1)[0], X)


def test_std_zero_gradient_masked():
    check(lambda L, x: x.std(), np.ones(4))
    check(lambda L, x: x.std(1), np.array([[1.0, 1, 1], [1, 2, 3]]))


def test_var_degenerate():
    check(lambda L, x: x.var(), np.array([2.0]), grad=False)
    check(lambda L, x: x.var(0, correction=3), np.array([[1.0, 2], [3, 4]]), grad=False)


@pytest.mark.parametrize("f", [lambda L, x: x.var(), lambda L, x: x.std(0),
                               lambda L, x: x.mean(), lambda L, x: L.var_mean(x)])
def test_integer_var_mean_errors(f):
    check_error(f, np.array([1, 2, 3]))


def test_sum_integers_and_bool_dtype():
    check(lambda L, x: x.sum(), np.array([[1, 2], [3, 4]], np.int32))
    check(lambda L, x: x.sum(0), np.array([[True, False], [True, True]]))
    check(lambda L, x: x.prod(1), np.array([[1, 2], [3, 4]], np.int16))
    check(lambda L, x: x.mean(dtype=L.float64), np.array([1, 2], np.int64))
    check(lambda L, x: x.cumsum(0), np.array([1, 2], np.int32))
    check(lambda L, x: x.nansum(), np.array([1, 2], np.int8))


def test_float32_values():
    x = r(4, 5, dtype=np.float32)
    for f in (lambda L, x: x.sum(1), lambda L, x: x.var(0), lambda L, x: x.logsumexp(1),
              lambda L, x: x.norm(), lambda L, x: x.cumprod(1), lambda L, x: L.std_mean(x, 1)):
        check(f, x, rtol=1e-5, atol=1e-6)


def test_prod_with_zeros():
    x = np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.0, 2.0, -1.0]])
    check(lambda L, x: x.prod(1), x)
    check(lambda L, x: x.prod(0, keepdim=True), x)
    check(lambda L, x: x.prod(), np.array([2.0, 0.0, 3.0]))
    check(lambda L, x: x.prod(), x)


# --------------------------------------------------------------------------- ties / special values
def test_amax_splits_evenly_among_ties():
    x = np.array([[1.0, 3, 3], [2, 2, 2]])
    check(lambda L, x: x.amax(1), x)
    check(lambda L, x: x.amax(), x)
    check(lambda L, x: x.max(), x)
    check(lambda L, x: x.amin(0), x)
    check(lambda L, x: x.min(), x)


def test_max_dim_sends_gradient_to_index():
    x = np.array([[1.0, 3, 3], [2, 2, 2]])
    _, n = check(lambda L, x: x.max(1), x)
    assert n.indices.tolist() == [1, 0]
    check(lambda L, x: x.min(1), x)
    check(lambda L, x: x.argmax(1), x, grad=False)
    check(lambda L, x: x.argmin(), x, grad=False)
    check(lambda L, x: x.argmax(keepdim=True), x, grad=False)


def test_max_nan_propagation():
    x = np.array([[1.0, np.nan, 3], [np.nan, 2, np.nan]])
    check(lambda L, x: x.max(1), x, grad=False)
    check(lambda L, x: x.min(1), x, grad=False)
    check(lambda L, x: x.amax(1), x, grad=False)
    check(lambda L, x: x.argmax(1), x, grad=False)


def test_max_binary_and_named_tuple():
    check(lambda L, x: L.max(x, x * 2 - 1), X)
    _, n = check(lambda L, x: L.min(x, 0, True), X)
    assert n.values is n[0] and n.indices is n[1]


def test_logsumexp_special_values():
    ninf, inf = -np.inf, np.inf
    check(lambda L, x: x.logsumexp(1), np.array([[ninf, ninf], [0.0, ninf], [1000.0, 1000.0]]))
    check(lambda L, x: x.logsumexp(0), np.array([inf, 1.0]))
    check(lambda L, x: x.logsumexp(0), np.array([1e4, -1e4, 3.0]))
    check(lambda L, x: L.logsumexp(x, 0), np.array([1, 2, 3]), grad=False)
    check(lambda L, x: x.logsumexp(0), np.array(2.5))


def test_nan_reductions():
    x = np.array([[1.0, np.nan, 3], [np.nan, np.nan, np.nan], [1, 2, 3]])
    check(lambda L, x: x.nansum(1), x)
    check(lambda L, x: x.nansum(), x)
    check(lambda L, x: x.nanmean(1), x)
    check(lambda L, x: x.nanmean(), x)


# --------------------------------------------------------------------------- norm
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 1.5, float("inf"), float("-inf"), 0, "fro"])
def test_norm(p):
    check(lambda L, x: x.norm(p), X)
    check(lambda L, x: x.norm(p, dim=1), X)
    check(lambda L, x: L.norm(x, p, dim=(0, 1), keepdim=True), X)


def test_norm_special_points():
    z = np.zeros((2, 3))
    check(lambda L, x: x.norm(), z)
    check(lambda L, x: x.norm(dim=1), np.array([[0.0, 0, 0], [3, 4, 0]]))
    check(lambda L, x: x.norm(3, dim=1), np.array([[0.0, 0, 0], [3, 4, 0]]))
    check(lambda L, x: x.norm(float("inf")), np.array([[1.0, -3], [3, 2]]))
    check(lambda L, x: x.norm(0.5, dim=1), np.array([[0.0, 1.0], [2, 3]]))
    check_error(lambda L, x: x.norm(), np.array([1, 2]))


# --------------------------------------------------------------------------- scans
@pytest.mark.parametrize("f", [
    lambda L, x: x.cumsum(1), lambda L, x: x.cumsum(-3), lambda L, x: L.cumsum(x, 0),
    lambda L, x: x.cumprod(2), lambda L, x: x.cumprod(0), lambda L, x: x.cummax(1),
    lambda L, x: x.cummin(-1), lambda L, x: x.logcumsumexp(1), lambda L, x: x.logcumsumexp(2),
    lambda L, x: x.cumsum(1, dtype=L.float32),
])
def test_scans(f):
    check(f, X3)


def test_scans_special():
    zs = np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 0.0]])
    check(lambda L, x: x.cumprod(1), zs)
    t = ties(3, 6)
    check(lambda L, x: x.cummax(1), t)
    check(lambda L, x: x.cummin(1), t)
    nan = np.array([1.0, np.nan, 3.0, 0.0])
    check(lambda L, x: x.cummax(0), nan, grad=False)
    check(lambda L, x: x.cummin(0), nan, grad=False)
    big = np.array([[1000.0, -1000.0, 999.0], [-np.inf, -np.inf, 0.0]])
    check(lambda L, x: x.logcumsumexp(1), big)
    check(lambda L, x: x.cumsum(0), np.array(3.0))
    check(lambda L, x: x.cummax(0), np.array(3.0))


# --------------------------------------------------------------------------- bool reductions
def test_all_any_count_nonzero():
    b = np.array([[True, False, True], [True, True, True]])
    i = np.array([[0, 2, 3], [1, 0, 0]], np.uint8)
    f = np.array([[0.0, 2.0], [np.nan, 0.0]])
    for x in (b, i, f):
        check(lambda L, x: x.all(), x, grad=False)
        check(lambda L, x: x.any(1), x, grad=False)
        check(lambda L, x: L.all(x, 0, keepdim=True), x, grad=False)
        check(lambda L, x: L.count_nonzero(x), x, grad=False)
        check(lambda L, x: L.count_nonzero(x, dim=1), x, grad=False)
        check(lambda L, x: L.count_nonzero(x, dim=(0, 1)), x, grad=False)


# --------------------------------------------------------------------------- sorting / selection
@pytest.mark.parametrize("f", [
    lambda L, x: x.sort(), lambda L, x: x.sort(0, descending=True),
    lambda L, x: x.sort(dim=-1, stable=True), lambda L, x: x.argsort(1, descending=True),
    lambda L, x: L.argsort(x), lambda L, x: L.msort(x), lambda L, x: x.topk(2),
    lambda L, x: x.topk(3, 0, largest=False), lambda L, x: x.topk(2, 1, sorted=False),
    lambda L, x: x.kthvalue(2), lambda L, x: x.kthvalue(3, 0, keepdim=True),
    lambda L, x: x.median(), lambda L, x: x.median(1), lambda L, x: x.median(0, keepdim=True),
    lambda L, x: x.nanmedian(), lambda L, x: x.nanmedian(1), lambda L, x: x.mode(),
    lambda L, x: x.mode(0, True),
])
def test_sort_select(f):
    check(f, X)
    check(f, ties(5, 4, k=2))


def test_tie_order_matches_torch_kernels():
    # rows long enough for introsort / introselect / heap-select to reorder equal keys
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(2, 80))
        x = rng.integers(0, int(rng.integers(1, 5)), (2, n)).astype(np.float32)
        if trial % 4 == 0:
            x[rng.random(x.shape) < 0.2] = np.nan
        k = int(rng.integers(1, n + 1))
        t, d = torch.tensor(x), ndgrad.tensor(x)
        for f in (lambda z: z.sort(dim=1), lambda z: z.sort(dim=1, descending=True),
                  lambda z, k=k: z.topk(k, 1),
                  lambda z, k=k: z.topk(k, 1, largest=False, sorted=False),
                  lambda z, k=k: z.kthvalue(k, 1), lambda z: z.median(1),
                  lambda z: z.nanmedian(1), lambda z: z.mode(1)):
            assert f(d).indices.tolist() == f(t).indices.tolist()


def test_topk_partial_sort_path_and_ties_grad():
    x = ties(2, 130, k=4)
    check(lambda L, x: x.topk(2, 1), x)
    check(lambda L, x: x.topk(1, 1, largest=False), x)
    check(lambda L, x: x.sort(1, descending=True), x)


def test_median_all_ties_distribute_evenly():
    check(lambda L, x: x.median(), np.array([1.0, 2.0, 2.0, 3.0, 2.0]))
    check(lambda L, x: x.nanmedian(), np.array([np.nan, 2.0, 2.0, 1.0]))
    check(lambda L, x: x.median(), np.array([np.nan, 2.0, np.nan]))


def test_sort_nan_placement():
    x = np.array([[3.0, np.nan, 1.0, np.nan, 2.0]])
    check(lambda L, x: x.sort(1), x)
    check(lambda L, x: x.sort(1, descending=True), x)
    check(lambda L, x: x.topk(2, 1), x)
    check(lambda L, x: x.topk(2, 1, largest=False), x)


def test_sort_0d_and_integers():
    check(lambda L, x: x.sort(), np.array(3.0))
    check(lambda L, x: x.topk(1), np.array(3.0))
    check(lambda L, x: x.sort(0, descending=True), np.array([3, 1, 2, 1], np.int64))
    check_error(lambda L, x: x.topk(2), np.array([True, False, True]))


def test_unique():
    x = np.array([[3, 1, 2], [1, 3, 3]], np.int64)
    check(lambda L, x: L.unique(x), x)
    check(lambda L, x: x.unique(return_inverse=True, return_counts=True), x)
    check(lambda L, x: L.unique(x, dim=0), np.array([[1, 2], [0, 1], [1, 2]]))
    check(lambda L, x: L.unique(x, dim=1, return_inverse=True, return_counts=True),
          np.array([[1, 0, 1], [2, 1, 2]]))
    check(lambda L, x: L.unique_consecutive(x, return_inverse=True, return_counts=True),
          np.array([1, 1, 2, 2, 3, 1, 1, 2]))
    check(lambda L, x: x.unique(), np.array([2.0, 1.0, 2.0]), grad=False)
    n = ndgrad.tensor([2.0, 1.0, 2.0], requires_grad=True).unique()
    assert type(n.grad_fn).__name__ == "Unique2Backward0"
    with pytest.raises(NotImplementedError,
                       match="the derivative for '_unique2' is not implemented"):
        n.sum().backward()


@pytest.mark.parametrize("f", [
    lambda L, x: x.topk(5), lambda L, x: x.kthvalue(0), lambda L, x: x.kthvalue(5, 1),
    lambda L, x: x.sum(3), lambda L, x: x.amax(-3), lambda L, x: x.max(2),
    lambda L, x: x.cumsum(2), lambda L, x: x.sort(5), lambda L, x: x.var(4),
    lambda L, x: x.logsumexp(2), lambda L, x: x.median(-3), lambda L, x: x.norm(dim=3),
    lambda L, x: x.sum((0, 0)),
])
def test_errors(f):
    check_error(f, X)


def test_errors_empty():
    e = np.zeros((0, 3))
    check_error(lambda L, x: x.max(), e)
    check_error(lambda L, x: x.amax(0), e)
    check_error(lambda L, x: x.max(0), e)
    check_error(lambda L, x: x.argmax(), e)
    check_error(lambda L, x: x.argmin(0), e)
    check_error(lambda L, x: x.amin(), e)
    check_error(lambda L, x: x.median(0), e)
    check_error(lambda L, x: x.nanmedian(0), e)
    check_error(lambda L, x: x.mode(0), e)
    check_error(lambda L, x: x.kthvalue(1, 0), e)
    check(lambda L, x: x.median(), e, grad=False)
    check_error(lambda L, x: x.sort(), np.array([1 + 1j]))


def test_empty_reductions():
    e = np.zeros((0, 3))
    check(lambda L, x: x.sum(0), e)
    check(lambda L, x: x.prod(), e)
    check(lambda L, x: x.amax(1), e)
    check(lambda L, x: x.logsumexp(0), e)
    check(lambda L, x: x.cumsum(0), e)
    check(lambda L, x: x.norm(), e)


# --------------------------------------------------------------------------- double backward
@pytest.mark.parametrize("f", [
    lambda L, x: x.sum(1) ** 2, lambda L, x: x.prod(1), lambda L, x: x.var(1),
    lambda L, x: x.std(0), lambda L, x: L.var_mean(x, 1), lambda L, x: L.std_mean(x),
    lambda L, x: x.logsumexp(1), lambda L, x: x.norm(dim=1), lambda L, x: x.norm(3),
    lambda L, x: x.norm(1.5, dim=0), lambda L, x: x.cumsum(1) ** 2, lambda L, x: x.cumprod(1),
    lambda L, x: x.logcumsumexp(1), lambda L, x: x.amax(1) ** 2,
    lambda L, x: x.max(1).values ** 2, lambda L, x: x.sort(1).values ** 2,
    lambda L, x: x.topk(2).values ** 2, lambda L, x: x.cummax(1).values ** 2,
    lambda L, x: x.median(1).values ** 2, lambda L, x: x.nansum(0) ** 2,
    lambda L, x: x.mean(0) ** 3,
])
def test_double_backward(f):
    check_gradgrad(f, X)


def test_double_backward_cumprod_with_zero():
    check_gradgrad(lambda L, x: x.cumprod(1), np.array([[1.5, 0.0, 2.0, -1.0]]))
    check_gradgrad(lambda L, x: x.prod(1), np.array([[1.5, 0.0, 2.0, -1.0]]))


# --------------------------------------------------------------------------- API spellings
@pytest.mark.parametrize("f", [
    lambda L, x: x.sum(axis=0), lambda L, x: x.mean(axis=1, keepdims=True),
    lambda L, x: L.amax(x, axis=(0, 1)), lambda L, x: x.std(axis=0),
    lambda L, x: L.concatenate([x, x], axis=1), lambda L, x: L.swapaxes(x, axis0=0, axis1=1),
    lambda L, x: x.split(split_size=2, dim=1), lambda L, x: L.max(x, dim=1, keepdim=True),
    lambda L, x: x.sort(dim=0, descending=True), lambda L, x: L.topk(x, k=2, dim=0),
    lambda L, x: L.norm(x, p=1, dim=(0, 1)), lambda L, x: x.norm(2, 1, True),
])
def test_keyword_spellings(f):
    check(f, X)


def test_out_argument():
    for lib in (torch, ndgrad):
        x = lib.tensor(X)
        o = lib.empty(0, dtype=lib.float64)
        assert lib.sum(x, 1, out=o) is o and tuple(o.shape) == (3,)
        v, i = lib.empty(3, dtype=lib.float64), lib.empty(3, dtype=lib.long)
        res = lib.max(x, 1, out=(v, i))
        assert res.values is v and res.indices is i
        assert i.tolist() == x.argmax(1).tolist()
        o2 = lib.empty(3, 4, dtype=lib.float64)
        assert lib.tril(x, out=o2) is o2
        np.testing.assert_array_equal(_arr(o2), np.tril(X))
    check_error(lambda L, x: x.norm(dtype=L.float32), X)


@pytest.mark.parametrize("f", [
    lambda L, x: x.sum(1), lambda L, x: x.mean(), lambda L, x: x.var(1), lambda L, x: x.std(),
    lambda L, x: x.norm(), lambda L, x: x.norm(1, dim=1), lambda L, x: x.norm(3),
    lambda L, x: x.cumsum(1), lambda L, x: x.cumprod(1), lambda L, x: x.prod(1),
    lambda L, x: L.var_mean(x, 1), lambda L, x: x.logsumexp(1),
])
def test_complex_gradients(f):
    rng = np.random.default_rng(3)
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    check(f, z)


def test_complex_errors():
    z = np.array([1 + 2j, 3 - 1j])
    check_error(lambda L, x: x.nansum(), z)
    check_error(lambda L, x: x.sort(), z)


_DTYPE_OPS = [
    lambda L, x: x.sum(1), lambda L, x: x.prod(1), lambda L, x: x.mean(), lambda L, x: x.amax(1),
    lambda L, x: x.max(1), lambda L, x: x.argmax(), lambda L, x: x.cumsum(1),
    lambda L, x: x.cumprod(0), lambda L, x: x.cummax(1), lambda L, x: x.sort(1),
    lambda L, x: x.topk(2), lambda L, x: x.kthvalue(2), lambda L, x: x.median(),
    lambda L, x: x.median(1), lambda L, x: x.mode(1), lambda L, x: x.unique(),
    lambda L, x: x.nansum(), lambda L, x: x.count_nonzero(), lambda L, x: x.all(),
    lambda L, x: x.any(1), lambda L, x: x.var(), lambda L, x: x.logsumexp(1),
    lambda L, x: x.norm(), lambda L, x: x.logcumsumexp(1), lambda L, x: x.nanmean(),
    lambda L, x: x.trace(), lambda L, x: x.nanmedian(),
]


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "int64", "bool", "float16"])
def test_dtypes(dt):
    rng = np.random.default_rng(11)
    if dt == "bool":
        a = rng.integers(0, 2, (3, 4)).astype(bool)
    elif dt == "float16":
        a = rng.standard_normal((3, 4)).astype(dt)
    else:
        a = rng.integers(0, 5, (3, 4)).astype(dt)
    check_or_error(_DTYPE_OPS, a, grad=False, rtol=2e-3, atol=2e-3)


def test_large_tied_rows_keep_values():
    # past REPLAY_LIMIT tied rows use the stable order: values equal torch's, indices valid
    from ndgrad._ops import sorting
    n = sorting.REPLAY_LIMIT + 10
    x = np.random.default_rng(0).integers(0, 5, (n,)).astype(np.float32)
    for f in (lambda z: z.sort(), lambda z: z.topk(7), lambda z: z.kthvalue(n // 3),
              lambda z: z.mode(0)):
        a, b = f(ndgrad.tensor(x)), f(torch.tensor(x))
        np.testing.assert_array_equal(_arr(a.values), b.values.numpy())
        np.testing.assert_array_equal(x[np.asarray(a.indices._data)], _arr(a.values))


def test_return_types_print_like_torch():
    x = np.array([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]])
    for f in (lambda L, x: x.max(1), lambda L, x: x.sort(1), lambda L, x: x.topk(1),
              lambda L, x: x.cummin(1), lambda L, x: x.median(1), lambda L, x: x.mode(1),
              lambda L, x: x.kthvalue(1)):
        a, b = f(ndgrad, ndgrad.tensor(x)), f(torch, torch.tensor(x))
        assert repr(a) == repr(b)
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b) == 2


def test_half_precision_accumulates_in_float32():
    x = np.random.default_rng(0).random(5000).astype(np.float16)
    a, b = ndgrad.tensor(x).cumsum(0), torch.tensor(x).cumsum(0)
    np.testing.assert_allclose(_arr(a).astype(np.float64), b.numpy().astype(np.float64),
                               rtol=2e-3)
    np.testing.assert_allclose(float(ndgrad.tensor(x).sum()), float(torch.tensor(x).sum()),
                               rtol=2e-3)


def test_extremum_gradients_with_nan():
    x = np.array([[1.0, np.nan, 3], [np.nan, 2, 0]])
    for f in (lambda L, x: x.max(), lambda L, x: x.min(), lambda L, x: x.amax(1),
              lambda L, x: x.amax(), lambda L, x: x.max(1), lambda L, x: x.median(),
              lambda L, x: x.sort(1), lambda L, x: x.cummax(1), lambda L, x: x.topk(2),
              lambda L, x: x.nanmedian(), lambda L, x: x.logsumexp(1)):
        check(f, x)
    check_gradgrad(lambda L, x: x.max() ** 2, X)
    check_gradgrad(lambda L, x: x.amin() ** 2, np.array([[1.0, 0.5], [0.5, 2.0]]))


_FUZZ_OPS = {
    "sum": lambda L, x, d, k: x.sum(d, keepdim=k) if d is not None else x.sum(),
    "mean": lambda L, x, d, k: x.mean(d, keepdim=k) if d is not None else x.mean(),
    "amax": lambda L, x, d, k: x.amax(d if d is not None else (), keepdim=k),
    "amin": lambda L, x, d, k: x.amin(d if d is not None else (), keepdim=k),
    "var": lambda L, x, d, k: x.var(d, keepdim=k),
    "std": lambda L, x, d, k: x.std(d, keepdim=k, correction=0),
    "logsumexp": lambda L, x, d, k: x.logsumexp(d, keepdim=k),
    "norm": lambda L, x, d, k: x.norm(dim=d, keepdim=k),
    "norm1": lambda L, x, d, k: x.norm(1, dim=d, keepdim=k),
    "nansum": lambda L, x, d, k: x.nansum(d, keepdim=k) if d is not None else x.nansum(),
    "prod": lambda L, x, d, k: x.prod(d if isinstance(d, int) else 0, keepdim=k),
    "max": lambda L, x, d, k: x.max(d if isinstance(d, int) else 0, keepdim=k),
    "median": lambda L, x, d, k: x.median(d if isinstance(d, int) else 0, keepdim=k),
    "mode": lambda L, x, d, k: x.mode(d if isinstance(d, int) else 0, keepdim=k),
    "kth": lambda L, x, d, k: x.kthvalue(1, d if isinstance(d, int) else 0, keepdim=k),
    "cumsum": lambda L, x, d, k: x.cumsum(d if isinstance(d, int) else 0),
    "cumprod": lambda L, x, d, k: x.cumprod(d if isinstance(d, int) else 0),
    "cummax": lambda L, x, d, k: x.cummax(d if isinstance(d, int) else 0),
    "logcumsumexp": lambda L, x, d, k: x.logcumsumexp(d if isinstance(d, int) else 0),
    "sort": lambda L, x, d, k: x.sort(d if isinstance(d, int) else 0, descending=k),
    "topk": lambda L, x, d, k: x.topk(1, d if isinstance(d, int) else 0, largest=k),
    "argmax": lambda L, x, d, k: x.argmax(d if isinstance(d, int) else None, keepdim=k),
    "all": lambda L, x, d, k: x.all(d, keepdim=k) if d is not None else x.all(),
    "count_nonzero": lambda L, x, d, k: L.count_nonzero(x, d),
    "var_mean": lambda L, x, d, k: L.var_mean(x, d, keepdim=k),
    "nanmean": lambda L, x, d, k: x.nanmean(d, keepdim=k) if d is not None else x.nanmean(),
}


def test_random_shapes_and_dims_match_torch():
    """Random shapes (0-d and empty included), dims (int, negative, tuple, out of range, None)
    and keepdim: values, dtypes, grad_fn names, gradients, or the same error as torch."""
    import random
    rnd = random.Random(0)
    names = sorted(_FUZZ_OPS)
    for trial in range(500):
        nd = rnd.randint(0, 3)
        shape = tuple(rnd.randint(0, 3) for _ in range(nd))
        name = rnd.choice(names)
        c = rnd.random()
        if c < 0.25:
            d = None
        elif c < 0.7:
            d = rnd.randint(-nd - 1, nd) if nd else rnd.choice([0, -1, 1])
        else:
            d = tuple(rnd.sample(range(-nd, nd), rnd.randint(1, nd))) if nd else (0,)
        k = rnd.random() < 0.5
        if d in ((), None) and name in ("logsumexp",) or \
                (name == "cummax" and 0 in shape):  # torch quirks we do not copy
            continue
        a = np.random.default_rng(trial).standard_normal(shape)
        res = []
        for lib in (torch, ndgrad):
            x = lib.tensor(a, requires_grad=True)
            try:
                o = backward_linspace(lib, _FUZZ_OPS[name](lib, x, d, k))
                res.append(([(str(t.dtype), tuple(t.shape), _arr(t).astype(float)) for t in o],
                            None if x.grad is None else _arr(x.grad),
                            [_name(t) for t in o]))
            except Exception as e:  # noqa: BLE001 - compared with torch's
                res.append(f"{type(e).__name__}: {e}")
        t, n = res
        where = (name, shape, d, k)
        if isinstance(t, str) or isinstance(n, str):
            assert t == n, where
            continue
        assert [z[:2] for z in t[0]] == [z[:2] for z in n[0]] and t[2] == n[2], where
        for p, q in zip(t[0], n[0]):
            np.testing.assert_allclose(q[2], p[2], atol=1e-10, equal_nan=True, err_msg=where)
        if t[1] is None or n[1] is None:
            assert not (n[1] if t[1] is None else t[1]).any() if (t[1] is not None or
                                                                 n[1] is not None) else True
        else:
            np.testing.assert_allclose(n[1], t[1], atol=1e-10, equal_nan=True, err_msg=where)


def test_cumprod_with_zeros_first_and_second_order():
    """Random zero patterns (several zeros per slice, complex too): gradient and the
    gradient of <gradient, v> equal torch's."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        shape = (int(rng.integers(1, 4)), int(rng.integers(1, 6)))
        a = rng.standard_normal(shape)
        a[rng.random(shape) < 0.3] = 0
        if rng.random() < 0.3:
            a = a + 1j * rng.standard_normal(shape) * (a != 0)
        d = int(rng.integers(0, 2))
        res = []
        for lib in (torch, ndgrad):
            x = lib.tensor(a, requires_grad=True)
            y = x.cumprod(d)
            go = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(a.dtype))
            g, = lib.autograd.grad(y, x, go, create_graph=True)
            v = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(a.dtype))
            tot = (g * v).sum()
            tot = tot.real if a.dtype.kind == "c" else tot
            gg, = lib.autograd.grad(tot, x) if tot.requires_grad else (lib.zeros_like(x),)
            res.append((_arr(g.resolve_conj() if lib is torch else g),
                        _arr(gg.resolve_conj() if lib is torch else gg)))
        np.testing.assert_allclose(res[1][0], res[0][0], atol=1e-10)
        np.testing.assert_allclose(res[1][1], res[0][1], atol=1e-10)
