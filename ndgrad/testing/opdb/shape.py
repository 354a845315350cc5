"""Op database entries for shape, joining and indexing ops (``shape.py`` and ``indexing.py``).

Samples are tiny (2x3, 3x4 or 2x3x4), with one non-contiguous (transposed) view and negative
dims where the op takes a dim. Index tensors are fixed int64 tensors inside the input's range;
indices repeat on purpose where the op accumulates (index_add, scatter_add, x[[0, 0]]), and
never where the result would depend on which write wins (scatter, index_copy, index_put without
accumulate). View semantics, errors, setitem and the full range of keys are tested against
torch in tests/test_shape_ops.py and tests/test_indexing.py.
"""

import numpy as np

import ndgrad

from . import OpInfo, SampleInput, register


def _t(shape, dtype, requires_grad, seed=0, transpose=False, low=-2.0, high=2.0):
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(seed * 7 + n)
    vals = np.linspace(low, high, n)[rng.permutation(n)]
    arr = vals.reshape(shape[::-1] if transpose else shape).astype(dtype.np)
    t = ndgrad.tensor(arr)
    if transpose:
        t = t.t()
    if requires_grad and dtype.is_floating_point:
        t.requires_grad_(True)
    return t


def _i(values):
    return ndgrad.tensor(np.asarray(values, dtype=np.int64))


def _samples(*specs):
    """Each spec: (shape, args, kwargs, name) with args/kwargs possibly callables of
    (make, dtype, requires_grad) for tensors other than the input; shape "T" is a transposed
    3x4 input, a list of shapes gives a list of tensors (for cat/stack)."""
    def gen(op, dtype, requires_grad):
        def make(shape, seed=0, **kw):
            return _t(shape, dtype, requires_grad, seed=seed, **kw)
        for shape, args, kwargs, name in specs:
            if shape == "T":
                inp = make((3, 4), transpose=True)
            elif isinstance(shape, list):
                inp = [make(s, seed=i) for i, s in enumerate(shape)]
            else:
                inp = make(shape)
            a = args(make) if callable(args) else args
            k = kwargs(make) if callable(kwargs) else kwargs
            yield SampleInput(inp, args=a, kwargs=k, name=name)
    return gen


def _e(name, *specs, family="shape", method=None, **kw):
    return OpInfo(name, sample_inputs=_samples(*specs), family=family, method=method, **kw)


def _m(name, *specs, **kw):
    """An op torch has as both function and method of the same name."""
    return _e(name, *specs, method=name, **kw)


