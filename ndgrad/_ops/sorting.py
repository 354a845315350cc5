"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique,
unique_consecutive.

Which index torch returns among equal values is decided by the algorithm its CPU kernels run
(libstdc++'s ``std::sort`` / ``std::nth_element`` / ``std::partial_sort`` on (value, index)
pairs, and TH's quickselect for kthvalue). The values alone cannot tell, so rows that contain
ties are handed to a faithful Python replay of those algorithms (``_Std`` below); rows without
ties take the NumPy fast path, whose answer is then the only possible one.

The replay is Python code (about 10 us per element), so it is bounded: when more than
``REPLAY_LIMIT`` elements would need it in one call, tied rows keep NumPy's stable order (the
same values, possibly other indices among equal values than torch's).

Gradients of the value outputs go to the returned indices (``value_selecting_reduction``), as in
torch; median/nanmedian over all elements split evenly among ties (``evenly_distribute``).
"""

import math

import numpy as np

from .comparison import where
from .arguments import _numpy_aliases, return_type, wrap_dim
from .reduction import _index_grad
from .registry import record_input_shape
from .registry import as_tensor_arg, primitive, wrap
from .._creation import zeros
from .comparison import isnan
from .indexing import SCATTER
from .._tensor import Tensor

__all__ = [
    "argsort",
    "isin",
    "kthvalue",
    "median",
    "mode",
    "msort",
    "nanmedian",
    "sort",
    "topk",
    "unique",
    "unique_consecutive",
]

return_types_sort = return_type("sort")
return_types_topk = return_type("topk")
return_types_kthvalue = return_type("kthvalue")
return_types_median = return_type("median")
return_types_nanmedian = return_type("nanmedian")
return_types_mode = return_type("mode")


# --------------------------------------------------------------------------- libstdc++ replay
def _isnan(v):
    return v != v  # noqa: PLR0124 - the NaN test that works for Python ints and floats alike


def _gt_nan(a, b):
    """torch's descending comparator on (value, index) pairs: NaN first, then larger."""
    return (_isnan(a[0]) and not _isnan(b[0])) or a[0] > b[0]


def _lt_nan(a, b):
    """torch's ascending comparator: smaller first, NaN last."""
    return (not _isnan(a[0]) and _isnan(b[0])) or a[0] < b[0]


def _lt_value(a, b):
    return a[0] < b[0]


class _Std:
    """The libstdc++ algorithms (introsort, introselect, heap select) over a Python list."""

    def __init__(self, a, comp):
        self.a = a
        self.comp = comp

    # -- insertion sorts
    def insertion_sort(self, first, last):
        a, comp = self.a, self.comp
        if first == last:
            return
        for i in range(first + 1, last):
            val = a[i]
            if comp(val, a[first]):
                a[first + 1:i + 1] = a[first:i]
                a[first] = val
            else:
                self.unguarded_linear_insert(i)

    def unguarded_linear_insert(self, last):
        a, comp = self.a, self.comp
        val = a[last]
        nxt = last - 1
        while comp(val, a[nxt]):
            a[last] = a[nxt]
            last = nxt
            nxt -= 1
        a[last] = val

    def unguarded_insertion_sort(self, first, last):
        for i in range(first, last):
            self.unguarded_linear_insert(i)

    def final_insertion_sort(self, first, last):
        if last - first > 16:
            self.insertion_sort(first, first + 16)
            self.unguarded_insertion_sort(first + 16, last)
        else:
            self.insertion_sort(first, last)

    # -- partitioning
    def move_median_to_first(self, result, x, y, z):
        a, comp = self.a, self.comp
        if comp(a[x], a[y]):
            if comp(a[y], a[z]):
                pick = y
            elif comp(a[x], a[z]):
                pick = z
            else:
                pick = x
        elif comp(a[x], a[z]):
            pick = x
        elif comp(a[y], a[z]):
            pick = z
        else:
            pick = y
        a[result], a[pick] = a[pick], a[result]

    def unguarded_partition(self, first, last, pivot):
        a, comp = self.a, self.comp
        while True:
            while comp(a[first], a[pivot]):
                first += 1
            last -= 1
            while comp(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def partition_pivot(self, first, last):
        mid = first + (last - first) // 2
        self.move_median_to_first(first, first + 1, mid, last - 1)
        return self.unguarded_partition(first + 1, last, first)

    # -- heaps (indices relative to `first`)
    def adjust_heap(self, first, hole, length, value):
        a, comp = self.a, self.comp
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if comp(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if (length & 1) == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and comp(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def make_heap(self, first, last):
        length = last - first
        if length < 2:
            return
        parent = (length - 2) // 2
        while True:
            self.adjust_heap(first, parent, length, self.a[first + parent])
            if parent == 0:
                return
            parent -= 1

    def pop_heap(self, first, last, result):
        a = self.a
        value = a[result]
        a[result] = a[first]
        self.adjust_heap(first, 0, last - first, value)

    def heap_select(self, first, middle, last):
        self.make_heap(first, middle)
        for i in range(middle, last):
            if self.comp(self.a[i], self.a[first]):
                self.pop_heap(first, middle, i)

    def sort_heap(self, first, last):
        while last - first > 1:
            last -= 1
            self.pop_heap(first, last, last)

    # -- the public algorithms
    def partial_sort(self, first, middle, last):
        self.heap_select(first, middle, last)
        self.sort_heap(first, middle)

    def introsort_loop(self, first, last, depth):
        while last - first > 16:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            self.introsort_loop(cut, last, depth)
            last = cut

    def sort(self, first, last):
        if last - first > 1:
            self.introsort_loop(first, last, 2 * ((last - first).bit_length() - 1))
            self.final_insertion_sort(first, last)

    def nth_element(self, first, nth, last):
        if first == last or nth == last:
            return
        depth = 2 * ((last - first).bit_length() - 1)
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.a[first], self.a[nth] = self.a[nth], self.a[first]
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self.insertion_sort(first, last)


def _quick_select(a, k, gt):
    """TH's quickselect (torch's kthvalue kernel) on a list of (value, index) pairs."""
    lo, hi = 0, len(a) - 1
    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if gt(a[lo], a[hi]):
                a[lo], a[hi] = a[hi], a[lo]
            return
        p = (lo + hi) >> 1
        a[p], a[lo + 1] = a[lo + 1], a[p]
        if gt(a[lo + 1], a[hi]):
            a[lo + 1], a[hi] = a[hi], a[lo + 1]
        if gt(a[lo], a[hi]):
            a[lo], a[hi] = a[hi], a[lo]
        if gt(a[lo + 1], a[lo]):
            a[lo + 1], a[lo] = a[lo], a[lo + 1]
        i, j = lo + 1, hi
        piv = a[lo]
        while True:
            i += 1
            while gt(piv, a[i]):
                i += 1
            j -= 1
            while gt(a[j], piv):
                j -= 1
            if j < i:
                break
            a[i], a[j] = a[j], a[i]
        a[lo], a[j] = a[j], a[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def _pairs(row):
    return list(zip(row.tolist(), range(len(row))))


REPLAY_LIMIT = 1 << 16


def _bounded(mask, n):
    """`mask` of rows to replay, or none when that would exceed REPLAY_LIMIT elements."""
    return mask if int(mask.sum()) * n <= REPLAY_LIMIT else np.zeros_like(mask)


def _has_ties(rows):
    """Per row of a 2-d array: whether two elements compare equal (NaNs count as equal)."""
    if rows.shape[-1] < 2:
        return np.zeros(rows.shape[0], bool)
    s = np.sort(rows, axis=-1)
    eq = s[:, 1:] == s[:, :-1]
    if rows.dtype.kind in "fc":
        nan = np.isnan(s)
        eq = eq | (nan[:, 1:] & nan[:, :-1])
    return eq.any(axis=-1)


def _rows(x, dim):
    """`x` with `dim` moved last, flattened to 2-d rows (and the shape to restore)."""
    xm = np.moveaxis(x, dim, -1)
    return xm.reshape(int(np.prod(xm.shape[:-1])), xm.shape[-1]), xm.shape


def _unrows(rows, shape, dim, k=None):
    shape = shape[:-1] + ((k if k is not None else shape[-1]),)
    return np.moveaxis(rows.reshape(shape), -1, dim)


def _stable_order(rows, descending):
    """Stable argsort with torch's NaN placement (NaN last ascending, first descending)."""
    if not descending:
        return np.argsort(rows, axis=-1, kind="stable")
    n = rows.shape[-1]
    # Reversing, sorting stably ascending and reversing back gives a stable descending order.
    return (n - 1 - np.argsort(rows[:, ::-1], axis=-1, kind="stable"))[:, ::-1]


# --------------------------------------------------------------------------- sort
def _sort_fwd(x, p):
    dim, descending, stable = p
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    n = x.shape[dim]
    if not stable and n > 16:
        # std::sort is only stable below its insertion-sort threshold; replay it on tied rows.
        rows, shape = _rows(x, dim)
        idx = _stable_order(rows, descending)
        comp = _gt_nan if descending else _lt_nan
        for r in np.nonzero(_bounded(_has_ties(rows), n))[0]:
            a = _pairs(rows[r])
            _Std(a, comp).sort(0, len(a))
            idx[r] = [i for _, i in a]
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        vals = np.take_along_axis(rows, idx, axis=-1)
        return _unrows(vals, shape, dim), _unrows(idx, shape, dim)
    # The common small case: a stable sort along `dim` directly (no reshaping into rows).
    if descending:
        idx = np.flip(n - 1 - np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    else:
        idx = np.argsort(x, axis=dim, kind="stable")
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    return np.take_along_axis(x, idx, axis=dim), idx


SORT = primitive("sort", _sort_fwd, save=(("out1", None),), n_out=2, diff_outs=(True, False))
# torch's sort overload with an explicit `stable` argument records SortBackward1
SORT_STABLE = primitive("sort_stable", _sort_fwd, "SortBackward1", save=(("out1", None),),
                        n_out=2, diff_outs=(True, False))


def _select_values_vjp(ctx, gs):
    """Gradient of values picked at `indices` along dim (keepdim layout)."""
    g = gs[0]
    (idx,) = ctx.saved
    dim = ctx._params[0]
    shape = ctx._shape
    if len(shape) == 0:
        return (g.reshape(()),)
    return (SCATTER.call(zeros(shape, dtype=g.dtype), idx, g, params=(dim, None)),)


record_input_shape(SORT, SORT_STABLE)
SORT.def_vjp(_select_values_vjp)
SORT_STABLE.def_vjp(_select_values_vjp)


def _check_sortable(x, name):
    if x._data.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU" if name == "sort" else
                           f"{name}(): input tensor must be of non-complex type")
    if name == "topk" and x._data.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")


def sort(input, dim=-1, descending=False, stable=None):
    """Sorted values along `dim` and their original indices (NaN sorts as the largest)."""
    if isinstance(dim, bool) and isinstance(descending, int) and not isinstance(descending, bool):
        dim, descending = descending, dim
    x = as_tensor_arg(input)
    _check_sortable(x, "sort")
    d = wrap_dim(dim, x._data.ndim)
    op = SORT if stable is None else SORT_STABLE
    return return_types_sort(*op.call(x, params=(d, bool(descending), bool(stable))))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort `input` along `dim` (the second output of :func:`sort`)."""
    x = as_tensor_arg(input)
    _check_sortable(x, "sort")
    d = wrap_dim(dim, x._data.ndim)
    if type(x) is not Tensor:  # (a BatchedTensor under vmap: sort has a batching rule)
        return sort(x, d, bool(descending), bool(stable))[1]
    return wrap(_sort_fwd(x._data, (d, bool(descending), bool(stable)))[1])


def msort(input):
    return sort(input, 0)[0]


# --------------------------------------------------------------------------- topk
def _topk_row(row, k, largest, sorted_):
    comp = _gt_nan if largest else _lt_nan
    a = _pairs(row)
    n = len(a)
    std = _Std(a, comp)
    if k * 64 <= n:
        std.partial_sort(0, k, n)
    else:
        std.nth_element(0, k - 1, n)
        if sorted_:
            std.sort(0, k - 1)
    return [i for _, i in a[:k]]


def _topk_fwd(x, p):
    k, dim, largest, sorted_ = p
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    rows, shape = _rows(x, dim)
    if k == 0:
        idx = np.zeros((rows.shape[0], 0), np.int64)
    else:
        idx = _stable_order(rows, largest)[:, :k].copy()
        replay = _bounded(_has_ties(rows) if sorted_ else np.ones(rows.shape[0], bool),
                          rows.shape[-1])
        for r in np.nonzero(replay)[0]:
            idx[r] = _topk_row(rows[r], k, largest, sorted_)
    idx = idx.astype(np.int64)
    vals = np.take_along_axis(rows, idx, axis=-1)
    return _unrows(vals, shape, dim, k), _unrows(idx, shape, dim, k)


TOPK = primitive("topk", _topk_fwd, save=(("out1", None),), n_out=2, diff_outs=(True, False))
record_input_shape(TOPK)


@TOPK.def_vjp
def _(ctx, gs):
    g = gs[0]
    (idx,) = ctx.saved
    dim = ctx._params[1]
    shape = ctx._shape
    if len(shape) == 0:
        return (g.reshape(()),)
    return (SCATTER.call(zeros(shape, dtype=g.dtype), idx, g, params=(dim, None)),)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The `k` largest (or smallest) elements along `dim` and their indices."""
    x = as_tensor_arg(input)
    _check_sortable(x, "topk")
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d] if x._data.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    return return_types_topk(*TOPK.call(x, params=(int(k), d, bool(largest), bool(sorted))))


# ---------------------------------------------------------------------- kthvalue / median / mode
def _pick_fwd(x, p):
    """Values and indices picked per row by `p` = (kind, dim, keepdim, k)."""
    kind, dim, keepdim, k = p
    xx = x if x.ndim else x.reshape(1)
    rows, shape = _rows(xx, dim)
    n = rows.shape[-1]
    idx = np.empty(rows.shape[0], np.int64)
    isf = rows.dtype.kind == "f"
    ties = _bounded(_has_ties(rows), n) if kind in ("kthvalue",) else None
    replay_mode = kind == "mode" and rows.shape[0] * n <= REPLAY_LIMIT
    order = None
    if kind in ("median", "nanmedian"):
        order = np.argsort(rows, axis=-1, kind="stable")  # NaN last; ties by index
    elif kind == "kthvalue":
        order = np.argsort(rows, axis=-1, kind="stable")
    for r in range(rows.shape[0]):
        row = rows[r]
        if kind == "median":
            nan = np.nonzero(np.isnan(row))[0] if isf else ()
            idx[r] = nan[0] if len(nan) else order[r, (n - 1) // 2]
        elif kind == "nanmedian":
            nn = int(np.isnan(row).sum()) if isf else 0
            idx[r] = order[r, builtins_max((n - nn - 1) // 2, 0)]
        elif kind == "kthvalue":
            if ties[r]:
                a = _pairs(row)
                _quick_select(a, k - 1, _gt_nan)
                idx[r] = a[k - 1][1]
            else:
                idx[r] = order[r, k - 1]
        elif not replay_mode:  # mode without replay: the last occurrence of the mode
            vals_u, counts = np.unique(row, return_counts=True)
            idx[r] = np.nonzero(row == vals_u[np.argmax(counts)])[0][-1]
        else:  # mode: std::sort by value, then the longest run (the first one on a tie)
            a = _pairs(row)
            _Std(a, _lt_value).sort(0, n)
            best, best_i, run = 0, 0, 0
            for i in range(n):
                run += 1
                if i == n - 1 or a[i][0] != a[i + 1][0]:
                    if run > best:
                        best, best_i = run, a[i][1]
                    run = 0
            idx[r] = best_i
    vals = np.take_along_axis(rows, idx[:, None], axis=-1)[:, 0]
    out_shape = shape[:-1]
    vals = vals.reshape(out_shape)
    idx = idx.reshape(out_shape)
    if x.ndim == 0:
        return vals.reshape(()), idx.reshape(())
    if keepdim:
        return np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


builtins_max = max

KTHVALUE = primitive("kthvalue", _pick_fwd, save=(("out1", None),), n_out=2,
                     diff_outs=(True, False))
MEDIAN_DIM = primitive("median_dim", _pick_fwd, "MedianBackward1", save=(("out1", None),),
                       n_out=2, diff_outs=(True, False))
NANMEDIAN_DIM = primitive("nanmedian_dim", _pick_fwd, "NanmedianBackward1",
                          save=(("out1", None),), n_out=2, diff_outs=(True, False))
MODE = primitive("mode", _pick_fwd, save=(("out1", None),), n_out=2, diff_outs=(True, False))


def _pick_vjp(ctx, gs):
    g = gs[0]
    (idx,) = ctx.saved
    _, dim, keepdim, _ = ctx._params
    return (_index_grad(g, idx, dim, keepdim, ctx._shape),)


for _op in (KTHVALUE, MEDIAN_DIM, NANMEDIAN_DIM, MODE):
    _op.def_vjp(_pick_vjp)
record_input_shape(KTHVALUE, MEDIAN_DIM, NANMEDIAN_DIM, MODE)


def _pick(op, kind, x, dim, keepdim, k=0, name=None):
    d = wrap_dim(dim, x._data.ndim)
    return op.call(x, params=(kind, d, keepdim, k))


def _bool_unsupported(x, kernel):
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def kthvalue(input, k, dim=-1, keepdim=False):
    """The `k`-th smallest element along `dim` and its index."""
    x = as_tensor_arg(input)
    _bool_unsupported(x, "kthvalue_cpu")
    d = wrap_dim(dim, x._data.ndim)
    size = x._data.shape[d] if x._data.ndim else 1
    if x._data.ndim and size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return return_types_kthvalue(*_pick(KTHVALUE, "kthvalue", x, d, keepdim, int(k)))


def _median_all_fwd(x, ignore_nan):
    flat = x.reshape(-1)
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        if nan.any():
            if not ignore_nan:
                return np.asarray(np.nan, dtype=x.dtype)
            flat = flat[~nan]
            if flat.size == 0:
                return np.asarray(np.nan, dtype=x.dtype)
    return np.asarray(np.sort(flat)[(flat.size - 1) // 2], dtype=x.dtype)


MEDIAN_ALL = primitive("median", lambda x, p: _median_all_fwd(x, False), "MedianBackward0",
                       save=((0, None), ("out", None)))
NANMEDIAN_ALL = primitive("nanmedian", lambda x, p: _median_all_fwd(x, True),
                          "NanmedianBackward0", save=((0, None), ("out", None)))


def _evenly_vjp(ctx, g):
    """torch's evenly_distribute_backward: split among the elements equal to the result (or
    among the NaNs when the result is NaN)."""
    x, out = ctx.saved
    # The mask and the count are ops on the values, not values read into Python (a compiled
    # backward replays them for any values; g / count as with a Python int count).
    xd = x.detach()
    od = out.detach()
    if od._data.dtype.kind == "f":
        mask = where(isnan(od), isnan(xd), xd == od)
    else:
        mask = xd == od
    return (where(mask, g / mask.sum(), 0.0).to(g.dtype),)


MEDIAN_ALL.def_vjp(_evenly_vjp)
NANMEDIAN_ALL.def_vjp(_evenly_vjp)


def _median(input, dim, keepdim, nan):
    x = as_tensor_arg(input)
    _check_sortable(x, "median")
    _bool_unsupported(x, "median_cpu" if dim is None else "median_out")
    name = "nanmedian" if nan else "median"
    if dim is None:
        if x._data.size == 0:
            return wrap(np.asarray(np.nan, x._data.dtype))
        return (NANMEDIAN_ALL if nan else MEDIAN_ALL).call(x)
    d = wrap_dim(dim, x._data.ndim)
    if x._data.ndim and x._data.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    res = _pick(NANMEDIAN_DIM if nan else MEDIAN_DIM, name, x, d, keepdim)
    return (return_types_nanmedian if nan else return_types_median)(*res)


def median(input, dim=None, keepdim=False):
    """The lower median (of all elements, or along `dim` with its index); NaN propagates."""
    return _median(input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median ignoring NaNs."""
    return _median(input, dim, keepdim, True)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along `dim` (the smallest on a tie) and an index of it."""
    x = as_tensor_arg(input)
    d = wrap_dim(dim, x._data.ndim)
    if x._data.ndim and x._data.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    return return_types_mode(*_pick(MODE, "mode", x, d, keepdim))


# --------------------------------------------------------------------------- unique
def _unique_fwd(x, p):
    return np.unique(x.reshape(-1))


UNIQUE = primitive("_unique2", lambda x, p: np.unique(x.reshape(-1)), "Unique2Backward0")
UNIQUE_DIM = primitive("unique_dim", lambda x, p: np.unique(x, axis=p), "UniqueDimBackward0")


@UNIQUE.def_vjp
def _(ctx, g):
    raise NotImplementedError("the derivative for '_unique2' is not implemented.")


@UNIQUE_DIM.def_vjp
def _(ctx, g):
    raise NotImplementedError("the derivative for 'unique_dim' is not implemented.")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The sorted distinct elements (or slices along `dim`), optionally with the inverse
    mapping and counts. Not differentiable (as in torch, backward raises)."""
    x = as_tensor_arg(input)
    d = x._data
    if dim is None:
        _, inv, cnt = np.unique(d.reshape(-1), return_inverse=True, return_counts=True)
        out = UNIQUE.call(x)
        inv = inv.reshape(d.shape)
    else:
        dd = wrap_dim(dim, d.ndim)
        _, inv, cnt = np.unique(d, axis=dd, return_inverse=True, return_counts=True)
        out = UNIQUE_DIM.call(x, params=dd)
        inv = inv.reshape(-1)
    res = [out]
    if return_inverse:
        res.append(wrap(inv.astype(np.int64)))
    if return_counts:
        res.append(wrap(cnt.astype(np.int64)))
    return res[0] if len(res) == 1 else tuple(res)


# torch records the op (its backward raises); the values are computed by the caller.
UNIQUE_CONSECUTIVE = primitive("unique_consecutive", lambda x, vals: vals)


@UNIQUE_CONSECUTIVE.def_vjp
def _(ctx, g):
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (flattened when `dim` is None)."""
    x = as_tensor_arg(input)
    d = x._data
    if dim is None:
        flat = d.reshape(-1)
        if flat.size == 0:
            starts = np.zeros(0, np.int64)
        else:
            starts = np.concatenate([[0], np.nonzero(flat[1:] != flat[:-1])[0] + 1])
        vals = flat[starts]
        inv = (np.cumsum(np.concatenate([[0], (flat[1:] != flat[:-1]).astype(np.int64)]))
               if flat.size else np.zeros(0, np.int64)).reshape(d.shape)
        n = flat.size
    else:
        dd = wrap_dim(dim, d.ndim)
        m = np.moveaxis(d, dd, 0).reshape(d.shape[dd], -1)
        change = (m[1:] != m[:-1]).any(axis=1) if len(m) else np.zeros(0, bool)
        starts = np.concatenate([[0], np.nonzero(change)[0] + 1]) if len(m) else \
            np.zeros(0, np.int64)
        vals = np.take(d, starts, axis=dd)
        inv = np.cumsum(np.concatenate([[0], change.astype(np.int64)])) if len(m) else \
            np.zeros(0, np.int64)
        n = d.shape[dd]
    cnt = np.diff(np.concatenate([starts, [n]])).astype(np.int64)
    res = [UNIQUE_CONSECUTIVE.call(x, params=np.ascontiguousarray(vals))]
    if return_inverse:
        res.append(wrap(np.asarray(inv, np.int64)))
    if return_counts:
        res.append(wrap(cnt))
    return res[0] if len(res) == 1 else tuple(res)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of `elements` occurs in `test_elements` (either may be a number); a bool
    tensor shaped like `elements`, never differentiable."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one "
            "of:\n * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n * (Number element, Tensor test_elements, "
            "*, bool assume_unique = False, bool invert = False, Tensor out = None)\n * (Tensor "
            "elements, Number test_element, *, bool assume_unique = False, bool invert = False, "
            "Tensor out = None)\n")
    e = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    t = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return wrap(np.isin(e, t, assume_unique=assume_unique, invert=invert))


def _isnan_any(x):
    return x.dtype.kind == "f" and bool(np.isnan(x).any())


del math

for _name in ("sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode"):
    globals()[_name] = _numpy_aliases(globals()[_name])

from .methods import bind

bind({"sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue,
      "median": median, "nanmedian": nanmedian, "mode": mode, "unique": unique,
      "unique_consecutive": unique_consecutive})