_PAIR = [(3, 4), (3, 4)]
register(
    # ---- joins
    _e("cat", (_PAIR, (), {}, "dim0"), ([(3, 4), (3, 2)], (-1,), {}, "neg-dim")),
    _e("concat", (_PAIR, (1,), {}, "dim1")),
    _e("stack", (_PAIR, (), {}, "dim0"), (_PAIR, (-1,), {}, "neg-dim")),
    _e("hstack", (_PAIR, (), {}, "2d"), ([(3,), (2,)], (), {}, "1d")),
    _e("vstack", (_PAIR, (), {}, "2d"), ([(4,), (4,)], (), {}, "1d")),
    _e("dstack", (_PAIR, (), {}, "2d")),
    _e("kron", ((2, 3), lambda mk: (mk((2, 2), seed=1),), {}, "2d")),
    _e("broadcast_tensors", ([(3, 4), (4,)], (), {}, "pair"), op=lambda ts: ndgrad.broadcast_tensors(*ts),
       torch_op=lambda ts: __import__("torch").broadcast_tensors(*ts)),
    _e("meshgrid", ([(3,), (2,)], (), {"indexing": "ij"}, "ij"),
       ([(3,), (2,)], (), {"indexing": "xy"}, "xy"),
       op=lambda ts, **k: ndgrad.meshgrid(*ts, **k),
       torch_op=lambda ts, **k: __import__("torch").meshgrid(*ts, **k)),
    _e("cartesian_prod", ([(3,), (2,)], (), {}, "pair"),
       op=lambda ts: ndgrad.cartesian_prod(*ts),
       torch_op=lambda ts: __import__("torch").cartesian_prod(*ts)),
    # ---- splits
    _m("split", ((3, 4), (2,), {}, "size2"), ((3, 4), ([1, 3], -1), {}, "sizes")),
    _m("tensor_split", ((3, 4), (2,), {}, "sections"), ((3, 4), ([1, 3], 1), {}, "indices")),
    _m("chunk", ((3, 4), (2,), {}, "2"), ("T", (3, -1), {}, "transposed")),
    _m("unsafe_split", ((3, 4), (2,), {}, "size2"), ("T", (3, -1), {}, "transposed")),
    _m("unsafe_split_with_sizes", ((3, 4), ([1, 3], -1), {}, "sizes")),
    _m("unsafe_chunk", ((3, 4), (2,), {}, "2"), ("T", (3, -1), {}, "transposed")),
    _m("as_strided", ((3, 4), ((2, 2), (1, 2)), {}, "gaps"),
       ((3, 4), ((2, 3), (1, 1), 1), {}, "overlapping")),
    _m("unbind", ((3, 4), (), {}, "dim0"), ((3, 4), (-1,), {}, "neg-dim")),
    # ---- views
    _m("movedim", ((2, 3, 4), (0, -1), {}, "int"), ((2, 3, 4), ((0, 1), (2, 0)), {}, "tuple")),
    _m("swapaxes", ((2, 3, 4), (0, -1), {}, "neg")),
    _m("transpose", ((2, 3, 4), (1, 2), {}, "12"), ("T", (0, 1), {}, "transposed")),
    _m("permute", ((2, 3, 4), ((2, 0, 1),), {}, "tuple")),
    _m("t", ((3, 4), (), {}, "2d"), ((4,), (), {}, "1d")),
    _m("squeeze", ((1, 3, 1), (), {}, "all"), ((1, 3, 1), (-1,), {}, "dim"),
       ((1, 3, 1), ((0, 2),), {}, "dims")),
    _m("unsqueeze", ((3, 4), (1,), {}, "1"), ((3, 4), (-1,), {}, "neg"), ((), (0,), {}, "0-d")),
    _m("flatten", ((2, 3, 4), (), {}, "all"), ((2, 3, 4), (1,), {}, "from1"), ("T", (), {}, "T")),
    _m("unflatten", ((3, 4), (1, (2, 2)), {}, "1")),
    _m("reshape", ((3, 4), ((2, 6),), {}, "view"), ("T", ((-1,),), {}, "copy")),
    _e("Tensor.view", ((3, 4), (2, 6), {}, "2x6"), ((3, 4), (-1,), {}, "flat")),
    _m("narrow", ((3, 4), (1, 1, 2), {}, "1"), ((3, 4), (-2, -2, 2), {}, "neg")),
    _m("select", ((3, 4), (1, -1), {}, "neg-index"), ("T", (0, 2), {}, "T")),
    _m("diagonal", ((3, 4), (), {}, "main"), ((2, 3, 4), (1, 1, 2), {}, "offset-dims")),
    _e("Tensor.expand", ((3, 1), (2, 3, 4), {}, "2x3x4")),
    _e("Tensor.expand_as", ((3, 1), lambda mk: (mk((3, 4), seed=1).detach(),), {}, "3x4")),
    _m("broadcast_to", ((3, 1), ((2, 3, 4),), {}, "2x3x4")),
    _m("atleast_1d", ((), (), {}, "0-d"), ((3,), (), {}, "1d")),
    _m("atleast_2d", ((), (), {}, "0-d"), ((3,), (), {}, "1d")),
    _m("atleast_3d", ((), (), {}, "0-d"), ((3, 4), (), {}, "2d")),
    _m("clone", ((3, 4), (), {}, "2d"), ("T", (), {}, "T")),
    _e("Tensor.__getitem__", ((3, 4), ((0, slice(1, 3)),), {}, "basic"),
       ((3, 4), ([0, 0, 2],), {}, "repeated"), ((3, 4), ((Ellipsis, None, -1),), {}, "none"),
       ((3, 4), lambda mk: ((slice(None), _i([3, 0])),), {}, "mixed"), family="indexing"),
    # ---- copies
    _m("flip", ((3, 4), ((0,),), {}, "0"), ((2, 3, 4), ((0, -1),), {}, "two")),
    _m("fliplr", ((3, 4), (), {}, "2d")),
    _m("flipud", ((3, 4), (), {}, "2d")),
    _m("roll", ((3, 4), (1,), {}, "flat"), ((3, 4), ((1, -2), (0, 1)), {}, "dims")),
    _m("rot90", ((3, 4), (), {}, "k1"), ((2, 3, 4), (2, (1, 2)), {}, "k2"),
       ((3, 4), (-1, (1, 0)), {}, "neg")),
    _e("Tensor.repeat", ((3, 4), (2, 1), {}, "2x1"), ((3,), (2, 2), {}, "lead")),
    _m("tile", ((3, 4), ((2,),), {}, "short"), ((3,), ((2, 2),), {}, "lead")),
    _m("repeat_interleave", ((3, 4), (2,), {}, "flat"), ((3, 4), (2,), {"dim": 1}, "dim"),
       ((3, 4), lambda mk: (_i([1, 0, 2]),), {"dim": 0}, "tensor")),
    _m("tril", ((3, 4), (), {}, "0"), ((3, 4), (1,), {}, "1"), ((2, 3, 4), (-1,), {}, "batch"), inplace="tril_"),
    _m("triu", ((3, 4), (), {}, "0"), ((3, 4), (-1,), {}, "neg"), inplace="triu_"),
    _m("diag", ((3, 4), (), {}, "2d"), ((3,), (1,), {}, "1d-offset")),
    _e("diag_embed", ((2, 3), (), {}, "default"), ((2, 3), (1, 0, 2), {}, "dims")),
    _m("trace", ((3, 4), (), {}, "2d")),
    # ---- indexing ops
    _m("gather", ((3, 4), lambda mk: (1, _i([[0, 2], [1, 1], [3, 0]])), {}, "dim1"),
       family="indexing"),
    _e("take_along_dim", ((3, 4), lambda mk: (_i([[0], [3], [1]]), 1), {}, "dim1"),
       ((3, 4), lambda mk: (_i([0, 5, 5]),), {}, "flat"), family="indexing"),
    _m("take", ((3, 4), lambda mk: (_i([[0, 11], [5, 5]]),), {}, "2d"), family="indexing"),
    _m("put", ((3, 4), lambda mk: (_i([[0, 11], [5, -3]]), mk((2, 2), seed=1)), {}, "2d"),
       ((3, 4), lambda mk: (_i([0, 5, 5]), mk((3,), seed=1)), {"accumulate": True}, "acc"),
       family="indexing", inplace="put_"),
    _m("index_select", ((3, 4), lambda mk: (1, _i([3, 0, 3])), {}, "dim1"), family="indexing"),
    _m("scatter", ((3, 4), lambda mk: (1, _i([[0, 2], [1, 3], [3, 0]]), mk((3, 2), seed=1)), {},
                   "src"),
       ((3, 4), lambda mk: (0, _i([[2, 0, 1, 2]]), 1.5), {}, "value"), family="indexing", inplace="scatter_"),
    _m("scatter_add", ((3, 4), lambda mk: (1, _i([[0, 0], [1, 3], [3, 3]]), mk((3, 2), seed=1)),
                       {}, "repeated"), family="indexing", inplace="scatter_add_"),
    _m("scatter_reduce", ((3, 4), lambda mk: (1, _i([[0, 0], [1, 3], [3, 3]]),
                                              mk((3, 2), seed=1), "sum"), {}, "sum"),
       ((3, 4), lambda mk: (1, _i([[0, 0], [1, 3], [3, 3]]), mk((3, 2), seed=1), "amax"),
        {"include_self": False}, "amax"),
       ((3, 4), lambda mk: (0, _i([[1, 0, 0, 2]]), mk((1, 4), seed=1), "mean"), {}, "mean"),
       family="indexing", inplace="scatter_reduce_"),
    _m("index_add", ((3, 4), lambda mk: (1, _i([0, 0, 3]), mk((3, 3), seed=1)), {}, "repeated"),
       ((3, 4), lambda mk: (0, _i([2]), mk((1, 4), seed=1)), {"alpha": 2.0}, "alpha"),
       family="indexing", inplace="index_add_"),
    _m("index_copy", ((3, 4), lambda mk: (1, _i([3, 1]), mk((3, 2), seed=1)), {}, "dim1"),
       family="indexing", inplace="index_copy_"),
    _m("index_fill", ((3, 4), lambda mk: (1, _i([0, 2]), -1.0), {}, "scalar"),
       ((3, 4), lambda mk: (0, _i([1]), mk((), seed=2)), {}, "tensor"), family="indexing", inplace="index_fill_"),
    _m("index_put", ((3, 4), lambda mk: ((_i([0, 2]), _i([1, 3])), mk((2,), seed=1)), {},
                     "pairs"),
       ((3, 4), lambda mk: ((_i([0, 0]),), mk((4,), seed=1)), {"accumulate": True},
        "accumulate"), family="indexing", inplace="index_put_"),
    _m("masked_fill", ((3, 4), lambda mk: (_t((3, 4), ndgrad.float64, False, seed=3) > 0, 2.0),
                       {}, "scalar"),
       ((3, 4), lambda mk: (ndgrad.tensor([True, False, False, True]), mk((), seed=2)), {},
        "tensor-broadcast"), family="indexing", inplace="masked_fill_"),
    _m("masked_select", ((3, 4), lambda mk: (_t((3, 4), ndgrad.float64, False, seed=3) > 0,),
                         {}, "same"),
       ((3, 4), lambda mk: (ndgrad.tensor([True, False, True, True]),), {}, "broadcast"),
       family="indexing"),
    _m("masked_scatter", ((3, 4), lambda mk: (_t((3, 4), ndgrad.float64, False, seed=3) > 0,
                                              mk((3, 4), seed=1)), {}, "same"),
       family="indexing", inplace="masked_scatter_"),
    _e("column_stack", ([(3,), (3,)], (), {}, "1d"), ([(3, 2), (3,)], (), {}, "mixed")),
    _m("hsplit", ((3, 4), (2,), {}, "sections"), ((3, 4), ([1, 3],), {}, "indices")),
    _m("vsplit", ((4, 3), (2,), {}, "sections")),
    _m("dsplit", ((2, 3, 4), ([1],), {}, "indices")),
    _m("select_scatter", ((3, 4), lambda mk: (mk((4,), seed=1), 0, -1), {}, "row")),
    _m("slice_scatter", ((3, 4), lambda mk: (mk((3, 2), seed=1),), {"dim": 1, "start": 1,
                                                                     "end": 3}, "cols")),
    _m("diagonal_scatter", ((3, 4), lambda mk: (mk((3,), seed=1), 1), {}, "offset")),
    _m("nonzero", ((3, 4), (), {}, "2d"), family="indexing", differentiable=False,
       supports_autograd=False),
)
